# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# -a (root): per-process summaries with pid, comm and cgroup; --cgroup limits
# to one cgroup (v2) and its descendants; the profiler itself and kernel
# threads are never listed. The workload, tests/workloads/touch_pages, runs
# in a cgroup this test makes (removed at the end); it is exec'd 1.5 s after
# the profiler starts and lives 1.5 s more before it faults 2 x 256 pages
# through its `touch` store and exits (the exec record has it described and
# symbolized while it lives; a process gone before its first record is
# handled is listed as "?").
. "$(dirname "$0")/tap.sh"

need_root "needs root"
command -v python3 >/dev/null || skip_all "no python3 to read the JSON reports"
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
out=$(mktemp -d)
name=cp-test-$$
cleanup() {
	[ -n "$cg2" ] && rmdir "$cg2/$name/inner" "$cg2/$name" 2>/dev/null
	rm -rf "$out" "$tap_out"
}
trap cleanup EXIT

# run_in_cgroup DIR: once the profiler (-v) says it is attached, touch_pages in
# cgroup DIR, exec'd 0.5 s later, touching 1.5 s later, then alive 2.5 s more:
# on a busy machine its records are handled late, and a process gone by then
# has no comm or cgroup to read
run_in_cgroup() {
	wait_for "sampling events" "$tap_out"
	(sleep 1.5; echo go; sleep 2.5) | sh -c "echo \$\$ > '$1/cgroup.procs' && sleep 0.5 && TOUCH_PAGES_LINGER=1 exec '$WL/touch_pages' 256" \
		>"$out/wl.out" 2>&1
}

# profile ARGS...: the profiler in the background (its pid in $prof), output in $tap_out
# (emptied first: the background shell empties it only once it runs, and a
# wait_for before that would find the last run's lines)
profile() {
	: >"$tap_out"
	"$BIN" "$@" >"$tap_out" 2>&1 </dev/null &
	prof=$!
	wait "$prof"
	rc=$?
}

# The processes of a JSON report: "pid comm cgroup" lines.
procs_of() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for p in r["processes"]["top"]:
    print(p["pid"], p["comm"], p["cgroup"])' "$1"
}

[ -n "$cg2" ] && mkdir -p "$cg2/$name/inner" || skip_all "no cgroup2 file system to make a cgroup in"

# 1. -a: the workload is listed with its comm and cgroup path
>"$tap_out"
run_in_cgroup "$cg2/$name/inner" &
wl=$!
profile -v -a --source faults -d 5 --max-bp-rate 0 --top 1000 --json "$out/all.json"
wait "$wl"
if [ "$rc" -eq 0 ] && grep -q '^Processes with the most samples' "$tap_out"; then
	_ok "-a reports the processes with the most samples"
else
	_not_ok "-a reports the processes with the most samples" "exit status $rc"
fi
procs=$(procs_of "$out/all.json")
drops=$(sed -n 's/.*ring buffer full: \([0-9]*\),.*/\1/p' "$tap_out" | head -1)
if grep -Eq "^[0-9]+ touch_pages /$name/inner\$" <<<"$procs" &&
   grep -Eq "touch_pages +/$name/inner" "$tap_out"; then
	_ok "touch_pages is listed with its cgroup /$name/inner (text and JSON)"
elif [ "${drops:-0}" -gt 0 ]; then
	# a machine busy with others: the ring buffer overflowed (counted), the
	# --cgroup runs below check the same without the others' load
	skip "touch_pages among all processes: $drops records lost to a full ring buffer"
else
	_not_ok "touch_pages is listed with its cgroup /$name/inner (text and JSON)" "$procs"
fi
# never the profiler (its comm) nor a kernel thread (kthreadd's children, or pid 2)
kernel=$(while read -r pid comm _; do
	[ "$pid" = 2 ] && echo "$pid $comm"
	ppid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ "$ppid" = 2 ] && echo "$pid $comm"
done <<<"$procs")
if grep -q "^$prof " <<<"$procs"; then
	_not_ok "the profiler does not list itself" "$(grep "^$prof " <<<"$procs")"
else
	_ok "the profiler (pid $prof) does not list itself"
fi
if [ -z "$kernel" ]; then _ok "no kernel thread is listed"; else
	_not_ok "no kernel thread is listed" "$kernel"; fi

# 2. --cgroup: only the cgroup's processes (and its descendants'), named the
# two ways the man page allows
for path in "/$name" "$cg2/$name"; do
	>"$tap_out"
	run_in_cgroup "$cg2/$name/inner" &
	wl=$!
	profile -v -a --cgroup "$path" --source faults -d 5 --max-bp-rate 0 --top 1000 \
		--json "$out/cg.json" --record "$out/cg.cprec"
	wait "$wl"
	procs=$(procs_of "$out/cg.json")
	others=$(grep -v " /$name/inner\$" <<<"$procs")
	if [ "$rc" -eq 0 ] && grep -Eq "^[0-9]+ touch_pages /$name/inner\$" <<<"$procs" &&
	   [ -z "$others" ]; then
		_ok "--cgroup $path: only the cgroup's processes"
	else
		_not_ok "--cgroup $path: only the cgroup's processes" "status $rc" "$procs"
	fi
	# the replay names the processes as the live run did: comm and cgroup recorded
	"$BIN" report --json "$out/replay.json" "$out/cg.cprec" >/dev/null 2>"$out/replay.err"
	replayed=$(procs_of "$out/replay.json")
	if [ -n "$procs" ] && [ "$replayed" = "$procs" ]; then
		_ok "--cgroup $path: the replay lists the same pids, comms and cgroups"
	else
		_not_ok "--cgroup $path: the replay lists the same pids, comms and cgroups" \
			"live: $procs" "replay: $replayed" "$(cat "$out/replay.err")"
	fi
done
if grep -q ' touch (touch_pages.c:[0-9]*)$' "$tap_out"; then
	_ok "--cgroup: the workload's store is found at its source line"
else
	_not_ok "--cgroup: the workload's store is found at its source line"
fi

# 3. a container's own libc, another file than the system's (here a copy
# through LD_LIBRARY_PATH), started after the attach: its allocation probes
# attach once its dynamic loader has mapped that libc (its exec record may
# be handled before), and its malloc, made after "ready" once -v said so,
# is an object with its call site. 2 x 256 pages: glibc writes the chunk
# header into the first page inside malloc, so the object takes 511 faults.
mkdir "$out/lib"
cp "$(ldd "$WL/touch_pages" | awk '/libc\.so/ { print $3 }')" "$out/lib/libc.so.6"
mkfifo "$out/go"
late_line=$(grep -n 'cp:malloc-late' "$CP_ROOT/tests/workloads/touch_pages.c" | cut -d: -f1)
# emptied first: the background shell empties it only once it runs, and part 2's
# "sampling events" would start the workload before the attach (no exec record)
: >"$tap_out"
"$BIN" -v -a --cgroup "/$name" --source faults -d 10 --max-bp-rate 0 --overhead 0 \
	--max-alloc-rate 0 >"$tap_out" 2>&1 </dev/null &
prof=$!
wait_for "sampling events" "$tap_out"
(exec 3>"$out/go"; wait_for "probed in its own libc" "$tap_out" 8; echo go >&3; sleep 2) &
feeder=$!
sh -c "echo \$\$ > '$cg2/$name/inner/cgroup.procs' && LD_LIBRARY_PATH='$out/lib' TOUCH_PAGES_LINGER=1 exec '$WL/touch_pages' 256 malloc-late" \
	<"$out/go" >"$out/wl.out" 2>&1
wait "$feeder"
wait "$prof"
rc=$?
tpid=$(awk '/^ready / { print $2 }' "$out/wl.out")
obj=$(sed -n '/^Objects with/,/^Drops/p' "$tap_out" | awk -v p="$tpid" '$2 == p' | head -1)
if [ "$rc" -eq 0 ] && [ -n "$tpid" ] &&
	grep -qF "alloc probes: pid $tpid: probed in its own libc ($out/lib/libc.so.6)" "$tap_out" &&
	grep -Eq "^ +511 +$tpid  heap object \(2097152 bytes\) allocated at 0x[0-9a-f]+ \(main \(touch_pages.c:$late_line\)\) by thread $tpid\$" <<<"$obj"; then
	_ok "-a: a process with its own libc, started later, has its malloc'd object (touch_pages.c:$late_line)"
else
	_not_ok "-a: a process with its own libc, started later, has its malloc'd object (touch_pages.c:$late_line)" \
		"status $rc, pid $tpid" "object: $obj" "$(grep "alloc probes: pid $tpid\|skipped" "$tap_out")"
fi

# 4. errors
expect "--cgroup without -a is a usage error" 2 "use it with -a" \
	"$BIN" --cgroup /x -- true
expect "--cgroup of a missing cgroup says so" 1 "--cgroup: cannot open .*/$name/missing" \
	"$BIN" -a --cgroup "/$name/missing" --source faults -d 1
expect "--cgroup of a non-cgroup directory says so" 1 "is not a cgroup2 directory|cannot open" \
	"$BIN" -a --cgroup /tmp --source faults -d 1
done_testing
