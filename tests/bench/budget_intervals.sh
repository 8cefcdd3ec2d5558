#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The overhead budget over a minute: tests/e2e/test_budget.sh with its 60 s
# run of 4 threads of malloc/free (tests/workloads/malloc_churn) on this
# machine's CPUs, which asserts the whole run and every interval of 10 s at
# or under the budget and prints the Overhead budget section when not. make
# check runs it too; this runs test_budget alone, for repeated runs beside
# CPU hogs (docs/overhead.md).
#
# usage (root):  tests/bench/budget_intervals.sh BUILD_DIR
set -eu
build=${1:-${CP_BUILD:-build}}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CP_BUILD=$(cd "$build" && pwd) CP_ROOT=$root CP_BUDGET_LONG=1
exec bash "$root/tests/e2e/test_budget.sh"
