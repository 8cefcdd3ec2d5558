// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * IRS-style streaming: a sweep reads 8 arrays of 16 KiB each, 128 KiB in all,
 * four times the L1D, again and again: capacity misses, the application's.
 * usage: irs_capacity [DOUBLES_PER_ARRAY [SWEEPS]]
 */
#include "oracle_wl.h"

#define ARRAYS	8

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 2048), sweeps = wl_arg(argc, argv, 2, 4000);
	double *a[ARRAYS], sum = 0;

	for (int k = 0; k < ARRAYS; k++) {
		a[k] = malloc((size_t)n * sizeof(double)); /* ORACLE: OBJECT */
		for (long i = 0; i < n; i++)
			a[k][i] = (double)(i + k);
	}
	for (long s = 0; s < sweeps; s++)
		for (int k = 0; k < ARRAYS; k++)
			for (long i = 0; i < n; i += 8)
				sum += a[k][i]; /* ORACLE: ISSUE */
	printf("%f\n", sum);
	for (int k = 0; k < ARRAYS; k++)
		free(a[k]);
	return 0;
}
