#!/bin/bash
# Runs every overhead benchmark with the arguments docs/figures.md's figures were
# measured with, one after another (they measure time: run nothing else).
#
#   tests/bench/run.sh BUILD [NAME...]     e.g. tests/bench/run.sh build bp_overhead
#
# Each benchmark prints medians of several runs and, where the issue names a
# goal, the ratio or cost to compare with it. Benchmarks that attach BPF
# programs need root. A benchmark that is not built (or not listed in the
# table below) is reported, not silently skipped. A name with a script
# tests/bench/NAME.sh and no binary runs the script (live_service: Debian's
# redis-server under redis-benchmark; packaging/deps.sh installs both).
set -u
build=${1:?usage: tests/bench/run.sh BUILD [NAME...]}
shift
export CP_BUILD=$build	# where the overhead benches find the profiler and workloads

# name and arguments (see each file's "usage:" comment)
table=(
	"bpf_sample_cost 7"
	"alloc_probe_cost 5 1000000"
	"alloc_probe_cost --sites 11"
	"alloc_probe_cost --sites-no-copy 11"
	"bp_hit_cost 7 20000"
	"bp_overhead 9 600000"
	"soft_overhead 7"
	"object_store_bench 1048576"
	"symbolizer_bench 20000"
	"replay_throughput 10000000"
	"malloc_overhead 5 400000000"
	"live_service 5 200000"
	"stack_copy_cost 5 40000"
	"agent_cost 3 20"
	"budget_intervals"
)

names=("$@")
want() {
	[ ${#names[@]} -eq 0 ] && return 0
	for w in "${names[@]}"; do [ "$w" = "$1" ] && return 0; done
	return 1
}

failed=0
for row in "${table[@]}"; do
	set -- $row
	name=$1; shift
	want "$name" || continue
	bin=$build/tests/bench/$name
	script=$(dirname "$0")/$name.sh
	echo "== $name $*"
	if [ ! -x "$bin" ] && [ -f "$script" ]; then
		bin=$script
	elif [ ! -x "$bin" ]; then
		echo "$name: not built ($bin): run 'make BUILD=$build tests' first" >&2
		failed=1
		continue
	fi
	# the offline classifier's figure is "on one core"; the others run a
	# profiler beside a workload and need both cores
	pin=()
	[ "$name" = replay_throughput ] && pin=(taskset -c 1)
	if ! "${pin[@]}" "$bin" "$@"; then
		echo "$name: failed" >&2
		failed=1
	fi
done
exit $failed
