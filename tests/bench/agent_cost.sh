#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What the profiler itself costs (root; issue "The agent's own cost"): its
# own CPU time and memory as its JSON report states them (docs/overhead.md,
# "The profiler's own cost"), with its CPU time read from /proc/PID/stat too,
# in two cases, RUNS runs each, alternating:
#
#  redis  `-p PID` (default options) on a fresh Debian redis-server
#         (127.0.0.1, a free port, no persistence, --io-threads 2) while
#         redis-benchmark loops over SET, GET, LPUSH, LPOP, INCR (50 clients,
#         pipelines of 4, 64-byte values); goal: steady state <= 1 % of one CPU.
#  build  `-a` (default options) while `make -j2` builds a copy of this
#         project (git archive of HEAD in a temporary directory, cleaned
#         before each run) and a loop starts short processes (/bin/true,
#         `sh -c :`, tests/workloads/no_malloc, as tests/e2e/test_logs.sh
#         does; about 20 a second); goal: steady state <= 3 % of one CPU.
#
# Each run profiles for SECONDS (-d) after its start-up; the start-up's CPU
# time (loading, calibration, attaching) is the third figure, goal <= 0.5 s,
# over both cases. One row per run, then the medians against the goals,
# "over" where missed. The machine may be shared: each row has the load
# average.
#
#   tests/bench/agent_cost.sh [RUNS [SECONDS]]
#     RUNS      runs per case (default 3, 1..15)
#     SECONDS   profiled seconds per run (default 20, 5..600)
#   $CP_BUILD        where the profiler is (default build)
#   $CP_BENCH_CASES  which cases to run (default "redis build"; a median of a
#                    case not run is not printed)
#   $CP_BENCH_ARGS   more profiler options, word-split (default none; e.g.
#                    "--overhead 0" to compare two builds at the same tick rate)
#   $CP_BENCH_KEEP   a directory to copy the reports and logs to (default: none)
#   $CP_BENCH_PERF   a directory: each profiler runs under `perf record -g`
#                    ($CP_BENCH_PERF_OPTS, default "-g -F 999"), one file a run
#
# Bounded: the profiler runs with -d SECONDS and is stopped 120 s after it
# should have ended; every wait polls a bounded number of times; the EXIT
# trap stops the server, the benchmark, the build and the process loop.
set -u
build=${CP_BUILD:-build}
runs=${1:-3}
secs=${2:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/cacheperf-bpf
wl=$build/tests/workloads

die() { echo "agent_cost: $*" >&2; exit 2; }
case $runs in '' | *[!0-9]*) die "RUNS must be 1..15" ;; esac
case $secs in '' | *[!0-9]*) die "SECONDS must be 5..600" ;; esac
if [ "$runs" -lt 1 ] || [ "$runs" -gt 15 ]; then die "RUNS must be 1..15"; fi
if [ "$secs" -lt 5 ] || [ "$secs" -gt 600 ]; then die "SECONDS must be 5..600"; fi
cases=${CP_BENCH_CASES:-redis build}
for c in $cases; do
	case $c in redis | build) ;; *) die "CP_BENCH_CASES: unknown case $c (redis, build)" ;; esac
done
want() { case " $cases " in *" $1 "*) return 0 ;; esac; return 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (the profiler)"
[ -x "$bin" ] || die "$bin is not built: make BUILD=$build"
[ -x "$wl/no_malloc" ] || die "$wl/no_malloc is not built: make BUILD=$build tests"
# shellcheck source=tests/bench/redis_lib.sh
. "$(dirname "$0")/redis_lib.sh"
need_redis
for c in git make python3 setsid; do command -v "$c" >/dev/null || die "$c is not installed"; done
if [ -n "${CP_BENCH_PERF:-}" ]; then
	command -v perf >/dev/null || die "perf is not installed (linux-perf)"
	mkdir -p "$CP_BENCH_PERF" || die "cannot make $CP_BENCH_PERF"
fi

work=$(mktemp -d /tmp/cp-agent-cost.XXXXXX) || die "cannot make a temporary directory"
srv='' bm='' prof='' mk='' loop=''
cleanup() {
	stop "$prof" INT 600
	stop "$bm" TERM
	stop "$srv" TERM
	[ -n "$mk" ] && kill -TERM -- "-$mk" 2>/dev/null && wait "$mk" 2>/dev/null
	stop "$loop" TERM
	if [ -n "${CP_BENCH_KEEP:-}" ]; then
		mkdir -p "$CP_BENCH_KEEP" && cp "$work"/*.json "$work"/*.txt "$work"/*.err \
			"$CP_BENCH_KEEP"/ 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs the profiler with ARGS for $secs (under perf with $CP_BENCH_PERF) and
# waits for its end: sets out_cpu, its CPU time in /proc/PID/stat at the
# last reading before it exited (within 0.2 s of its end).
profile() { # NAME ARGS...
	local name=$1 pid c
	shift
	# shellcheck disable=SC2206 # options, word-split
	local cmd=("$bin" "$@" ${CP_BENCH_ARGS:-} -d "$secs" --log-level notice
		--json "$work/$name.json" -o "$work/$name.txt")
	if [ -n "${CP_BENCH_PERF:-}" ]; then
		# shellcheck disable=SC2086 # options, word-split
		perf record ${CP_BENCH_PERF_OPTS:--g -F 999} -o "$CP_BENCH_PERF/$name.data" -- \
			"${cmd[@]}" 2>"$work/$name.err" &
		prof=$!
		for _ in $(seq 50); do
			pid=$(pgrep -P "$prof" | head -1)
			[ -n "$pid" ] && break
			sleep 0.1
		done
	else
		"${cmd[@]}" 2>"$work/$name.err" &
		prof=$!
		pid=$prof
	fi
	out_cpu=?
	for _ in $(seq $(((secs + 120) * 5))); do
		kill -0 "$pid" 2>/dev/null || break
		c=$(cpu_of "$pid")
		[ "$c" = "?" ] || out_cpu=$c
		sleep 0.2
	done
	stop "$prof" INT 600
	prof=
	[ -s "$work/$name.json" ] || { cat "$work/$name.err" >&2; die "$name: no report"; }
}

# The "agent" figures of a JSON report: startup_cpu_s startup_wall_s
# steady_cpu_s steady_wall_s steady_cpu_pct memory_MiB peak_MiB counter.
agent_of() { # JSON
	python3 - "$1" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])).get("agent") or sys.exit("no agent object")
mib = lambda b: "%.1f" % (b / 1048576) if b is not None else "?"
print("%.3f %s %.3f %.1f %.2f %s %s %s" % (a["startup_cpu_s"], a["startup_wall_s"],
      a["steady_cpu_s"], a["steady_wall_s"], a["steady_cpu_pct"], mib(a["memory_bytes"]),
      mib(a["peak_memory_bytes"]), (a["memory_counter"] or "?").replace(" ", "_")))
PY
}

row() { # RUN CASE JSON
	local f
	f=$(agent_of "$3") || die "$3: no agent figures"
	read -r st stw sd sdw pct mem peak counter <<<"$f"
	printf '%3d  %-6s %8s %8s %8s %8s %7s %8s %8s %8s %6s  %s\n' "$1" "$2" "$st" "$stw" "$sd" \
		"$sdw" "$pct" "$mem" "$peak" "$out_cpu" "$(cut -d' ' -f1 /proc/loadavg)" "$counter"
	startups+=("$st")
	[ "$2" = redis ] && redis_pct+=("$pct")
	[ "$2" = build ] && build_pct+=("$pct")
}

run_redis() { # RUN
	start_server "$1"
	timeout $((secs + 300)) redis-benchmark -h 127.0.0.1 -p "$port" -t set,get,lpush,lpop,incr \
		-c 50 -P 4 -d 64 -l -q >/dev/null 2>"$work/bench-$1.err" &
	bm=$!
	sleep 1
	kill -0 "$bm" 2>/dev/null || { cat "$work/bench-$1.err" >&2; die "redis-benchmark did not start"; }
	profile "redis-$1" -p "$srv"
	stop "$bm" TERM
	stop "$srv" TERM
	bm='' srv=''
	row "$1" redis "$work/redis-$1.json"
}

# Short processes, about 20 a second, until stopped.
short_processes() {
	while :; do
		/bin/true
		sh -c :
		"$wl/no_malloc" 0
		sleep 0.1
	done
}

run_build() { # RUN
	make -C "$work/src" clean >/dev/null 2>&1
	setsid make -C "$work/src" -j2 >"$work/make-$1.log" 2>&1 &
	mk=$!
	short_processes >/dev/null 2>&1 &
	loop=$!
	sleep 2 # the build under way
	kill -0 "$mk" 2>/dev/null || { tail "$work/make-$1.log" >&2; die "the build ended at once"; }
	profile "build-$1" -a
	kill -TERM -- "-$mk" 2>/dev/null
	wait "$mk" 2>/dev/null
	stop "$loop" TERM
	mk='' loop=''
	row "$1" build "$work/build-$1.json"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
verdict() { awk -v x="$1" -v g="$2" 'BEGIN { print (x <= g ? "met" : "over") }'; }

if want build; then
	mkdir "$work/src" && git -C "$root" archive HEAD | tar -x -C "$work/src" ||
		die "cannot copy the project (git archive HEAD)"
fi
echo "agent_cost: $runs runs per case, -d $secs; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# start: CPU s and s of time; steady: CPU s, s of time, % of one CPU; memory now and
# peak; the CPU s /proc/PID/stat showed last (start-up and steady, and some of the end)
printf '%3s  %-6s %8s %8s %8s %8s %7s %8s %8s %8s %6s  %s\n' run case start_s start_t steady_s \
	steady_t pct mem_MiB peak_MiB outside load counter
startups=() redis_pct=() build_pct=()
for r in $(seq "$runs"); do
	want redis && run_redis "$r"
	want build && run_build "$r"
done
if want redis; then
	m=$(median "${redis_pct[@]}")
	echo "median of $runs: -p redis-server under redis-benchmark: steady $m % of one CPU (goal <= 1 %: $(verdict "$m" 1))"
fi
if want build; then
	m=$(median "${build_pct[@]}")
	echo "median of $runs: -a during make -j2 and short processes: steady $m % of one CPU (goal <= 3 %: $(verdict "$m" 3))"
fi
m=$(median "${startups[@]}")
echo "median of ${#startups[@]}: start-up $m s of CPU (goal <= 0.5 s: $(verdict "$m" 0.5)); load average now $(cut -d' ' -f1-3 /proc/loadavg)"
