// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shm_sharing: false sharing between two processes on one shared mapping,
 * as shared-memory IPC and a database's shared buffers make it.
 *
 *   (default)        the parent maps an anonymous MAP_SHARED region and
 *                    forks two workers; each increments its own counter,
 *                    the two counters 8 bytes apart on one cache line
 *   --padded         the fix: each counter on its own 64-byte line
 *   --file PATH --slot N
 *                    one worker, no fork: maps PATH (created, one page)
 *                    MAP_SHARED and increments counter N of it; two of
 *                    these started apart map the file at addresses of
 *                    their own (profiled together with -p PID1,PID2)
 *
 * usage: shm_sharing [--padded] [--file PATH --slot N] [SECONDS]  (default 3 s)
 *   SECONDS of CPU time per worker, at most ten times as long by the clock
 *   (cpu_wait.h). Each worker runs on a CPU of its own (spread.h).
 *
 * Lines the tests look for carry MARK comments.
 */
#define _GNU_SOURCE	/* pthread_setaffinity_np */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu_wait.h"
#include "spread.h"

#define NR_WORKERS	2	/* the message at the end names two */
#define REGION		4096

struct region {
	volatile int stop;	/* the parent tells the workers to end */
	char pad[60];
	char counters[];	/* from byte 64: NR_WORKERS counters, @stride bytes apart */
};

static size_t stride = sizeof(long);

/* Increments counter @slot of @r until told to stop. */
static void work(struct region *r, int slot)
{
	volatile long *c = (volatile long *)(r->counters + (size_t)slot * stride);

	while (!r->stop)
		(*c)++;	/* MARK: shm-write */
}

/* CPU seconds used so far by process @pid (0 once it is gone). */
static double cpu_of(pid_t pid)
{
	clockid_t clk;

	return clock_getcpuclockid(pid, &clk) ? 0 : cp_wl_clock_s(clk);
}

/* The forked workers: until they used @seconds of CPU each, or ten times that by the clock. */
static int run_forked(int seconds)
{
	struct region *r = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0);	/* MARK: shm-map */
	double wall_end = cp_wl_clock_s(CLOCK_MONOTONIC) + 10.0 * seconds;
	pid_t pid[NR_WORKERS];
	double used;

	if (r == MAP_FAILED)
		return 1;
	for (int i = 0; i < NR_WORKERS; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			return 1;
		if (!pid[i]) {
			cp_wl_spread(pthread_self(), i);
			work(r, i);
			_exit(0);
		}
	}
	do {
		struct timespec poll = { 0, 10000000 };

		nanosleep(&poll, NULL);
		used = 0;
		for (int i = 0; i < NR_WORKERS; i++)
			used += cpu_of(pid[i]);
	} while (used < (double)seconds * NR_WORKERS &&
		 cp_wl_clock_s(CLOCK_MONOTONIC) < wall_end);
	r->stop = 1;
	for (int i = 0; i < NR_WORKERS; i++)
		waitpid(pid[i], NULL, 0);
	printf("shm_sharing: workers %d %d on %p, counters %zu bytes apart\n", (int)pid[0],
	       (int)pid[1], (void *)r, stride);
	return 0;
}

struct file_worker {
	struct region *r;
	int slot;
};

static void *file_thread(void *arg)
{
	struct file_worker *w = arg;

	work(w->r, w->slot);
	return NULL;
}

/* One worker on counter @slot of the file @path, for @seconds of CPU. */
static int run_file(const char *path, int slot, int seconds)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	struct file_worker w = { .slot = slot };
	pthread_t th;

	if (fd < 0 || ftruncate(fd, REGION)) {
		perror(path);
		return 1;
	}
	w.r = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (w.r == MAP_FAILED)
		return 1;
	w.r->stop = 0;
	pthread_create(&th, NULL, file_thread, &w);
	cp_wl_spread(th, slot);
	cp_wl_wait_cpu(seconds, 10.0 * seconds);
	printf("shm_sharing: counter %d of %s at %p\n", slot, path, (void *)w.r);
	/* the exit ends the worker; the stop flag would end the other process's too */
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int seconds = 3, slot = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--padded") == 0)
			stride = 64;
		else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--slot") == 0 && i + 1 < argc)
			slot = atoi(argv[++i]) % NR_WORKERS;
		else
			seconds = atoi(argv[i]);
	}
	return path ? run_file(path, slot, seconds) : run_forked(seconds);
}
