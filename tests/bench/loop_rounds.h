/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Overhead benches that run a workload which times its own loop (a line
 * "KEY N", N in ns, on stdout: "loop_ns" wall-clock, "loop_cpu_ns" CPU time)
 * under several command lines, interleaved round by round, and print each
 * command's median and its ratio to the first (unprofiled) one. Header-only.
 */
#ifndef CP_BENCH_LOOP_ROUNDS_H
#define CP_BENCH_LOOP_ROUNDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "median.h"

#define CP_BENCH_MAX_ROUNDS	31
#define CP_BENCH_MAX_MODES	5
#define CP_BENCH_CMD_LEN	1024

/* The value of "@key N" shell command @cmd printed; -1 when it failed or printed none. */
static inline double cp_bench_loop_ns(const char *cmd, const char *key)
{
	size_t len = strlen(key);
	char line[256];
	double ns = -1;
	FILE *p = popen(cmd, "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, key, len) && line[len] == ' ')
			ns = atof(line + len + 1);
	if (pclose(p) != 0)
		return -1;
	return ns;
}

/* Called after each run with its round, mode and value (@ns[@m][@r]), e.g. to print a row. */
typedef void (*cp_bench_run_fn)(int r, int m, double ns[][CP_BENCH_MAX_ROUNDS], void *ctx);

/*
 * Runs @cmds[0..@nr) @rounds times, interleaved (round 0: every command in
 * order, then round 1...), and keeps the value of @key each printed in
 * @ns[mode][round]; @each (may be NULL) is called after each run. Returns
 * 0, or 1 after naming the command that failed (@tool: the bench's name).
 */
static inline int cp_bench_loop_collect(const char *tool, const char *key, const char *const *names,
					char cmds[][CP_BENCH_CMD_LEN], int nr, int rounds,
					double ns[][CP_BENCH_MAX_ROUNDS], cp_bench_run_fn each,
					void *ctx)
{
	for (int r = 0; r < rounds; r++) {
		for (int m = 0; m < nr; m++) {
			ns[m][r] = cp_bench_loop_ns(cmds[m], key);
			/* once more: perf record now and then fails on this busy VM */
			if (ns[m][r] < 0)
				ns[m][r] = cp_bench_loop_ns(cmds[m], key);
			if (ns[m][r] < 0) {
				fprintf(stderr, "%s: %s failed (root? built?): %s\n", tool, names[m],
					cmds[m]);
				return 1;
			}
			if (each)
				each(r, m, ns, ctx);
		}
	}
	return 0;
}

/*
 * Runs @cmds[0..@nr) @rounds times, interleaved, and prints the table
 * (mode @names, median of @key in ms, ratio to @cmds[0]). Returns 0, or 1
 * after naming the command that failed (@tool: the bench's name).
 */
static inline int cp_bench_loop_rounds(const char *tool, const char *key, const char *const *names,
				       char cmds[][CP_BENCH_CMD_LEN], int nr, int rounds)
{
	double ns[CP_BENCH_MAX_MODES][CP_BENCH_MAX_ROUNDS], med[CP_BENCH_MAX_MODES];

	if (cp_bench_loop_collect(tool, key, names, cmds, nr, rounds, ns, NULL, NULL))
		return 1;
	printf("%-34s %12s %8s\n", "mode", key, "ratio");
	for (int m = 0; m < nr; m++) {
		med[m] = cp_bench_median(ns[m], rounds);
		printf("%-34s %12.1f %8.3f\n", names[m], med[m] / 1e6, med[m] / med[0]);
	}
	return 0;
}

#endif /* CP_BENCH_LOOP_ROUNDS_H */
