# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A 2-minute soak (root): the profiler follows tests/workloads/churn, whose
# threads and processes are created, allocate and exit all the time (pids
# come back), through the page-fault source with allocation probes and
# breakpoints on. Its RSS is sampled every 5 s and its open fds counted:
#  - the highest RSS up to the end of the warm-up (half the run: the
#    stores fill their caps) and the highest after it differ by at most
#    20 % + 16 MiB (flat: every store is capped, exited processes' state is
#    bounded). The highest, not the last: at --max-memory the guard makes
#    RSS swing between the limit and well below it, and a low warm-up sample
#    would make the next high one look like growth. Half, not a third: here
#    the stores are full after ~65 s of the 120 (RSS climbs 3 MiB at a time
#    until then), later on a slower or busier machine; a leak still shows
#    as growth all through the second half;
#  - RSS never exceeds --max-memory by more than 10 % (the guard reads RSS
#    every 100 ms and shrinks above it);
#  - the fewest fds of the last 20 s are at most the fewest of the warm-up's
#    second half + 32 (probe links and ELF files of exited processes are
#    closed). The fewest, not the last: a churning process being attached
#    when /proc is read holds its ~10 allocation probe links for a moment,
#    which a leak does not undo (it raises the floor too). 32, not 8: the
#    reaper takes each link off in 35-200 ms beside two CPU hogs, so the
#    links of two or three processes may be in flight at each of the four
#    late samples (a CI run there read 81 late in the warm-up, then 117,
#    111, 93 and 95); a leak of one fd per process churned (over 2000 in
#    120 s) adds hundreds;
#  - the command's own status and output come through.
# CP_SOAK_SECONDS changes the length (tests/bench/soak.sh runs it for hours).
. "$(dirname "$0")/tap.sh"

secs=${CP_SOAK_SECONDS:-120}
limit_mib=${CP_SOAK_MAX_MEMORY_MIB:-256}
need_root "the soak needs root"

out=$(mktemp -d)
trap 'rm -rf "$out" "$tap_out"' EXIT
"$BIN" --source faults --max-memory "${limit_mib}M" -o "$out/report.txt" \
	-- "$WL/churn" "$secs" >"$out/stdout" 2>"$out/stderr" &
prof=$!
warm=$((secs / 2)) t=0 rss_warm=0 rss_max_late=0 rss_max=0 fd_warm=0 fd_end=0
fd_late=() # the fds of the samples after the warm-up
samples=()
while kill -0 "$prof" 2>/dev/null && [ "$t" -le $((secs - 5)) ]; do
	sleep 5
	t=$((t + 5))
	rss=$(awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$prof/status" 2>/dev/null) || break
	[ -n "$rss" ] || break
	fds=$(ls "/proc/$prof/fd" 2>/dev/null | wc -l)
	samples+=("${t}s:${rss}MiB/${fds}fd")
	[ "$rss" -gt "$rss_max" ] && rss_max=$rss
	if [ "$t" -le "$warm" ]; then
		[ "$rss" -gt "$rss_warm" ] && rss_warm=$rss
		[ "$t" -gt $((warm / 2)) ] && { [ "$fd_warm" -eq 0 ] || [ "$fds" -lt "$fd_warm" ]; } &&
			fd_warm=$fds
	else
		[ "$rss" -gt "$rss_max_late" ] && rss_max_late=$rss
		fd_late+=("$fds")
	fi
done
# the fewest fds of the last four samples (20 s)
for fds in "${fd_late[@]: -4}"; do
	{ [ "$fd_end" -eq 0 ] || [ "$fds" -lt "$fd_end" ]; } && fd_end=$fds
done
cpu_ticks=$(awk '{ print $14 + $15 }' "/proc/$prof/stat" 2>/dev/null)
wait "$prof"
rc=$?
echo "# RSS and fds every 5 s: ${samples[*]}"
echo "# profiler CPU over the run: $(awk -v t="${cpu_ticks:-0}" -v hz="$(getconf CLK_TCK)" \
	'BEGIN { printf "%.1f s", t / hz }'), $(grep -m1 '^churn:' "$out/stdout")"
cp "$out/report.txt" "$tap_out" 2>/dev/null

if [ "$rc" -eq 0 ] && grep -q '^churn: [0-9]* rounds' "$out/stdout"; then
	_ok "the churning command finishes with status 0 and its output"
else
	_not_ok "the churning command finishes with status 0 and its output" "status $rc" \
		"$(tail -3 "$out/stderr")"
fi
if [ "$rss_warm" -gt 0 ] && [ "$rss_max_late" -le $((rss_warm * 120 / 100 + 16)) ]; then
	_ok "RSS is flat after the warm-up (at most ${rss_warm} MiB up to ${warm} s, ${rss_max_late} MiB later)"
else
	_not_ok "RSS is flat after the warm-up" \
		"at most ${rss_warm} MiB up to ${warm} s, up to ${rss_max_late} MiB later (allowed 20 % + 16 MiB)"
fi
if [ "$rss_max" -le $((limit_mib * 110 / 100)) ]; then
	_ok "RSS stays under --max-memory ${limit_mib} MiB (peak sampled ${rss_max} MiB)"
else
	_not_ok "RSS stays under --max-memory ${limit_mib} MiB" "peak sampled ${rss_max} MiB"
fi
if [ "$fd_warm" -gt 0 ] && [ "$fd_end" -gt 0 ] && [ "$fd_end" -le $((fd_warm + 32)) ]; then
	_ok "no fd growth (at least ${fd_warm} late in the warm-up, ${fd_end} in the last 20 s)"
else
	_not_ok "no fd growth" "at least ${fd_warm} fds late in the warm-up, ${fd_end} in the last 20 s"
fi
# the report accounts for the churn: processes followed, exits seen, limits shown
if grep -Eq 'and [0-9]{3,} processes they started' "$tap_out" &&
   grep -q '^Limits' "$tap_out"; then
	_ok "the report counts the processes started and shows the limits"
else
	_not_ok "the report counts the processes started and shows the limits"
fi
grep -A3 '^Limits' "$tap_out" | sed 's/^/# /'
done_testing
