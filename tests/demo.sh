#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make demo`: show what this machine can sample, then profile bundled
# workloads with --source auto: PEBS or IBS where the machine has them, else
# the timer-driven source for machines without a PMU (--source soft), which
# samples exact addresses without cache levels. Run as root.
set -u
build=${1:-build}
bin=$build/cacheperf-bpf
wl=$build/tests/workloads

run() {
	echo
	echo "== cacheperf-bpf $*"
	"$bin" "$@"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "demo: the profiler failed with status $rc" >&2
		exit "$rc"
	fi
}

echo "== cacheperf-bpf --probe"
"$bin" --probe || exit $?
# two threads false-sharing one line of a heap struct
run --source auto -d 10 -- "$wl/false_sharing" 3
# a loop storing into a global array and loading from a 64 MiB heap buffer
run --source auto -- "$wl/soft_loop" mem 2000
