#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What sample stack copies (docs/stacks.md) cost, root: the page-fault source
# walks every fault's stack (--stack-every 1) while tests/workloads/callers
# (frame pointers all the way: whole walks) or callers_nofp (inner() keeps no
# frame pointer: short walks, copied and unwound by CFI) faults 3 x PAGES
# pages, with copies off (--stack-copy-bytes 0) and on (4096). Printed, the
# medians of RUNS runs of:
#  - ns per run of on_mem_sample, from the kernel's BPF run-time stats
#    (kernel.bpf_stats_enabled, read with bpftool while the workload lingers):
#    what the target pays per walked event, walk and count or walk and copy;
#  - the profiler's CPU seconds (user + system) for the run, which the
#    unwinding of the copies adds to;
#  - the copies it made and how many the copy ring could not take.
# A fault costs the same program with or without the rest of the profiler,
# so the difference of the rows is the copy's price.
#
# usage: tests/bench/stack_copy_cost.sh [RUNS [PAGES]]   (default 5, 40000)
set -u
[ -n "${CP_BENCH_DEBUG:-}" ] && set -x
runs=${1:-5} pages=${2:-40000}
build=${CP_BUILD:-build}
bin=$build/cacheperf-bpf wl=$build/tests/workloads
[ "$(id -u)" -eq 0 ] || { echo "stack_copy_cost: needs root" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "stack_copy_cost: needs bpftool" >&2; exit 1; }
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
tmp=$(mktemp -d)
trap 'sysctl -q kernel.bpf_stats_enabled="$old_stats"; rm -rf "$tmp"' EXIT
sysctl -q kernel.bpf_stats_enabled=1

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }

# one PROG BYTES: prints "ns_per_run cpu_s copied ring_full"
one() {
	local fifo=$tmp/in out=$tmp/out err=$tmp/err pid ns copies
	rm -f "$fifo"
	mkfifo "$fifo"
	(exec 3>"$fifo"; sleep 3; echo go >&3) &
	/usr/bin/time -f "cpu %U %S" -o "$tmp/time" "$bin" -v --source faults --stack-every 1 \
		--stack-copy-bytes "$2" -- "$wl/$1" "$pages" 4000 <"$fifo" >"$out" 2>"$err" &
	pid=$!
	# the faults are done within ~2 s of "go"; the workload lingers 4 s
	sleep 6.5
	ns=$(bpftool prog show name on_mem_sample -j 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for p in d if isinstance(d, list) else [d]:
    if p.get("run_cnt"):
        print("%.0f" % (p["run_time_ns"] / p["run_cnt"]))' | head -1)
	wait "$pid"
	wait
	copies=$(sed -nE 's/.*call stacks: ([0-9]+) walked events copied.* ([0-9]+) counted on.*/\1 \2/p' \
		"$err" | head -1)
	awk -v ns="${ns:--}" -v c="${copies:-0 0}" \
		'/^cpu/ { cpu = $2 + $3 } END { printf "%s %.2f %s\n", ns, cpu, c }' "$tmp/time"
}

printf '%-14s %-6s %14s %12s %8s %10s\n' workload bytes "ns/run (BPF)" "profiler s" copied "ring full"
for prog in callers callers_nofp; do
	for bytes in 0 4096; do
		: >"$tmp/rows"
		for _ in $(seq "$runs"); do one "$prog" "$bytes" >>"$tmp/rows"; done
		[ -n "${CP_BENCH_DEBUG:-}" ] && cat "$tmp/rows" >&2
		printf '%-14s %-6s %14s %12s %8s %10s\n' "$prog" "$bytes" \
			"$(awk '{ print $1 }' "$tmp/rows" | median)" \
			"$(awk '{ print $2 }' "$tmp/rows" | median)" \
			"$(awk '{ print $3 }' "$tmp/rows" | median)" \
			"$(awk '{ print $4 }' "$tmp/rows" | median)"
	done
done
