# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Minimal TAP for shell tests, sourced by tests/e2e/test_*.sh.
# Set by tests/run.sh: CP_BUILD (build dir), CP_ROOT (source tree).
: "${CP_BUILD:=build}" "${CP_ROOT:=.}"
BIN=$CP_BUILD/cacheperf-bpf
WL=$CP_BUILD/tests/workloads
tap_n=0
tap_failed=0
tap_out=$(mktemp)
trap 'rm -f "$tap_out"' EXIT

_ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
_not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1"
	shift
	for l in "$@"; do printf '# %s\n' "$l"; done
	sed 's/^/#   | /' "$tap_out" | head -40
}
skip() { tap_n=$((tap_n + 1)); echo "not ok $tap_n # SKIP $1"; }
# skip_all WHY: the whole test cannot run here (no root, a tool missing).
skip_all() { skip "$1"; echo "1..$tap_n"; exit 0; }

# need_root WHY: skip_all unless root.
need_root() { [ "$(id -u)" -eq 0 ] || skip_all "$1"; }

# run_cmd CMD...: runs with stdout+stderr in $tap_out, status in $rc.
run_cmd() { "$@" >"$tap_out" 2>&1 </dev/null; rc=$?; }

# wait_for PATTERN FILE [SECONDS]: until FILE has a line matching the extended
# regex PATTERN (default 60 s): a profiler started with -v says "N sampling
# events" once everything is attached, which on a busy machine takes seconds
# (the probes' costs are measured at start too). Status 1 on time-out.
# A file a background command writes with `>FILE &` is emptied only once
# that command's shell runs: empty it before starting the command (`: >FILE`),
# or a wait_for right after may find an earlier run's line.
wait_for() {
	local tenths=$((${3:-60} * 10))

	while [ "$tenths" -gt 0 ]; do
		grep -Eq -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
		tenths=$((tenths - 1))
	done
	return 1
}

# expect DESC STATUS PATTERN CMD...: exit status STATUS and output matching
# the extended regex PATTERN (empty: any output).
expect() {
	local desc=$1 want=$2 pat=$3
	shift 3
	run_cmd "$@"
	if [ "$rc" -ne "$want" ]; then
		_not_ok "$desc" "exit status $rc, want $want: $*"
	elif [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tap_out"; then
		_not_ok "$desc" "output does not match /$pat/: $*"
	else
		_ok "$desc"
	fi
}

# done_testing: the plan; status 1 if a case failed, so a script run by hand
# (tests/bench/soak.sh) fails as tests/run.sh would count it
done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ] || exit 1
}

# bp_fires: status 0 unless hardware breakpoints open but never fire here
# (cacheperf-bpf --probe says so: a hypervisor, such as Firecracker, that
# delivers no debug exceptions). Asked once per test.
bp_fires() {
	if [ -z "${bp_fires_said:-}" ]; then
		bp_fires_said=yes
		"$BIN" --probe 2>/dev/null | grep -q '^hardware breakpoints: they open but never fire' &&
			bp_fires_said=no
	fi
	[ "$bp_fires_said" = yes ]
}

# need_bp DESC...: status 0 where breakpoints fire; else each DESC, a check
# whose verdict needs access histories (breakpoint hits), is skipped with the
# reason, status 1.
need_bp() {
	local d

	bp_fires && return 0
	for d in "$@"; do
		skip "$d: hardware breakpoints open but never fire on this machine (--probe): none is armed, no access history"
	done
	return 1
}

# A report without what only a live run knows: the "Breakpoints" paragraph
# (the breakpoint manager's own figures are not recorded), the "Overhead
# budget" paragraph (unit costs measured on the machine at start), the
# header's "profiler:" and "drain:" lines (its own CPU time, memory, records) and the Limits'
# "memory:" and "file copies:" lines (the profiler's RSS, the copies of
# targets' files it made). What a replay must reproduce exactly.
replayable() {
	awk -v RS= -v ORS='\n\n' '!/^Breakpoints \(/ && !/^Overhead budget\n/' "$1" |
		grep -v -e '^  memory: ' -e '^  file copies: ' -e '^  profiler: ' -e '^  drain: '
}

# The hostile-tenant tests: a tenant is an unprivileged user (nobody) acting
# against the root profiler. tenant_dir makes a directory it owns and prints
# its path; as_tenant CMD... runs CMD as that user, with no capabilities.
tenant_dir() {
	local d

	d=$(mktemp -d) && chmod 0755 "$d" && chown nobody:nogroup "$d" && echo "$d"
}
as_tenant() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"
}
