// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hoard's cache-thrash: every thread allocates its own small object, writes
 * it over and over, frees it and allocates again. Nothing is shared by the
 * program; but with one arena (M_ARENA_MAX=1, as a program with many threads
 * may end up with) the allocator carves the threads' objects out of the same
 * run of memory, one after the other, so two threads' objects share a line,
 * and each thread gets its own object back from its tcache round after round:
 * allocator false sharing, with objects allocated by different threads.
 *
 * The threads set up their tcaches, then take turns for their first
 * allocation (a semaphore each), so their objects are neighbours; the first
 * thread skips a chunk if its object would not start in the first half of a
 * line (chunks are 32 bytes, two to a line).
 * usage: cache_thrash [ROUNDS [WRITES]]
 */
#include <malloc.h>
#include <semaphore.h>

#include "oracle_wl.h"

#define OBJ_SIZE	24	/* a 32-byte chunk: two to a line */

struct thrash_args {
	pthread_barrier_t *ready;
	sem_t *first, *mine, *next;
	long rounds, writes;
};

static void *thrash_thread(void *p)
{
	struct thrash_args *a = p;
	char *o = NULL;

	/* the thread's tcache is allocated now, not between objects (volatile: kept) */
	char *volatile warm = malloc(512);

	free(warm);
	pthread_barrier_wait(a->ready);
	sem_wait(a->mine);
	for (int i = 0; i < 2; i++) {	/* the chunk skipped, if any, stays allocated */
		o = malloc(OBJ_SIZE);
		if (a->mine != a->first || (unsigned long)o % 64 < 32)
			break;
	}
	sem_post(a->next);
	pthread_barrier_wait(a->ready);
	for (long r = 0; r < a->rounds; r++) {
		for (long w = 0; w < a->writes; w++)
			for (int k = 0; k < OBJ_SIZE; k++)
				o[k] = (char)(o[k] + w); /* ORACLE: ISSUE */
		free(o);
		o = malloc(OBJ_SIZE); /* ORACLE: OBJECT */
	}
	free(o);
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = wl_arg(argc, argv, 1, 200), writes = wl_arg(argc, argv, 2, 1500);
	struct thrash_args args[2];
	pthread_barrier_t ready;
	sem_t turn[3];

	mallopt(M_ARENA_MAX, 1);
	pthread_barrier_init(&ready, NULL, 2);
	for (int t = 0; t < 3; t++)
		sem_init(&turn[t], 0, t == 0);
	for (int t = 0; t < 2; t++)
		args[t] = (struct thrash_args){ .ready = &ready, .first = &turn[0],
						.mine = &turn[t], .next = &turn[t + 1],
						.rounds = rounds, .writes = writes };
	wl_run(2, thrash_thread, args, sizeof(args[0]));
	pthread_barrier_destroy(&ready);
	return 0;
}
