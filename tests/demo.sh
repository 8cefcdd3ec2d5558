#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make demo`: show what this machine can sample, profile a bundled workload
# with a known cache problem (two threads false-sharing one line), and, where
# no cache source runs here, check the whole pipeline with the page-fault
# source on a workload that touches known pages. Run as root.
set -u
build=${1:-build}
bin=$build/cacheperf-bpf
wl=$build/tests/workloads

echo "== cacheperf-bpf --probe"
"$bin" --probe || exit $?
echo
echo "== cacheperf-bpf -d 10 -- $wl/false_sharing 3"
"$bin" -d 10 -- "$wl/false_sharing" 3
rc=$?
[ "$rc" -eq 0 ] && exit 0
if [ "$rc" -ne 1 ]; then
	echo "demo: the profiler failed with status $rc" >&2
	exit "$rc"
fi
echo
echo "demo: no cache-miss source runs on this machine (see the reason above):"
echo "demo: PEBS and IBS need a hardware PMU, and the timer-driven source for"
echo "demo: machines without one (--source soft) is not in this version yet."
echo "demo: The pipeline itself (BPF programs, per-thread events, ring buffer,"
echo "demo: per-instruction counters, report) is checked here with page faults:"
echo
echo "== cacheperf-bpf --source faults -- $wl/touch_pages 256"
echo go | "$bin" --source faults -- "$wl/touch_pages" 256
