# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Continuous operation as an operator meets it: the Prometheus text file
# (--prom-file) checked by Debian's promtool and served by a real
# prometheus-node-exporter on a loopback port; never a partial file for a
# reader looping on it; refused symlinks and unwritable directories; the
# rolling window forgetting what is older than --window-seconds while the
# final report keeps the whole run; SIGHUP, SIGUSR1, and the status line
# shown only on a terminal. Live runs use --source faults on
# tests/workloads/fault_loop, whose faulting store is in churn(); soft
# runs (timer ticks, no PMU) must export the issues their final report shows.
. "$(dirname "$0")/tap.sh"

golden=$CP_ROOT/tests/data/prom
work=$(mktemp -d)
exporter_pid=
cleanup() {
	[ -n "$exporter_pid" ] && kill "$exporter_pid" 2>/dev/null
	rm -rf "$work" "$tap_out"
}
trap cleanup EXIT
# the faulting store's line, from the workload's source marker
churn_line=$(grep -n "the store that faults" "$CP_ROOT/tests/workloads/fault_loop.c" | cut -d: -f1)
# a process name with a quote, a backslash and a newline, and how the label must spell it
hostile=$'pr"o\\m\nx'
hostile_label='pr\"o\\m\nx'

# promtool_ok DESC FILE: promtool check metrics accepts FILE
promtool_ok() {
	if ! command -v promtool >/dev/null; then skip "$1: no promtool (packaging/deps.sh)"; return; fi
	if promtool check metrics <"$2" >"$tap_out" 2>&1; then _ok "$1"; else
		_not_ok "$1" "promtool check metrics $2"; fi
}

# --- the golden files (tests/data/prom/README.md) pass promtool ----------------
promtool_ok "promtool accepts golden.prom" "$golden/golden.prom"
promtool_ok "promtool accepts golden-top1.prom" "$golden/golden-top1.prom"
promtool_ok "promtool accepts golden-pid.prom" "$golden/golden-pid.prom"
promtool_ok "promtool accepts golden-live.prom" "$golden/golden-live.prom"

# --- refused at startup, with a sentence, before anything runs ------------------
ln -s /etc/passwd "$work/link.prom"
expect "a symlink at --prom-file is refused" 1 "is a symbolic link: refusing to follow" \
	"$BIN" --prom-file "$work/link.prom" --source faults -- true
if [ "$(readlink "$work/link.prom")" = /etc/passwd ]; then _ok "the symlink is left alone"; else
	_not_ok "the symlink is left alone"; fi
mkdir "$work/dir.prom"
expect "a directory at --prom-file is refused" 1 "is a directory" \
	"$BIN" --prom-file "$work/dir.prom" --source faults -- true
expect "a missing directory is refused" 1 "cannot create a file in its directory: No such file" \
	"$BIN" --prom-file "$work/none/x.prom" --source faults -- true
chmod 755 "$work"
expect "an unwritable directory is refused" 1 "cannot create a file in its directory: Permission denied" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" --prom-file "$work/x.prom" \
	--source faults -- true

need_root "runs need root"

# --- a live run rewrites the file each interval; a reader never sees half ------
tf=$work/tf
mkdir "$tf"
prom=$tf/cacheperf.prom
"$BIN" --source faults -i 1 --window-seconds 2 --prom-file "$prom" --record "$work/run.cprec" \
	-o "$work/final.txt" -- "$WL/fault_loop" 6 "$hostile" >"$work/run.out" 2>&1 &
ppid=$!
reads=0 partial=0 stamps=
# no fork per read (read -d '', a regex for the stamp) and a pause of 50 ms:
# a reader beside CPU hogs still reads the file dozens of times over the
# run, and leaves the profiler the CPU to write it each second
while kill -0 $ppid 2>/dev/null; do
	if [ -e "$prom" ]; then
		snap=
		IFS= read -r -d '' snap <"$prom"
		snap=${snap%$'\n'}
		reads=$((reads + 1))
		# whole: it starts with the first family and ends with the last one's sample
		case "$snap" in
		"# HELP cacheperf_issue_miss_share_ratio "*$'\n'"cacheperf_last_write_timestamp_seconds "[0-9]*) ;;
		*) partial=$((partial + 1)); printf '%s\n' "$snap" >"$work/partial.$partial" ;;
		esac
		[[ $snap =~ (^|$'\n')cacheperf_last_write_timestamp_seconds\ ([0-9]+) ]] &&
			stamps+=" ${BASH_REMATCH[2]}"
	fi
	sleep 0.05
done
wait $ppid
rc=$?
nstamps=$(echo $stamps | tr ' ' '\n' | sort -u | grep -c .)
if [ "$rc" -eq 0 ] && [ "$partial" -eq 0 ] && [ "$reads" -gt 20 ] && [ "$nstamps" -ge 4 ]; then
	_ok "a reader looping on the file never sees a partial one ($reads reads, $nstamps writes)"
else
	_not_ok "a reader looping on the file never sees a partial one" \
		"rc $rc, $partial partial of $reads reads, $nstamps distinct writes"
fi
if [ "$(stat -c %a "$prom")" = 644 ]; then _ok "the file is mode 0644"; else
	_not_ok "the file is mode 0644" "mode $(stat -c %a "$prom")"; fi
if [ "$(ls -A "$tf")" = cacheperf.prom ]; then _ok "no temporary file is left"; else
	_not_ok "no temporary file is left" "$(ls -A "$tf")"; fi
promtool_ok "promtool accepts the live file" "$prom"
cp "$prom" "$work/live.prom"
want="location=\"churn fault_loop.c:$churn_line\""
if grep -E '^cacheperf_issue_miss_share_ratio\{type="[a-z_]+",' "$prom" | grep -F "$want" |
	grep -qF "comm=\"$hostile_label\""; then
	_ok "the churn() store is an issue series with its escaped comm"
else
	cp "$prom" "$tap_out"
	_not_ok "the churn() store is an issue series with its escaped comm" "want $want, comm=\"$hostile_label\""
fi
for s in 'cacheperf_source_info{source="faults",pmu="none"} 1' 'cacheperf_samples_lost_total{reason="ring_buffer"}' \
	 'cacheperf_agent_memory_bytes{kind="now"} ' 'cacheperf_agent_cpu_seconds_total{phase="steady"} ' 'cacheperf_issue_miss_share_ratio{type="other"'; do
	if ! grep -qF "$s" "$prom"; then missing_series+=" [$s]"; fi
done
if [ -z "${missing_series:-}" ]; then _ok "self metrics, source info and other are there"; else
	cp "$prom" "$tap_out"; _not_ok "self metrics, source info and other are there" "missing$missing_series"; fi

# --- two workers of one name and cgroup are one series; --prom-pid-label splits them ---
# Both processes fault through churn() for 2 s, each about half the misses:
# each is an issue of its own in the profile. Without pid labels they have the
# same comm, container (none) and cgroup (this test's), so the file must hold
# one series for them, never the same series twice (promtool would refuse it).
# Each lingers 4 s without a fault: a process gone before its first record is
# handled has no comm to label (docs/usage.md, -a), and a loaded machine drains late.
# The type is a label too: when one process's access history settled as a
# conflict and the other's had none yet (a CI run beside two CPU hogs), the two
# issues are a "conflict" and a "capacity_or_conflict" series: two label sets,
# each once.
twins="$WL/fault_loop 2 twin 4 & $WL/fault_loop 2 twin 4; wait"
churn_series() { grep -c "^cacheperf_issue_miss_share_ratio{.*comm=\"twin\".*$want" "$1"; }
# label sets of the twins' churn series that the file holds more than once
churn_twice() {
	grep "^cacheperf_issue_miss_share_ratio{.*comm=\"twin\".*$want" "$1" | sed 's/} .*/}/' |
		sort | uniq -d | wc -l
}
run_cmd "$BIN" --source faults -i 1 --prom-file "$work/twins.prom" -o /dev/null -- sh -c "$twins"
n=$(churn_series "$work/twins.prom") p=$(grep -c '^cacheperf_process_samples{comm="twin",' "$work/twins.prom")
twice=$(churn_twice "$work/twins.prom")
if [ "$rc" -eq 0 ] && [ "$n" -ge 1 ] && [ "$twice" -eq 0 ] && [ "$p" -eq 1 ] &&
	! grep -q 'pid="' "$work/twins.prom"; then
	_ok "two processes of one comm and cgroup: issue series each once, one process series, no pid"
else
	cp "$work/twins.prom" "$tap_out" 2>/dev/null
	_not_ok "two processes of one comm and cgroup: issue series each once, one process series, no pid" \
		"rc $rc, $n churn series ($twice label sets twice), $p process series"
fi
promtool_ok "promtool accepts the twins' file" "$work/twins.prom"
run_cmd "$BIN" --source faults -i 1 --prom-pid-label --prom-file "$work/twins-pid.prom" -o /dev/null \
	-- sh -c "$twins"
n=$(churn_series "$work/twins-pid.prom")
pids=$(grep "^cacheperf_issue_miss_share_ratio{.*comm=\"twin\".*$want" "$work/twins-pid.prom" |
	grep -o 'pid="[0-9]*"' | sort -u | wc -l)
if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && [ "$pids" -eq 2 ]; then
	_ok "--prom-pid-label: one churn() series per process"
else
	cp "$work/twins-pid.prom" "$tap_out" 2>/dev/null
	_not_ok "--prom-pid-label: one churn() series per process" "rc $rc, $n series, $pids pids"
fi

# --- the same metrics from the recording (whose comm is the one at start) ---------------
run_cmd "$BIN" report "$work/run.cprec" -o /dev/null --prom-file "$work/rec.prom"
if [ "$rc" -eq 0 ] && grep -q "^cacheperf_issue_miss_share_ratio{.*$want" "$work/rec.prom" &&
	! grep -q "cacheperf_profiler_\|cacheperf_last_write" "$work/rec.prom"; then
	_ok "report FILE --prom-file: the recording's issue, no figures of this machine"
else
	_not_ok "report FILE --prom-file: the recording's issue, no figures of this machine" "rc $rc"
fi
promtool_ok "promtool accepts the recording's file" "$work/rec.prom"

# --- a real node_exporter serves it -------------------------------------------------
if command -v prometheus-node-exporter >/dev/null && command -v curl >/dev/null; then
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$tf" >"$work/exporter.log" 2>&1 &
	exporter_pid=$!
	for _ in $(seq 50); do
		curl -sf "http://127.0.0.1:$port/metrics" >"$work/scrape" 2>/dev/null && break
		sleep 0.1
	done
	# node_exporter sorts labels by name
	series=$(grep '^cacheperf_issue_miss_share_ratio{' "$work/scrape" | grep -F "comm=\"$hostile_label\"" |
		 grep -F "$want")
	if [ -n "$series" ] && grep -q '^node_textfile_scrape_error 0' "$work/scrape" &&
		grep -q '^cacheperf_samples_total{access="load"} [1-9]' "$work/scrape"; then
		_ok "node_exporter's textfile collector serves the series"
	else
		cp "$work/scrape" "$tap_out" 2>/dev/null
		_not_ok "node_exporter's textfile collector serves the series" "port $port"
	fi
	kill "$exporter_pid"
	wait "$exporter_pid" 2>/dev/null
	exporter_pid=
else
	skip "node_exporter: no prometheus-node-exporter or curl (packaging/deps.sh)"
fi

# --- the window forgets, the final report does not -------------------------------------
# faults for 2 s, then 4 s of nothing: the last 2-s window is empty at the end
run_cmd "$BIN" --source faults -i 1 --window-seconds 2 --prom-file "$work/w.prom" -o "$work/w.txt" \
	-- "$WL/fault_loop" 2 "" 4
# (the exit's own few faults may be in it: they are not churn()'s)
if [ "$rc" -eq 0 ] && grep -q '^cacheperf_issues' "$work/w.prom" &&
	! grep -q 'churn' "$work/w.prom" && grep -q "churn (fault_loop.c:$churn_line)" "$work/w.txt"; then
	_ok "the window forgets an idle target's old issue; the final report keeps it"
else
	cat "$work/w.prom" "$work/w.txt" >"$tap_out" 2>/dev/null
	_not_ok "the window forgets an idle target's old issue; the final report keeps it" "rc $rc"
fi

# --- SIGHUP writes the file at once; SIGUSR1 prints the summary -----------------------
"$BIN" -v --source faults -i 60 --prom-file "$work/h.prom" -- "$WL/fault_loop" 8 >"$work/h.out" 2>&1 &
ppid=$!
wait_for "sampling events" "$work/h.out"
rm -f "$work/h.prom"
kill -HUP $ppid
for _ in $(seq 50); do [ -s "$work/h.prom" ] && break; sleep 0.1; done
if kill -0 $ppid 2>/dev/null && [ -s "$work/h.prom" ]; then _ok "SIGHUP rewrites a removed file now"; else
	_not_ok "SIGHUP rewrites a removed file now"; fi
kill -USR1 $ppid
sleep 1
kill -INT $ppid
wait $ppid
rc=$?
if [ "$rc" -eq 0 ] && grep -q "duration: .* (summary of the last [0-9]* s)" "$work/h.out" &&
	grep -q "(interrupted)" "$work/h.out"; then
	_ok "SIGUSR1 prints the rolling summary"
else
	cp "$work/h.out" "$tap_out"
	_not_ok "SIGUSR1 prints the rolling summary" "rc $rc"
fi

# --- soft mode (no PMU): the window's issues are the run's ----------------------------
# The window (60 s by default) spans these runs whole, so its summary must
# name what the final report names. Allocator false sharing (the sampled
# stores are many, so every run shows it): the window's epochs merged must
# keep the samples that met another thread's bytes within 100 ms; a stream
# past L2: the window judges capacity against the same caches as the run.
mark() { grep -n "MARK: $2 \*/" "$CP_ROOT/tests/workloads/$1" | cut -d: -f1; }

# soft_series DESC PROM TXT TYPE ORIGIN ACCESS SITE HEADING: the final report names
# the issue (HEADING) and the file has its series: TYPE, ORIGIN, the location and
# object at the source lines ACCESS and SITE (file.c:LINE, whatever the function)
soft_series() {
	local desc=$1 prom=$2 txt=$3 labels
	labels="type=\"$4\",origin=\"$5\",.*,location=\"[^\"]* $6\",object=\"[^\"]* $7\""
	if [ "$rc" -ne 0 ] || ! grep -q "^#[0-9]* $8" "$txt"; then
		cat "$txt" >"$tap_out" 2>/dev/null
		_not_ok "$desc" "rc $rc; the final report does not show '$8' (nothing to compare)"
	elif grep "^cacheperf_issue_miss_share_ratio{$labels} " "$prom" | awk '$NF > 0 { f = 1 } END { exit !f }' &&
		grep -q '^cacheperf_issues [1-9]' "$prom" &&
		grep -q '^cacheperf_source_info{source="soft",' "$prom"; then
		_ok "$desc"
	else
		grep '^cacheperf_issue' "$prom" >"$tap_out" 2>/dev/null
		_not_ok "$desc" "want cacheperf_issue_miss_share_ratio{$labels} > 0, as the final report"
	fi
}

fs=false_sharing.c
MALLOC_ARENA_MAX=1 run_cmd "$BIN" --source soft -i 1 --prom-file "$work/fs.prom" -o "$work/fs.txt" \
	-- "$WL/false_sharing" --alloc 3
soft_series "soft: the file has the run's allocator false sharing" "$work/fs.prom" "$work/fs.txt" \
	false_sharing allocator "$fs:$(mark $fs fs-alloc-write)" "$fs:$(mark $fs fs-alloc-small)" \
	"Allocator's false sharing"
promtool_ok "promtool accepts the soft file" "$work/fs.prom"
# (capacity is proven by the stream's access history: need_bp)
if need_bp "soft: the file has the run's capacity misses (a stream past L2)"; then
	run_cmd "$BIN" --source soft -i 1 --prom-file "$work/st.prom" -o "$work/st.txt" -- "$WL/stream" 3
	soft_series "soft: the file has the run's capacity misses (a stream past L2)" "$work/st.prom" \
		"$work/st.txt" capacity application "stream.c:$(mark stream.c stream-load)" \
		"stream.c:$(mark stream.c stream-alloc)" "Application's capacity misses"
fi

# --- the status line: each interval on a terminal, never elsewhere or with --quiet ------
status='^cacheperf-bpf: [0-9]+ samples/s, [0-9]+ issues?, [0-9]+ drops, CPU [0-9.]+ %'
script -qec "$BIN --source faults -i 1 -o /dev/null -- $WL/fault_loop 3" /dev/null >"$work/tty.out" 2>&1
n=$(tr -d '\r' <"$work/tty.out" | grep -cE "$status")
"$BIN" --source faults -i 1 -o /dev/null -- "$WL/fault_loop" 3 2>"$work/notty.err"
m=$(grep -cE "$status" "$work/notty.err")
script -qec "$BIN --quiet --source faults -i 1 -o /dev/null -- $WL/fault_loop 3" /dev/null >"$work/quiet.out" 2>&1
q=$(tr -d '\r' <"$work/quiet.out" | grep -cE "$status")
if [ "$n" -ge 2 ] && [ "$m" -eq 0 ] && [ "$q" -eq 0 ]; then
	_ok "a status line each interval on a terminal only, none with --quiet"
else
	cp "$work/tty.out" "$tap_out"
	_not_ok "a status line each interval on a terminal only, none with --quiet" "tty $n, file $m, quiet $q"
fi

done_testing
