// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Streamcluster's small sharing: two threads work on private data that fits
 * in L1, and now and then add to a shared work counter. The sharing misses
 * are real but far below the paper's thresholds: nothing to report.
 * usage: streamcluster_small [ITERATIONS [EVERY]]
 */
#include "oracle_wl.h"

static long work_done;

struct sc_args {
	long iters, every;
	double local[512];
};

static void *sc_thread(void *p)
{
	struct sc_args *a = p;

	for (long i = 0; i < a->iters; i++) {
		a->local[i & 511] += a->local[(i * 7) & 511] * 0.5;
		if (i % a->every == 0)
			__atomic_fetch_add(&work_done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct sc_args args[2];

	for (int t = 0; t < 2; t++) {
		args[t].iters = wl_arg(argc, argv, 1, 600000);
		args[t].every = wl_arg(argc, argv, 2, 2000);
	}
	wl_run(2, sc_thread, args, sizeof(args[0]));
	printf("%ld\n", work_done);
	return 0;
}
