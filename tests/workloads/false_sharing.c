// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * false_sharing: application false sharing, as in Phoenix linear_regression.
 * Two threads each update their own counter field of one heap struct; the
 * fields share a cache line, so each write invalidates the other core's copy.
 * `--padded` aligns each field to its own 64-byte line: the fix.
 *
 * usage: false_sharing [--padded] [SECONDS]   (default 3 s)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NR_THREADS 2

struct counters {
	volatile long count;	/* every increment is a real load and store */
	char pad[];		/* zero bytes, or up to a line with --padded */
};

static size_t stride = sizeof(long);
static char *shared;	/* NR_THREADS counters, @stride bytes apart */
static volatile int stop;

static void *worker(void *arg)
{
	struct counters *c = (struct counters *)(shared + (size_t)arg * stride);

	while (!stop)
		c->count++;	/* cp-marker: false-sharing-write */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NR_THREADS];
	int seconds = 3;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--padded") == 0)
			stride = 64;
		else
			seconds = atoi(argv[i]);
	}
	shared = aligned_alloc(64, NR_THREADS * 64);	/* cp-marker: false-sharing-alloc */
	if (!shared)
		return 1;
	memset(shared, 0, NR_THREADS * 64);
	for (long t = 0; t < NR_THREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	struct timespec ts = { seconds, 0 };
	nanosleep(&ts, NULL);
	stop = 1;
	for (int t = 0; t < NR_THREADS; t++)
		pthread_join(th[t], NULL);
	printf("false_sharing: stride %zu, counts %ld %ld\n", stride,
	       ((struct counters *)shared)->count, ((struct counters *)(shared + stride))->count);
	free(shared);
	return 0;
}
