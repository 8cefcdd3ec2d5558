#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make demo`: show what this machine can sample, then profile a bundled
# workload with a known cache problem (two threads false-sharing one line)
# and print the report. Run as root.
set -u
build=${1:-build}
bin=$build/cacheperf-bpf
wl=$build/tests/workloads/false_sharing

echo "== cacheperf-bpf --probe"
"$bin" --probe || exit $?
echo
echo "== cacheperf-bpf -d 5 -- $wl 4"
"$bin" -d 5 -- "$wl" 4
rc=$?
if [ "$rc" -ne 0 ]; then
	echo
	echo "demo: the profiler exited with status $rc (see the message above)."
	echo "demo: on a machine without a PMU the timer-driven 'soft' source is needed;"
	echo "demo: --probe above lists what this machine offers."
	# The demo has shown what it can on this machine; a failure to build or to
	# probe has already exited non-zero above.
	[ "$rc" -eq 1 ] && exit 0
fi
exit "$rc"
