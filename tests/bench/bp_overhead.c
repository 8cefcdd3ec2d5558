// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Overhead of breakpoint sampling on a hot conflicting loop (root):
 * tests/workloads/bp_hot times its passes after the first ("loop_ns"),
 * run ROUNDS times each way, interleaved:
 *
 *   plain        unprofiled
 *   profiled     cacheperf-bpf --source faults -- bp_hot (breakpoints at the
 *                default budget: its 16 walking loads are armed, settle or fill)
 *   no bp        the same with --max-bp-rate 0: the rest of the profiler
 *
 * and prints the medians and their ratios to the unprofiled median. Goal:
 * profiled / plain <= 1.05. The page-fault source is the
 * sampling source here (no PMU on our machines); it samples the first pass
 * only, which is outside the timed loop.
 *
 * usage: bp_overhead [ROUNDS [PASSES]]   (default 7 rounds, 200000 passes)
 * Binaries are looked up in $CP_BUILD (default: build).
 */
#include <stdio.h>
#include <stdlib.h>

#include "loop_rounds.h"

enum mode { PLAIN, PROFILED, NO_BP, NR_MODES };

static const char *const mode_name[NR_MODES] = {
	"plain (unprofiled)", "profiled, breakpoints", "profiled, --max-bp-rate 0",
};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	long passes = argc > 2 ? atol(argv[2]) : 200000;
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	char cmds[NR_MODES][CP_BENCH_CMD_LEN];

	if (rounds < 1 || rounds > CP_BENCH_MAX_ROUNDS || passes < 2) {
		fprintf(stderr, "usage: bp_overhead [ROUNDS (1-%d) [PASSES (>= 2)]]\n",
			CP_BENCH_MAX_ROUNDS);
		return 2;
	}
	snprintf(cmds[PLAIN], sizeof(cmds[PLAIN]), "%s/tests/workloads/bp_hot %ld", build, passes);
	for (int m = PROFILED; m < NR_MODES; m++)
		snprintf(cmds[m], sizeof(cmds[m]),
			 "%s/cacheperf-bpf --source faults%s -- %s/tests/workloads/bp_hot %ld 2>/dev/null",
			 build, m == NO_BP ? " --max-bp-rate 0" : "", build, passes);
	if (cp_bench_loop_rounds("bp_overhead", "loop_ns", mode_name, cmds, NR_MODES, rounds))
		return 1;
	printf("median of %d rounds x %ld passes; goal: profiled <= 1.05 x plain\n", rounds,
	       passes);
	return 0;
}
