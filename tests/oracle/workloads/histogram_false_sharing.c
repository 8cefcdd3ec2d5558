// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Phoenix histogram: two threads count their pixels' red values into their
 * own slots of one global array of small per-thread totals, which share a
 * line: application false sharing on a global.
 * usage: histogram_false_sharing [PIXELS [ROUNDS]]
 */
#include "oracle_wl.h"

static long totals[2][4]; /* ORACLE: OBJECT */

struct hist_args {
	int id;
	const unsigned char *px;
	long n, rounds;
};

static void *hist_thread(void *p)
{
	struct hist_args *a = p;

	for (long r = 0; r < a->rounds; r++)
		for (long i = 0; i < a->n; i++)
			totals[a->id][a->px[i] & 3]++; /* ORACLE: ISSUE */
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 1024), rounds = wl_arg(argc, argv, 2, 3000);
	unsigned char *px = malloc(2 * (size_t)n);
	struct hist_args args[2];

	for (long i = 0; i < 2 * n; i++)
		px[i] = (unsigned char)(i * 7);
	for (int t = 0; t < 2; t++)
		args[t] = (struct hist_args){ .id = t, .px = px + t * n, .n = n, .rounds = rounds };
	wl_run(2, hist_thread, args, sizeof(args[0]));
	printf("%ld %ld\n", totals[0][0], totals[1][0]);
	free(px);
	return 0;
}
