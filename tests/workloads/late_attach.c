// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * late_attach: false sharing on a heap object that was allocated before the
 * profiler attached (`cacheperf-bpf -p PID` on a running service). No
 * allocation probe sees its malloc; only glibc's chunk headers know where
 * it starts and how large it is.
 *
 *   small (default)  the object is malloc(LATE_SMALL_BYTES) from the main
 *                    thread: a chunk in the main arena's [heap]
 *   big              malloc(LATE_BIG_BYTES): above the mmap threshold, a
 *                    chunk mmapped on its own
 *   arena            malloc(LATE_SMALL_BYTES) from another thread: a chunk
 *                    in a non-main arena's heap
 *   pair             two malloc(LATE_PAIR_BYTES) from the main thread, next
 *                    to each other on one line, one per writer: false
 *                    sharing the allocator's placement made ("object2 ADDR"
 *                    names the second)
 *
 * Two writer threads are started first and wait, so no mapping is made
 * after the object. Then the object is allocated and the program prints
 * "object ADDR REQUEST" and "ready PID" and waits for a line on stdin; then
 * the threads increment two adjacent longs at the object's start (offsets 0
 * and 8: one cache line) for SECONDS, and it exits 0.
 *
 * Each writer runs on a CPU of its own (spread.h).
 *
 * usage: late_attach [small|big|arena|pair] [SECONDS]   (default small, 3 s)
 */
#define _GNU_SOURCE	/* pthread_setaffinity_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spread.h"

#define LATE_SMALL_BYTES 100	/* a 112-byte chunk: malloc_usable_size() 104 */
#define LATE_BIG_BYTES	 200000 /* above the 128 KiB mmap threshold */
#define LATE_PAIR_BYTES	 8	/* a 32-byte chunk: malloc_usable_size() 24 */

static volatile long *object;
static volatile long *counter[2];	/* what each writer increments */
static volatile int stop;
static pthread_barrier_t go;

static void *writer(void *arg)
{
	volatile long *mine;

	pthread_barrier_wait(&go);
	mine = counter[(long)arg];
	/*
	 * One read-modify-write instruction, followed by no other access: every
	 * tick is charged to it, and is a write (the soft source calls a line
	 * shared on writes of two threads within one 100 ms epoch; with a load
	 * and a store, few ticks would land on the store)
	 */
	while (!stop)
		for (int i = 0; i < 4096; i++)
			__asm__ volatile("addq $1, %0" : "+m"(*mine)); /* MARK: late-write */
	return NULL;
}

static void *allocate(void *arg)
{
	object = malloc((size_t)(long)arg);
	return NULL;
}

/* Two adjacent chunks whose first longs share a line: 0 or -1. */
static int allocate_pair(void)
{
	for (int i = 0; i < 8; i++) {
		long *a = malloc(LATE_PAIR_BYTES), *b = malloc(LATE_PAIR_BYTES);

		if (!a || !b)
			return -1;
		if ((unsigned long)a / 64 == (unsigned long)b / 64) {
			counter[0] = object = a;
			counter[1] = b;
			*a = *b = 0;
			return 0;
		}
		/*
		 * pairs of 32-byte chunks keep their offset in the line: one
		 * more chunk moves the next pair by half a line. The others stay
		 * allocated: freed, they would come back.
		 */
		if (!malloc(LATE_PAIR_BYTES))
			return -1;
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "small";
	int seconds = argc > 2 ? atoi(argv[2]) : 3;
	long bytes = !strcmp(mode, "big") ? LATE_BIG_BYTES :
		     !strcmp(mode, "pair") ? LATE_PAIR_BYTES : LATE_SMALL_BYTES;
	struct timespec ts = { seconds, 0 };
	pthread_t th[2], alloc_thread;
	char line[64];

	pthread_barrier_init(&go, NULL, 3);
	for (long t = 0; t < 2; t++) {
		pthread_create(&th[t], NULL, writer, (void *)t);
		cp_wl_spread(th[t], (int)t);
	}
	if (!strcmp(mode, "pair")) {
		if (allocate_pair())
			return 1;
	} else if (!strcmp(mode, "arena")) {
		/* its first malloc gives that thread an arena of its own */
		pthread_create(&alloc_thread, NULL, allocate, (void *)bytes);
		pthread_join(alloc_thread, NULL);
	} else {
		allocate((void *)bytes);
	}
	if (!object)
		return 1;
	if (!counter[0]) {
		memset((void *)object, 0, (size_t)bytes);
		counter[0] = object;
		counter[1] = object + 1;
	}
	printf("object %p %ld\n", (void *)object, bytes);
	if (counter[1] != object + 1)
		printf("object2 %p %ld\n", (void *)counter[1], bytes);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&go);
	nanosleep(&ts, NULL);
	stop = 1;
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	printf("late_attach: counts %ld %ld\n", *counter[0], *counter[1]);
	free((void *)object);
	return 0;
}
