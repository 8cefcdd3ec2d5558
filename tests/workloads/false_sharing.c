// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * false_sharing: false sharing of two threads, of the application's making
 * or of the allocator's.
 *
 *   (default)        application: each thread updates its own counter field
 *                    of one heap struct (as in Phoenix linear_regression);
 *                    the fields share a cache line, so each write invalidates
 *                    the other core's copy
 *   --padded         the fix: each field on its own 64-byte line
 *   --alloc          allocator: each thread mallocs small counters of its
 *                    own, the threads taking turns (as in cache-scratch); in
 *                    one arena (run with MALLOC_ARENA_MAX=1) the chunks are
 *                    neighbours, so every line holds both threads' objects
 *   --alloc --aligned  the fix: each counter aligned_alloc'ed on its own line
 *   --mixed          both on one line: a total every thread adds to (true
 *                    sharing, which padding cannot fix) and each thread's own
 *                    counter beside it (false sharing, which padding fixes)
 *   --mixed --padded the fix of the false part: the total and each thread's
 *                    counter on lines of their own; the total stays shared
 *
 * usage: false_sharing [--padded] [--alloc [--aligned] | --mixed] [SECONDS]
 *        (default 3 s)
 *   SECONDS of CPU time per thread, at most ten times as long by the clock
 *   (cpu_wait.h)
 *
 * Each thread runs on a CPU of its own (spread.h).
 *
 * Lines the tests look for carry MARK comments.
 */
#define _GNU_SOURCE	/* pthread_setaffinity_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_wait.h"
#include "spread.h"

#define NR_THREADS	2
#define NR_OBJS		8	/* counters per thread in --alloc: the first may reuse free chunks */

struct counters {
	volatile long count;	/* every increment is a real load and store */
	char pad[];		/* zero bytes, or up to a line with --padded */
};

static size_t stride = sizeof(long);
static char *shared;	/* NR_THREADS counters, @stride bytes apart */
static volatile int stop;
static int aligned;
static pthread_barrier_t turn;

static void *worker(void *arg)
{
	struct counters *c = (struct counters *)(shared + (size_t)arg * stride);
	long n = 0;

	while (!stop) {
		c->count++;	/* MARK: fs-write */
#ifdef CP_WL_COUNT
		/* false_sharing_O0: a stack slot incremented right after the store, as -O0 loops do */
		n++;
#endif
	}
	return (void *)n;
}

/* --mixed: the total at the start of the block, thread @arg's counter @stride bytes on per thread. */
static void *mixed_worker(void *arg)
{
	volatile long *total = (volatile long *)shared;
	volatile long *own = (volatile long *)(shared + ((size_t)arg + 1) * stride);

	while (!stop) {
		(*own)++;	/* MARK: fs-mixed-own */
		(*total)++;	/* MARK: fs-mixed-total */
	}
	return NULL;
}

/* One counter of thread @t: malloc'ed next to the other thread's, or on a line of its own. */
static volatile long *alloc_counter(void)
{
	if (aligned)
		return aligned_alloc(64, 64);	/* MARK: fs-alloc-aligned */
	return malloc(sizeof(long));	/* MARK: fs-alloc-small */
}

static void *alloc_worker(void *arg)
{
	volatile long *mine[NR_OBJS];
	long t = (long)arg;

	/* a first malloc sets up this thread's cache (tcache) before the turns start */
	free(malloc(1024));
	pthread_barrier_wait(&turn);
	for (int i = 0; i < NR_OBJS; i++) {
		for (long k = 0; k < NR_THREADS; k++) {
			if (k == t)
				mine[i] = alloc_counter();
			pthread_barrier_wait(&turn);
		}
	}
	while (!stop)
		for (int i = 0; i < NR_OBJS; i++)
			(*mine[i])++;	/* MARK: fs-alloc-write */
	printf("false_sharing: thread %ld counters at %p .. %p\n", t, (void *)mine[0],
	       (void *)mine[NR_OBJS - 1]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NR_THREADS];
	int seconds = 3, alloc = 0, mixed = 0;
	size_t size;
	void *(*run)(void *) = worker;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--padded") == 0)
			stride = 64;
		else if (strcmp(argv[i], "--alloc") == 0)
			alloc = 1;
		else if (strcmp(argv[i], "--aligned") == 0)
			aligned = 1;
		else if (strcmp(argv[i], "--mixed") == 0)
			mixed = 1;
		else
			seconds = atoi(argv[i]);
	}
	/* a line for each thread's counter (padded), and one for the total (--mixed) */
	size = (size_t)(NR_THREADS + mixed) * 64;
	shared = aligned_alloc(64, size);	/* MARK: fs-alloc */
	if (!shared)
		return 1;
	memset(shared, 0, size);
	if (alloc)
		run = alloc_worker;
	else if (mixed)
		run = mixed_worker;
	pthread_barrier_init(&turn, NULL, NR_THREADS);
	for (long t = 0; t < NR_THREADS; t++) {
		pthread_create(&th[t], NULL, run, (void *)t);
		cp_wl_spread(th[t], (int)t);
	}
	cp_wl_wait_cpu((double)seconds * NR_THREADS, 10.0 * seconds);
	stop = 1;
	for (int t = 0; t < NR_THREADS; t++)
		pthread_join(th[t], NULL);
	if (mixed)
		printf("false_sharing: mixed, stride %zu, total %ld\n", stride, *(long *)shared);
	else if (!alloc)
		printf("false_sharing: stride %zu, counts %ld %ld\n", stride,
		       ((struct counters *)shared)->count,
		       ((struct counters *)(shared + stride))->count);
	free(shared);
	return 0;
}
