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
 *
 * Two writer threads are started first and wait, so no mapping is made
 * after the object. Then the object is allocated and the program prints
 * "object ADDR REQUEST" and "ready PID" and waits for a line on stdin; then
 * the threads increment two adjacent longs at the object's start (offsets 0
 * and 8: one cache line) for SECONDS, and it exits 0.
 *
 * usage: late_attach [small|big|arena] [SECONDS]   (default small, 3 s)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LATE_SMALL_BYTES 100	/* a 112-byte chunk: malloc_usable_size() 104 */
#define LATE_BIG_BYTES	 200000 /* above the 128 KiB mmap threshold */

static volatile long *object;
static volatile int stop;
static pthread_barrier_t go;

static void *writer(void *arg)
{
	volatile long *mine;

	pthread_barrier_wait(&go);
	mine = object + (long)arg;
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "small";
	int seconds = argc > 2 ? atoi(argv[2]) : 3;
	long bytes = strcmp(mode, "big") ? LATE_SMALL_BYTES : LATE_BIG_BYTES;
	struct timespec ts = { seconds, 0 };
	pthread_t th[2], alloc_thread;
	char line[64];

	pthread_barrier_init(&go, NULL, 3);
	for (long t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, writer, (void *)t);
	if (!strcmp(mode, "arena")) {
		/* its first malloc gives that thread an arena of its own */
		pthread_create(&alloc_thread, NULL, allocate, (void *)bytes);
		pthread_join(alloc_thread, NULL);
	} else {
		allocate((void *)bytes);
	}
	if (!object)
		return 1;
	memset((void *)object, 0, (size_t)bytes);
	printf("object %p %ld\n", (void *)object, bytes);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&go);
	nanosleep(&ts, NULL);
	stop = 1;
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	printf("late_attach: counts %ld %ld\n", object[0], object[1]);
	free((void *)object);
	return 0;
}
