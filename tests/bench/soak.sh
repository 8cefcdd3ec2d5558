#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The long soak: tests/e2e/test_soak.sh (make check runs it for 2 minutes
# on a followed command) for hours, on the whole machine: `-a` with the
# default options while tests/workloads/churn runs beside it (threads and
# processes created, allocating and exiting all the time), and whatever else
# the machine runs. Every 5 s the profiler's RSS and open fds are sampled and
# its Prometheus file read; at the end the test checks that RSS after the
# warm-up (half the run) is flat, below --max-memory (+10 %), that fds did not
# grow, that the stack errors stopped growing, that the estimate was at or
# under the budget in every reading, and prints the profiler's CPU time.
# CP_SOAK_ALL=0 soaks the followed command (`-- churn`) instead, as make check.
#
# usage (root):  tests/bench/soak.sh BUILD_DIR [SECONDS [MAX_MEMORY_MIB]]
#   tests/bench/soak.sh build 14400        # 4 hours
#   tests/bench/soak.sh build 3600 64      # 1 hour under a 64 MiB limit:
#                                          # the guard shrinks, RSS stays near it
# The samples are the "# RSS and fds every 5 s" line of its output: time,
# RSS, fds, then (-a) stack errors, the run's estimate and the costliest
# interval's.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CP_BUILD=$(cd "$build" && pwd) CP_ROOT=$root
export CP_SOAK_SECONDS=${2:-3600} CP_SOAK_MAX_MEMORY_MIB=${3:-256} CP_SOAK_ALL=${CP_SOAK_ALL:-1}
exec bash "$root/tests/e2e/test_soak.sh"
