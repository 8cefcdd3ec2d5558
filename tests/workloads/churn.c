// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * churn: what a long-running profiler of a busy host sees. For SECONDS,
 * rounds of: 4 threads that allocate, write and free 64 blocks each and
 * exit; one child that forks and exits; one child that execs this program
 * again ("churn child"), allocates and exits. Pids are used up and come
 * back; nothing lives long but the parent.
 *
 * usage: churn SECONDS     prints "churn: R rounds, T threads, P processes"
 *        churn child       (the exec'd child)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define NR_THREADS	4
#define NR_BLOCKS	64

/* Allocates @n blocks of 16 B .. 64 KiB, writes each, frees them. */
static void allocate(unsigned int seed, int n)
{
	void *blocks[NR_BLOCKS];

	for (int i = 0; i < n && i < NR_BLOCKS; i++) {
		size_t sz = 16u << (rand_r(&seed) % 13);

		blocks[i] = malloc(sz);	/* cp:churn-malloc */
		if (blocks[i])
			memset(blocks[i], i, sz);
	}
	for (int i = 0; i < n && i < NR_BLOCKS; i++)
		free(blocks[i]);
}

static void *worker(void *arg)
{
	allocate((unsigned int)(unsigned long)arg, NR_BLOCKS);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long rounds = 0, threads = 0, procs = 0;
	double end;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		allocate((unsigned int)getpid(), NR_BLOCKS);
		return 0;
	}
	if (argc < 2 || atof(argv[1]) <= 0) {
		fprintf(stderr, "usage: churn SECONDS\n");
		return 2;
	}
	end = now_s() + atof(argv[1]);
	while (now_s() < end) {
		pthread_t th[NR_THREADS];
		pid_t kids[2];

		for (int i = 0; i < NR_THREADS; i++)
			if (!pthread_create(&th[i], NULL, worker, (void *)(rounds * 8 + (unsigned long)i)))
				threads++;
			else
				th[i] = 0;
		kids[0] = fork();
		if (kids[0] == 0) {
			allocate(1, NR_BLOCKS / 4);
			_exit(0);
		}
		kids[1] = fork();
		if (kids[1] == 0) {
			execl("/proc/self/exe", argv[0], "child", (char *)NULL);
			_exit(127);
		}
		for (int i = 0; i < NR_THREADS; i++)
			if (th[i])
				pthread_join(th[i], NULL);
		for (int i = 0; i < 2; i++) {
			int st;

			if (kids[i] > 0 && waitpid(kids[i], &st, 0) == kids[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st)) {
					fprintf(stderr, "churn: child %d failed\n", (int)kids[i]);
					return 1;
				}
				procs++;
			}
		}
		rounds++;
		usleep(5000);
	}
	printf("churn: %lu rounds, %lu threads, %lu processes\n", rounds, threads, procs);
	return 0;
}
