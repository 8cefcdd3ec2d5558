// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Rodinia NW's score matrix walked by columns: ints in rows of 2048 (8 KiB),
 * each cell from its upper neighbour, so a column's cells share one L1 set:
 * application conflict misses.
 * usage: nw_conflict [ROWS [SWEEPS]]
 */
#include "oracle_wl.h"

#define COLS	2048

int main(int argc, char **argv)
{
	long rows = wl_arg(argc, argv, 1, 48), sweeps = wl_arg(argc, argv, 2, 80);
	int (*m)[COLS] = calloc((size_t)rows, sizeof(*m)); /* ORACLE: OBJECT */

	for (long s = 0; s < sweeps; s++)
		for (long j = 0; j < COLS; j++)
			for (long i = 1; i < rows; i++)
				m[i][j] = m[i - 1][j] + (int)((i ^ j) & 3) - 1; /* ORACLE: ISSUE */
	printf("%d\n", m[rows - 1][COLS - 1]);
	free(m);
	return 0;
}
