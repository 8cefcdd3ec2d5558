// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hoard's cache-scratch: main allocates one small object per thread, next to
 * each other; each thread frees its object and allocates one of the same
 * size, which the allocator hands back from the same spot (glibc's tcache),
 * then writes it over and over: the threads' objects share a line because of
 * where the allocator put them: allocator false sharing.
 * usage: cache_scratch [ROUNDS [WRITES]]
 */
#include "oracle_wl.h"

struct scratch_args {
	char *obj;
	long rounds, writes;
};

static void *scratch_thread(void *p)
{
	struct scratch_args *a = p;

	free(a->obj);
	for (long r = 0; r < a->rounds; r++) {
		char *o = malloc(24); /* ORACLE: OBJECT */

		for (long w = 0; w < a->writes; w++)
			for (int k = 0; k < 24; k++)
				o[k] = (char)(o[k] + w); /* ORACLE: ISSUE */
		free(o);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = wl_arg(argc, argv, 1, 200), writes = wl_arg(argc, argv, 2, 1500);
	struct scratch_args args[2];
	char *objs[8];
	int k = 0;

	/* Hoard hands out neighbours; take the first two small objects that share a line */
	for (int i = 0; i < 8; i++)
		objs[i] = malloc(24);
	while (k < 6 && (unsigned long)objs[k] / 64 != (unsigned long)objs[k + 1] / 64)
		k++;
	for (int t = 0; t < 2; t++)
		args[t] = (struct scratch_args){ .obj = objs[k + t], .rounds = rounds,
						 .writes = writes };
	for (int i = 0; i < 8; i++)
		if (i != k && i != k + 1)
			free(objs[i]);
	wl_run(2, scratch_thread, args, sizeof(args[0]));
	return 0;
}
