#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The long soak: tests/e2e/test_soak.sh (make check runs it for 2 minutes)
# for hours. The profiler follows tests/workloads/churn (threads and
# processes created, allocating and exiting all the time); every 5 s its RSS
# and open fds are sampled; at the end the test checks that RSS after the
# first third is flat (15 % + 16 MiB), below --max-memory (+10 %), that fds
# did not grow, and prints the profiler's CPU time.
#
# usage (root):  tests/bench/soak.sh BUILD_DIR [SECONDS [MAX_MEMORY_MIB]]
#   tests/bench/soak.sh build 14400        # 4 hours
#   tests/bench/soak.sh build 3600 64      # 1 hour under a 64 MiB limit:
#                                          # the guard shrinks, RSS stays near it
# The RSS/fd samples are the "# RSS and fds every 5 s" line of its output.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CP_BUILD=$(cd "$build" && pwd) CP_ROOT=$root
export CP_SOAK_SECONDS=${2:-3600} CP_SOAK_MAX_MEMORY_MIB=${3:-256}
exec bash "$root/tests/e2e/test_soak.sh"
