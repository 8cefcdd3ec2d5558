#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What a live service pays for being profiled (root): Debian's redis-server
# (127.0.0.1 only, a free port, no persistence, --io-threads 2) driven by
# redis-benchmark (SET, GET, LPUSH, LPOP, INCR; 50 clients, pipelines of 4,
# 64-byte values), RUNS times without and RUNS times with
# `cacheperf-bpf -p PID` (default options: objects on, the 1 % budget)
# attached for the whole benchmark, alternating (unprofiled, profiled, ...).
# Each run gets a fresh server, stopped after it.
#
# One row per run: the benchmark's throughput (all its requests over the sum
# of its tests' times), each test's, the server's and the profiler's CPU
# time, the load average (the machine is shared); after a profiled run, what
# its report says: the heap objects it names with sizes, allocation events,
# guard back-offs and the budget's estimate. Last, the median of the runs'
# ratios profiled / unprofiled (each profiled run against the unprofiled run
# before it) against the goal ("Live services pay at most 1 %"): >= 0.98,
# marked "<0.98" when missed.
#
#   tests/bench/live_service.sh [RUNS [REQUESTS]]
#     RUNS      runs each way (default 5, 1..31)
#     REQUESTS  requests per redis-benchmark test (default 200000, 1000..10000000)
#   $CP_BUILD   where the profiler is (default build)
#   $CP_BENCH_ARGS  more profiler options, to compare (default: none)
#   $CP_BENCH_KEEP  a directory to copy the reports and logs to (default: none)
#
# Bounded: each benchmark runs under `timeout 300`, the profiler with -d 900,
# every wait polls a bounded number of times; the EXIT trap stops the server
# and the profiler.
set -u
build=${CP_BUILD:-build}
runs=${1:-5}
requests=${2:-200000}
bin=$build/cacheperf-bpf
goal=0.98
tests=set,get,lpush,lpop,incr

die() { echo "live_service: $*" >&2; exit 2; }
case $runs in '' | *[!0-9]*) die "RUNS must be 1..31" ;; esac
case $requests in '' | *[!0-9]*) die "REQUESTS must be 1000..10000000" ;; esac
if [ "$runs" -lt 1 ] || [ "$runs" -gt 31 ]; then die "RUNS must be 1..31"; fi
if [ "$requests" -lt 1000 ] || [ "$requests" -gt 10000000 ]; then
	die "REQUESTS must be 1000..10000000"
fi
[ "$(id -u)" -eq 0 ] || die "needs root (the profiler)"
[ -x "$bin" ] || die "$bin is not built: make BUILD=$build"
# shellcheck source=tests/bench/redis_lib.sh
. "$(dirname "$0")/redis_lib.sh"
need_redis

work=$(mktemp -d /tmp/cp-live-service.XXXXXX) || die "cannot make a temporary directory"
srv='' prof=''
cleanup() {
	stop "$prof" INT 600
	stop "$srv" TERM
	if [ -n "${CP_BENCH_KEEP:-}" ]; then
		mkdir -p "$CP_BENCH_KEEP" && cp "$work"/* "$CP_BENCH_KEEP"/ 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Whether PID has a perf event open.
has_perf_event() { # PID
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[perf_event]" ] && return 0
	done
	return 1
}

# Starts the profiler on the server and waits until its probes are attached:
# the budget line (a notice) is printed after calibration, then the sampling
# events open.
start_profiler() { # RUN
	# shellcheck disable=SC2086 # $CP_BENCH_ARGS: extra options, word-split
	"$bin" -p "$srv" --log-level notice ${CP_BENCH_ARGS:-} -d 900 -o "$work/report-$1.txt" 2>"$work/profiler-$1.err" &
	prof=$!
	for _ in $(seq 300); do
		kill -0 "$prof" 2>/dev/null || { cat "$work/profiler-$1.err" >&2; die "the profiler exited at start"; }
		if grep -q "overhead budget" "$work/profiler-$1.err" && has_perf_event "$prof"; then
			sleep 1	# the allocation probes attach after the sampling events
			return 0
		fi
		sleep 0.1
	done
	die "the profiler did not attach within 30 s"
}

# redis-benchmark's CSV: "TEST","RPS",... -> "total_rps SET GET INCR LPUSH LPOP" (krps):
# the total is all requests over the sum of the tests' times (n/rps each).
throughput() { # CSV
	awk -F'"' 'NR > 1 && $4 > 0 { t[$2] = $4; inv += 1 / $4; n++ }
		END { if (n != 5) exit 1
		      printf "%.1f %.1f %.1f %.1f %.1f %.1f\n", n / inv / 1e3, t["SET"] / 1e3,
			     t["GET"] / 1e3, t["INCR"] / 1e3, t["LPUSH"] / 1e3, t["LPOP"] / 1e3 }' "$1"
}

# What a profiled run's report says about heap objects, allocations and the budget.
report_facts() { # REPORT
	awk '
		/^Objects with the most samples/ { obj = 1; next }
		obj && /^$/ { obj = 0 }
		obj && /heap object \(/ { heap++; if (!first) { first = $0; sub(/^ +/, "", first) } }
		obj && /allocated (before attach or )?while allocation probes were backed off/ { anon++ }
		obj { listed++ }
		/allocation events:/ { sub(/^ +/, ""); ev = $0 }
		/allocation guard back-offs:/ { sub(/^ +/, ""); sub(/;.*/, ""); bo = $0 }
		/estimated spent:/ { sub(/^ +/, ""); spent = $0 }
		END {
			printf "      objects listed %d: heap objects named with sizes %d, unknown memory " \
			       "(allocated before attach or while backed off) %d\n", listed, heap, anon
			if (first) printf "      first heap object: %.150s\n", first
			printf "      %s; %s\n      %s\n", ev ? ev : "no allocation events line",
			       bo ? bo : "no back-off line", spent ? spent : "no budget line"
		}' "$1"
}

run_once() { # RUN PROFILED(0/1)
	local r=$1 profiled=$2 csv=$work/bench-$1-$2.csv tp srv_cpu prof_cpu=- ratio mark=''
	local tot set get incr lpush lpop
	start_server "$r-$profiled"
	[ "$profiled" = 1 ] && start_profiler "$r"
	if ! timeout 300 redis-benchmark -h 127.0.0.1 -p "$port" -t "$tests" -c 50 -P 4 -d 64 \
		-n "$requests" --csv >"$csv" 2>"$work/bench-$r-$profiled.err"; then
		cat "$work/bench-$r-$profiled.err" >&2
		die "redis-benchmark failed or timed out (run $r)"
	fi
	srv_cpu=$(cpu_of "$srv")
	if [ "$profiled" = 1 ]; then
		prof_cpu=$(cpu_of "$prof")
		stop "$prof" INT 600
		prof=
	fi
	stop "$srv" TERM
	srv=
	tp=$(throughput "$csv") || die "cannot read redis-benchmark's output ($csv)"
	read -r tot set get incr lpush lpop <<<"$tp"
	if [ "$profiled" = 1 ]; then
		ratio=$(awk -v a="$tot" -v b="$last_plain" 'BEGIN { printf "%.3f", a / b }')
		ratios+=("$ratio")
		mark=$(awk -v x="$ratio" -v g="$goal" 'BEGIN { print (x >= g ? ">=" : "<") g }')
		prof_tp+=("$tot")
	else
		ratio=1.000
		last_plain=$tot
		plain_tp+=("$tot")
	fi
	printf '%3d  %-10s %8s %7s %7s %7s %7s %7s %7s %8s %8s %6s %6s\n' "$r" \
		"$([ "$profiled" = 1 ] && echo profiled || echo plain)" "$tot" "$set" "$get" "$incr" "$lpush" "$lpop" \
		"$srv_cpu" "$prof_cpu" "$ratio" "$mark" "$(cut -d' ' -f1 /proc/loadavg)"
	if [ "$profiled" = 1 ]; then
		report_facts "$work/report-$r.txt"
		grep -h 'warning' "$work/profiler-$r.err" | sed 's/^/      stderr: /' | cut -c1-160
	fi
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int(NR / 2) + 1] }'; }

echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*malloc=\([^ ]*\).*/\1, malloc=\2/'); " \
	"redis-benchmark -t $tests -c 50 -P 4 -d 64 -n $requests; $runs runs each way"
printf '%3s  %-10s %8s %7s %7s %7s %7s %7s %7s %8s %8s %6s %6s\n' run mode krps SET GET INCR \
	LPUSH LPOP srv_cpu prof_cpu ratio goal load
plain_tp=() prof_tp=() ratios=() last_plain=
for r in $(seq "$runs"); do
	run_once "$r" 0
	run_once "$r" 1
done
med=$(median "${ratios[@]}")
mark=$(awk -v x="$med" -v g="$goal" 'BEGIN { print (x >= g ? ">=" : "<") g }')
echo "median of $runs: unprofiled $(median "${plain_tp[@]}") krps, profiled $(median "${prof_tp[@]}") krps;" \
	"ratio profiled / unprofiled $med ($mark; goal >= $goal); load average now $(cut -d' ' -f1-3 /proc/loadavg)"
