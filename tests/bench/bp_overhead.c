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
 * and prints the medians and their ratios to the unprofiled median. Goal
 * (issue 6): profiled / plain <= 1.05. The page-fault source is the
 * sampling source here (no PMU on our machines); it samples the first pass
 * only, which is outside the timed loop.
 *
 * usage: bp_overhead [ROUNDS [PASSES]]   (default 7 rounds, 200000 passes)
 * Binaries are looked up in $CP_BUILD (default: build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "median.h"

#define MAX_ROUNDS	31

enum mode { PLAIN, PROFILED, NO_BP, NR_MODES };

static const char *const mode_name[NR_MODES] = {
	"plain (unprofiled)", "profiled, breakpoints", "profiled, --max-bp-rate 0",
};

/* The workload's loop time under @mode, in ns; -1 on failure. */
static double run(const char *build, enum mode mode, long passes)
{
	char cmd[1024], line[256];
	double ns = -1;
	FILE *p;

	if (mode == PLAIN)
		snprintf(cmd, sizeof(cmd), "%s/tests/workloads/bp_hot %ld", build, passes);
	else
		snprintf(cmd, sizeof(cmd),
			 "%s/cacheperf-bpf --source faults%s -- %s/tests/workloads/bp_hot %ld 2>/dev/null",
			 build, mode == NO_BP ? " --max-bp-rate 0" : "", build, passes);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "loop_ns ", 8))
			ns = atof(line + 8);
	if (pclose(p) != 0)
		return -1;
	return ns;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	long passes = argc > 2 ? atol(argv[2]) : 200000;
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	double ns[NR_MODES][MAX_ROUNDS], med[NR_MODES];

	if (rounds < 1 || rounds > MAX_ROUNDS || passes < 2) {
		fprintf(stderr, "usage: bp_overhead [ROUNDS (1-%d) [PASSES (>= 2)]]\n", MAX_ROUNDS);
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		for (int m = 0; m < NR_MODES; m++) {
			ns[m][r] = run(build, (enum mode)m, passes);
			if (ns[m][r] < 0) {
				fprintf(stderr, "bp_overhead: %s failed (root? built?)\n", mode_name[m]);
				return 1;
			}
		}
	}
	printf("%-28s %12s %8s\n", "mode", "loop ms", "ratio");
	for (int m = 0; m < NR_MODES; m++) {
		med[m] = cp_bench_median(ns[m], rounds);
		printf("%-28s %12.1f %8.3f\n", mode_name[m], med[m] / 1e6, med[m] / med[PLAIN]);
	}
	printf("median of %d rounds x %ld passes; goal: profiled <= 1.05 x plain\n", rounds,
	       passes);
	return 0;
}
