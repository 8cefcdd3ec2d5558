// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Phoenix linear_regression: two threads sum their halves of the points into
 * per-thread structs of 40 bytes that main allocated as one array, so both
 * threads' sums share a cache line: application false sharing.
 * usage: lr_false_sharing [POINTS [ROUNDS]]
 */
#include "oracle_wl.h"

struct point {
	int x, y;
};

/* 56 bytes, as Phoenix's lreg_args: neighbours share lines wherever calloc puts them */
struct lr_args {
	const struct point *pts;
	long n;
	volatile long long sx, sy, sxx, syy, sxy;	/* volatile: stay in memory at -O1 */
};

static long rounds;

static void *lr_thread(void *p)
{
	struct lr_args *a = p;

	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < a->n; i++) {
			a->sx += a->pts[i].x; /* ORACLE: ISSUE */
			a->sy += a->pts[i].y;
			a->sxx += (long long)a->pts[i].x * a->pts[i].x;
			a->syy += (long long)a->pts[i].y * a->pts[i].y;
			a->sxy += (long long)a->pts[i].x * a->pts[i].y;
		}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 512);
	struct point *pts = malloc(2 * (size_t)n * sizeof(*pts));
	struct lr_args *args = calloc(2, sizeof(*args)); /* ORACLE: OBJECT */

	rounds = wl_arg(argc, argv, 2, 2000);
	for (long i = 0; i < 2 * n; i++)
		pts[i] = (struct point){ (int)(i % 97), (int)(i % 89) };
	for (int t = 0; t < 2; t++)
		args[t] = (struct lr_args){ .pts = pts + t * n, .n = n };
	wl_run(2, lr_thread, args, sizeof(*args));
	printf("%lld %lld\n", args[0].sxy, args[1].sxy);
	free(args);
	free(pts);
	return 0;
}
