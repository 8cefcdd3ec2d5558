// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PolyBench ADI's column sweep: rows of 1024 doubles (8 KiB, a multiple of
 * the L1's 4 KiB set stride), walked down a column, so every row's element
 * lands on the same L1 set: application conflict misses in one array.
 * usage: adi_conflict [ROWS [SWEEPS]]
 */
#include "oracle_wl.h"

#define COLS	1024

int main(int argc, char **argv)
{
	long rows = wl_arg(argc, argv, 1, 64), sweeps = wl_arg(argc, argv, 2, 100);
	double (*x)[COLS] = malloc((size_t)rows * sizeof(*x)); /* ORACLE: OBJECT */

	for (long i = 0; i < rows; i++)
		for (long j = 0; j < COLS; j++)
			x[i][j] = (double)(i + j);
	for (long s = 0; s < sweeps; s++)
		for (long j = 0; j < COLS; j++)
			for (long i = 1; i < rows; i++)
				x[i][j] -= x[i - 1][j] * 0.5; /* ORACLE: ISSUE */
	printf("%f\n", x[rows - 1][COLS - 1]);
	free(x);
	return 0;
}
