# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A C++ program that catches the std::bad_alloc its operator new throws
# (tests/workloads/cxx_bad_alloc) must live on while profiled: exit 0 and
# say it caught both, and the report must still name the table it allocated
# with operator new[] (every page-fault sample lands in it). Once per
# allocator that implements operator new: libstdc++'s on glibc, tcmalloc
# (gperftools' minimal one linked, its full one preloaded) and jemalloc;
# started by the profiler (-- CMD) and attached to (-p PID). The preloaded
# tcmalloc is preloaded into the profiler too with -- CMD: the held child's
# maps are what its allocator is found in.
#
# With tcmalloc and jemalloc their throwing operator new is probed at exit
# points (user/decode/exit_points.h), never with a return probe, whose
# trampoline a std::bad_alloc cannot unwind through (issue 29, attack 7).
# With -- CMD the command finds "go" waiting: the table is made in main's
# first milliseconds. A linked allocator (tcmalloc, jemalloc)
# is mapped only after the exec; it used to be probed when the run loop read
# the exec record, 0.1-0.3 s after "ready", and the table was made unseen.
# The command now stops in its loader until it is probed
# (cp_alloc_probes__stop_in_loader()).
. "$(dirname "$0")/tap.sh"

need_root "allocation probes need root"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
src=$CP_ROOT/tests/workloads/cxx_bad_alloc.cpp
mark() { grep -n "cp:bad-alloc-$1 " "$src" | cut -d: -f1; }
# the first frame shown: make_table, or main's call of it when the walk from
# a frameless operator new skips make_table's frame (frame pointers only)
want="heap object \(16777216 bytes\) allocated at (0x[0-9a-f]+ \()?(make_table \(cxx_bad_alloc\.cpp:$(mark table)\)|main \(cxx_bad_alloc\.cpp:$(mark call)\))"

# go NAME: "go" waiting in the workload's input: it goes on at once
go() {
	(exec 3>"$dir/$1.in"; echo go >&3) &
}

# run_cmd_mode NAME WORKLOAD [ENV...]: the profiler starts it (-- CMD); the
# workload's lines and the report in NAME.out, its status in wl_rc (the
# profiler passes it on), the profiler's log in NAME.err
run_cmd_mode() {
	local name=$1 wl=$2

	shift 2
	rm -f "$dir/$name.in"
	mkfifo "$dir/$name.in"
	go "$name"
	env "$@" "$BIN" --source faults -- "$WL/$wl" <"$dir/$name.in" >"$dir/$name.out" \
		2>"$dir/$name.err"
	wl_rc=$?
	wait
	cp "$dir/$name.out" "$dir/$name.rep"
}

# run_pid_mode NAME WORKLOAD [ENV...]: the workload runs on its own, the
# profiler attaches (-p) and writes its report to NAME.rep; "go" once the
# profiler said its events are on
run_pid_mode() {
	local name=$1 wl=$2 pid prof

	shift 2
	rm -f "$dir/$name.in"
	mkfifo "$dir/$name.in"
	(env "$@" "$WL/$wl" <"$dir/$name.in" >"$dir/$name.out" 2>&1; echo "status $?" >"$dir/$name.rc") &
	exec 4>"$dir/$name.in"
	wait_for '^ready ' "$dir/$name.out" 60
	pid=$(awk '/^ready /{print $2; exit}' "$dir/$name.out")
	"$BIN" -v --source faults -o "$dir/$name.rep" -p "$pid" 2>"$dir/$name.err" &
	prof=$!
	wait_for 'sampling events' "$dir/$name.err" 60
	sleep 0.5
	echo go >&4
	exec 4>&-
	wait "$prof"
	wait
	wl_rc=$(awk '{print $2}' "$dir/$name.rc")
}

# check NAME DESC: exit 0, both caught, the table named
check() {
	local name=$1 desc=$2

	if [ "$wl_rc" = 0 ] && grep -q '^caught bad_alloc 2$' "$dir/$name.out"; then
		_ok "$desc: the program catches its std::bad_alloc and exits 0"
	else
		_not_ok "$desc: the program catches its std::bad_alloc and exits 0" \
			"workload status $wl_rc" "$(grep -v '^ *[0-9]' "$dir/$name.out" | head -5)"
	fi
	if grep -Eq "$want" "$dir/$name.rep"; then
		_ok "$desc: the report names the table operator new[] allocated"
	else
		_not_ok "$desc: the report names the table operator new[] allocated" \
			"want /$want/" "$(grep -E 'heap object' "$dir/$name.rep" | head -3)"
	fi
}

# The stop in the loader is for a command of the profiler's own loader: a
# static one (and one run by another loader) never stops there, and is
# neither waited for nor sent a SIGCONT (which would run its handler and
# cut its sleep short); one run as "ld.so PROG" stops and goes on. Each
# sleeps 1 s counting SIGCONTs, run with --source faults.
for c in "static:$WL/sigcont_static" "dynamic:$WL/sigcont" \
	"ld.so:/lib64/ld-linux-x86-64.so.2 $WL/sigcont"; do
	# shellcheck disable=SC2086 # the command's words
	expect "-- CMD, ${c%%:*}: no SIGCONT reaches the command, its sleep whole" 0 \
		"^sigcont 0 sleep whole" "$BIN" --source faults -o "$dir/sigcont.rep" -- ${c#*:}
done

cases=(
	"libc cxx_bad_alloc_libc"
	"tcmalloc cxx_bad_alloc_tcmalloc"
	"tcmalloc-full cxx_bad_alloc_libc LD_PRELOAD=libtcmalloc.so.4"
	"jemalloc cxx_bad_alloc_jemalloc"
)
for c in "${cases[@]}"; do
	read -r name wl envs <<<"$c"
	# shellcheck disable=SC2086 # ENV words
	run_cmd_mode "$name-cmd" "$wl" $envs
	check "$name-cmd" "$name, -- CMD"
	# shellcheck disable=SC2086
	run_pid_mode "$name-pid" "$wl" $envs
	check "$name-pid" "$name, -p PID"
done
done_testing
