// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * conflict: a column walk over a heap matrix whose rows are 4096 bytes
 * apart: with 64-byte lines and 64 L1 sets, every element of a column maps
 * to one set, and 192 rows are far more lines than the set has ways
 * (SRAD, paper Fig. 5). `--padded` makes the row stride 4160 bytes, an odd
 * number of lines: each row's element lands on a set of its own, and a
 * column's 192 lines (12 KiB) stay in L1 for the next column: the fix.
 *
 * usage: conflict [--padded] [SECONDS]   (default 3 s of CPU time)
 *
 * Lines the tests look for carry MARK comments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_wait.h"

#define ROWS	192
#define ROW	4096
#define LINE	64

/* One pass over the columns: every column walked top to bottom. */
static long walk(const char *m, size_t stride)
{
	long sum = 0;

	for (size_t j = 0; j < ROW; j += sizeof(long))
		for (size_t i = 0; i < ROWS; i++)
			sum += *(const volatile long *)(m + i * stride + j);	/* MARK: conflict-load */
	return sum;
}

int main(int argc, char **argv)
{
	size_t stride = ROW;
	int seconds = 3;
	long sum = 0, passes = 0;
	char *m;
	double end, cap;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--padded") == 0)
			stride = ROW + LINE;
		else
			seconds = atoi(argv[i]);
	}
	m = aligned_alloc(ROW, ROWS * stride);	/* MARK: conflict-alloc */
	if (!m)
		return 1;
	memset(m, 1, ROWS * stride);
	/* SECONDS of CPU time, at most ten times as long by the clock (cpu_wait.h) */
	for (end = cp_wl_clock_s(CLOCK_PROCESS_CPUTIME_ID) + seconds,
	     cap = cp_wl_clock_s(CLOCK_MONOTONIC) + 10.0 * seconds;
	     cp_wl_clock_s(CLOCK_PROCESS_CPUTIME_ID) < end && cp_wl_clock_s(CLOCK_MONOTONIC) < cap;
	     passes++)
		sum += walk(m, stride);
	printf("conflict: stride %zu, %ld passes, sum %ld\n", stride, passes, sum);
	free(m);
	return 0;
}
