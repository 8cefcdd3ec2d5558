// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * true_sharing: several threads increment one global counter, cp_hits: the
 * same bytes read and written by every thread (padding cannot help).
 *
 * usage: true_sharing [THREADS] [SECONDS]   (default 2 threads, 3 s)
 *
 * Each thread runs on a CPU of its own, modulo their number (spread.h).
 *
 * Lines the tests look for carry MARK comments.
 */
#define _GNU_SOURCE	/* pthread_setaffinity_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu_wait.h"
#include "spread.h"

#define MAX_THREADS 16

volatile long cp_hits;	/* MARK: ts-global */
static volatile int stop;

static void *worker(void *arg)
{
	(void)arg;
	while (!stop)
		cp_hits++;	/* MARK: ts-inc */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	int threads = argc > 1 ? atoi(argv[1]) : 2, seconds = argc > 2 ? atoi(argv[2]) : 3;

	if (threads < 2 || threads > MAX_THREADS) {
		fprintf(stderr, "true_sharing: THREADS must be 2..%d\n", MAX_THREADS);
		return 2;
	}
	for (int t = 0; t < threads; t++) {
		pthread_create(&th[t], NULL, worker, NULL);
		cp_wl_spread(th[t], t);
	}
	/* SECONDS of CPU time per thread, at most ten times as long by the clock */
	cp_wl_wait_cpu((double)seconds * threads, 10.0 * seconds);
	stop = 1;
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	printf("true_sharing: %d threads, %ld increments\n", threads, cp_hits);
	return 0;
}
