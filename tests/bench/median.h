/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Medians of bench rounds: this VM is noisy, single runs say little. Header-only. */
#ifndef CP_BENCH_MEDIAN_H
#define CP_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int cp_bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @v[0..@n) (n > 0), which is sorted in place. */
static inline double cp_bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cp_bench_cmp_double);
	return v[n / 2];
}

#endif /* CP_BENCH_MEDIAN_H */
