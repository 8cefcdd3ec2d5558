# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The command line as a user meets it: help, usage errors (exit 2), runtime
# errors (exit 1), --probe, and whole runs of the real binary with the
# page-fault source, which works on any machine (DESIGN.md: software events
# carry real data addresses).
. "$(dirname "$0")/tap.sh"

# --- help and version -------------------------------------------------------
expect "--help exits 0" 0 "Usage: cacheperf-bpf" "$BIN" --help
# every long option of the parser's table is documented in --help
missing=""
for o in $(grep -oE '^	\{ "[a-z-]+",' "$CP_ROOT/user/cli/options.c" | grep -oE '[a-z-]+'); do
	grep -q -- "--$o" "$tap_out" || missing+=" --$o"
done
if [ -z "$missing" ]; then _ok "--help documents every option"; else
	_not_ok "--help documents every option" "missing:$missing"; fi
expect "--version" 0 "^cacheperf-bpf [0-9]+\.[0-9]+" "$BIN" --version

# --- usage errors: exit 2 and a sentence ------------------------------------
expect "no target" 2 "no target: give -p PID, -a or -- CMD" "$BIN"
expect "two targets" 2 "choose one target" "$BIN" -p 1 -a
expect "bad PID" 2 "'abc' is not a process ID" "$BIN" -p abc
expect "unknown option" 2 "unknown option '--bogus'" "$BIN" --bogus -a
expect "duration 0" 2 "--duration: '0' is not a whole number" "$BIN" -d 0 -a
expect "window not a power of two" 2 "not a power of two" "$BIN" --window 3 -a
expect "nothing after --" 2 "no command after --" "$BIN" --
expect "bad --cache" 2 "L1D" "$BIN" --cache L1D=12Q:8:64 --source faults -- true
expect "unknown source" 2 "source" "$BIN" --source magic -a

need_root "runs need root"

# --- runtime errors: exit 1 and what to do ------------------------------------
expect "unknown PID" 1 "no such process: PID 4194000" "$BIN" -p 4194000 --source faults
# a user without CAP_BPF and CAP_PERFMON is told which capabilities are missing
expect "no privileges" 1 "missing CAP_BPF, CAP_PERFMON; run as root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" --source faults -- true
expect "command that does not exist" 1 "cannot run the command" \
	"$BIN" --source faults -- /nonexistent/cmd

# --- --probe -------------------------------------------------------------------
expect "--probe" 0 "^verdict: ready to profile" "$BIN" --probe
probe=$(cat "$tap_out")
for want in "^kernel: [0-9]" "^BTF: " "^uprobes: " "^hardware breakpoints: " \
	"^sampling PMUs:" "^--source soft: available" "^--source auto: " "^L1D [0-9]+ KiB, [0-9]+-way, 64 B lines"; do
	if grep -Eq -- "$want" <<<"$probe"; then _ok "--probe shows /$want/"; else
		_not_ok "--probe shows /$want/"; fi
done

# A machine without a PMU: asking for PEBS or IBS fails with one clear sentence.
if grep -q "^  pebs: none" <<<"$probe"; then
	expect "--source pebs without a PMU" 1 "no PEBS-capable PMU.*use --source soft" \
		"$BIN" --source pebs -- true
else
	skip "this machine has a PEBS PMU"
fi
if grep -q "^  ibs: none" <<<"$probe"; then
	expect "--source ibs without IBS" 1 "no IBS PMU.*use --source soft" \
		"$BIN" --source ibs -- true
else
	skip "this machine has IBS"
fi

# --probe on the fake PMU trees (tests/data/pmu): what each PMU can and cannot
# do, as the kernel's drivers make it (issue "The PMU path on real hardware").
# tree|line expected (grep -F)
pmu_says=(
	"arrowlake-h|  pebs: cpu_lowpower PMU (arrowlake_h_hybrid), type 11, max precise 3, precise_ip from 2"
	"arrowlake-h|  pebs: cpu_core PMU (arrowlake_h_hybrid), type 4, max precise 3, precise_ip from 3"
	"arrowlake-h|        store levels: decoded with the load table by the kernel; the event tells stores from loads (Linux 5.15+)"
	"alderlake-hybrid|  pebs: cpu_atom PMU (alderlake_hybrid), type 10, max precise 3, precise_ip from 2"
	"sapphire-rapids|        store levels: yes (store latency facility)"
	"skylake-sp|        store levels: L1 hit or miss only"
	"skylake-old-kernel|this kernel does not know CPU family 6 model 0x55, so it has no PEBS data-source decoding for it"
	"zen3|        kernel samples: sampled too (no swfilt before Linux 6.14): dropped and counted"
	"zen3|        HITM: never on this CPU (Zen 3): sharing is judged from stores"
	"zen4|        kernel samples: excluded (swfilt)"
	"zen4|        HITM: loads served modified by another core's cache"
	"zen4|        read-modify-write ops: loads to the kernel, stores here (IbsOpData3 in the raw record)"
)
for row in "${pmu_says[@]}"; do
	t=${row%%|*}
	want=${row#*|}
	got=$("$BIN" --probe --sysfs-root "$CP_ROOT/tests/data/pmu/$t" 2>&1)
	if grep -qxF -- "$want" <<<"$got" || { [ "${want# }" = "$want" ] && grep -qF -- "$want" <<<"$got"; }; then
		_ok "--probe on $t says: ${want#"${want%%[! ]*}"}"
	else
		_not_ok "--probe on $t says: ${want#"${want%%[! ]*}"}" "$(sed -n '/^sampling PMUs/,/^--source auto/p' <<<"$got")"
	fi
done

# --- whole runs ----------------------------------------------------------------
# touch_pages faults once per page through one store, `cp_touch_insn`; with
# ASLR off a PIE loads at 0x555555554000, so the instruction's address comes
# from the ELF symbol table, not from our output.
tp=$WL/touch_pages
off=$(nm "$tp" | awk '$3 == "cp_touch_insn" { print $1 }')
want_ip=$(printf '0x%x' $((0x555555554000 + 0x$off)))
# the source line of the store: the line of the asm statement holding the label
src_line=$(grep -n 'asm volatile(".globl cp_touch_insn' "$CP_ROOT/tests/workloads/touch_pages.c" | cut -d: -f1)
# "go" comes late so the workload is still alive when its maps are read, and
# it stays 3 s after its work: a loaded machine may handle its records late
json=$(mktemp)
run_cmd setarch "$(uname -m)" -R "$BIN" --source faults --json "$json" -- \
	sh -c "(sleep 0.3; echo go) | TOUCH_PAGES_HOLD=3 $tp 64; exit 5"
out=$(cat "$tap_out")
if [ "$rc" -eq 5 ]; then _ok "-- CMD exits with the command's status"; else
	_not_ok "-- CMD exits with the command's status" "status $rc, want 5"; fi
if grep -q "duration: .*(the command exited with status 5)" <<<"$out"; then
	_ok "the report says why the run ended"; else _not_ok "the report says why the run ended"; fi
tpid=$(awk '/^ready / { print $2 }' <<<"$out")
# both threads' 64 first touches, each a page fault at cp_touch_insn
line=$(awk -v ip="$want_ip" '$3 == ip' <<<"$out")
if [ -n "$tpid" ] && [ "$(awk '{ print $1, $2 }' <<<"$line")" = "128 $tpid" ]; then
	_ok "128 faults at cp_touch_insn ($want_ip) in the forked workload $tpid"
else
	_not_ok "128 faults at cp_touch_insn ($want_ip) in the forked workload $tpid" \
		"line: '$line'"
fi
if grep -q "touch (touch_pages.c:$src_line)\$" <<<"$line"; then
	_ok "the instruction is located at touch (touch_pages.c:$src_line)"
else
	_not_ok "the instruction is located at touch (touch_pages.c:$src_line)" "line: '$line'"
fi
# the 128 faulting addresses lie in the region the workload mapped: 2 threads x
# 64 pages, mmap'd by main at the line of its mmap call
mmap_line=$(grep -n 'mem = mmap(' "$CP_ROOT/tests/workloads/touch_pages.c" | cut -d: -f1)
obj=$(sed -n '/^Objects with/,/^Drops/p' <<<"$out" | awk -v p="$tpid" '$2 == p' | head -1)
if grep -Eq "^ +128 +$tpid  mapping \(524288 bytes\) allocated at 0x[0-9a-f]+ \(main \(touch_pages.c:$mmap_line\)\) by thread $tpid\$" <<<"$obj"; then
	_ok "the faults are attributed to the workload's mmap at touch_pages.c:$mmap_line"
else
	_not_ok "the faults are attributed to the workload's mmap at touch_pages.c:$mmap_line" \
		"top object: '$obj'"
fi
# The same run as JSON (docs/json.md). Page faults carry no cache level and
# no breakpoint history exists, so the store's misses can only be the pending
# kind; its issue names the store's line and the mmap'd region with its call
# site, and its score is its share of the samples: 128 of all of them.
issue=$(sed -n '/^  "issues": \[/,/^  \],/p' "$json")
if grep -q '"type": "capacity_or_conflict"' <<<"$issue" &&
	grep -q "\"ip\": \"$want_ip\"" <<<"$issue" &&
	grep -A3 '"function": "touch"' <<<"$issue" | grep -q "\"line\": $src_line,"; then
	_ok "JSON: the store at touch_pages.c:$src_line is a pending capacity-or-conflict issue"
else
	_not_ok "JSON: the store at touch_pages.c:$src_line is a pending capacity-or-conflict issue" \
		"$(head -c 1500 "$json")"
fi
if grep -A12 '"kind": "mapping"' <<<"$issue" | grep -q '"size": 524288,' &&
	grep -A4 '"function": "main"' <<<"$issue" | grep -q "\"line\": $mmap_line"; then
	_ok "JSON: the issue's object is the 524288-byte mapping from touch_pages.c:$mmap_line"
else
	_not_ok "JSON: the issue's object is the 524288-byte mapping from touch_pages.c:$mmap_line" \
		"$issue"
fi
if command -v python3 >/dev/null; then
	if python3 -m json.tool "$json" >/dev/null; then _ok "JSON: the file parses"; else
		_not_ok "JSON: the file parses"; fi
else
	skip "no python3 to parse the JSON file"
fi
rm -f "$json"
# sh forks the subshell (which forks sleep) and the workload
if grep -q "and 3 processes they started" <<<"$out"; then _ok "forks are followed"; else
	_not_ok "forks are followed"; fi
# sh, sleep and the workload exec'd; they and the subshell exited
if grep -q "3 exec'd, 4 exited" <<<"$out"; then _ok "exec and exit of targets reach user space"
else _not_ok "exec and exit of targets reach user space"; fi
if grep -q "ring buffer full: 0, counter map full: 0, no window for the CPU: 0" <<<"$out" &&
	grep -q "target filter full: 0, exec/exit records: 0" <<<"$out"; then
	_ok "no drops reported"; else _not_ok "no drops reported"; fi

# -a: the allocation probes sit on the system libc for every process, so a
# workload started after the attach has its malloc'd region attributed to its
# call site. 2 threads x 2048 pages of one malloc'd region; glibc maps it and
# writes its chunk header into the first page (that fault is inside malloc,
# before the object exists), so the object takes 2 x 2048 - 1 faults. The
# guard and the budget's windows are off (--max-alloc-rate 0, --overhead 0):
# another process allocating fast must not back the probes off. (The
# location text is optional: the symbolizer sometimes misses a short-lived
# process, a known problem of its own.)
ma_line=$(grep -n 'cp:malloc-site' "$CP_ROOT/tests/workloads/touch_pages.c" | cut -d: -f1)
: >"$tap_out" # not the last run's "sampling events" (wait_for, tap.sh)
"$BIN" -v --source faults -a -d 4 --overhead 0 --max-alloc-rate 0 >"$tap_out" 2>&1 &
ppid=$!
# -v says how many sampling events it opened once everything is attached
wait_for "sampling events" "$tap_out"
# (ASLR off: the call site's line comes from addr2line on the binary, not from us)
wl_out=$(echo go | setarch "$(uname -m)" -R "$tp" 2048 malloc)
wait $ppid
rc=$?
tpid=$(awk '/^ready / { print $2 }' <<<"$wl_out")
obj=$(sed -n '/^Objects with/,/^Drops/p' "$tap_out" | awk -v p="$tpid" '$2 == p' | head -1)
site=$(grep -oE 'allocated at 0x[0-9a-f]+' <<<"$obj" | grep -oE '0x[0-9a-f]+')
site_line=""
[ -n "$site" ] && site_line=$(addr2line -e "$tp" "$(printf '0x%x' $((site - 1 - 0x555555554000)))" |
	grep -oE ':[0-9]+' | tr -d :)
if [ "$rc" -eq 0 ] && [ -n "$tpid" ] && [ "$site_line" = "$ma_line" ] &&
	grep -Eq "^ +4095 +$tpid  heap object \(16777216 bytes\) allocated at $site( \(main \(touch_pages.c:$ma_line\)\))? by thread $tpid\$" <<<"$obj"; then
	_ok "-a: a process started after the attach has its malloc'd object (touch_pages.c:$ma_line)"
else
	_not_ok "-a: a process started after the attach has its malloc'd object (touch_pages.c:$ma_line)" \
		"rc $rc, workload $tpid, call site line '$site_line', its top object: '$obj'" \
		"$(grep -E 'allocation (events|guard)|dropped|lost' "$tap_out" | head -5)" \
		"$(sed -n '/^Objects with/,/^Drops/p' "$tap_out" | head -12)"
fi

# -p: the run ends when the target exits
# long enough to outlast the profiler's start on a loaded machine
sleep 5 &
spid=$!
expect "-p ends when the target exits" 0 "\(the target exited\)" "$BIN" --source faults -p $spid
wait $spid 2>/dev/null

# -d: the run ends after the duration, the target keeps running
sleep 30 &
spid=$!
expect "-d ends the run" 0 "\(duration reached\)" "$BIN" --source faults -d 1 -p $spid
if kill -0 $spid 2>/dev/null; then _ok "the -p target survives the profiler"; else
	_not_ok "the -p target survives the profiler"; fi

# SIGUSR1 prints the report so far; SIGINT stops with a final report
: >"$tap_out" # not the last run's "sampling events" (wait_for, tap.sh)
"$BIN" -v --source faults -p $spid >"$tap_out" 2>&1 &
ppid=$!
wait_for "sampling events" "$tap_out"
kill -USR1 $ppid
wait_for "^cacheperf-bpf report" "$tap_out" 10
kill -INT $ppid
wait $ppid
rc=$?
n=$(grep -c "^cacheperf-bpf report" "$tap_out")
if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && grep -q "(interrupted)" "$tap_out"; then
	_ok "SIGUSR1 reports, SIGINT stops cleanly with a final report"
else
	_not_ok "SIGUSR1 reports, SIGINT stops cleanly with a final report" "rc $rc, $n reports"
fi
kill $spid 2>/dev/null
wait $spid 2>/dev/null

# The report is what a run is for: a final -o that cannot be written (its
# directory made read-only during the run; the loop runs without
# CAP_DAC_OVERRIDE) fails the run, with the reason.
ro=$(mktemp -d)
"$BIN" -d 3 --no-objects -o "$ro/report.txt" -- sleep 2 >/dev/null 2>"$tap_out" &
ppid=$!
sleep 1
chmod 0555 "$ro"
wait $ppid
rc=$?
if [ "$rc" -eq 1 ] && grep -q "cannot create a file next to $ro/report.txt: Permission denied" "$tap_out" &&
	[ ! -e "$ro/report.txt" ]; then
	_ok "a final report that cannot be written fails the run (exit 1), saying why"
else
	_not_ok "a final report that cannot be written fails the run (exit 1), saying why" "rc $rc"
fi
rm -rf "$ro"

done_testing
