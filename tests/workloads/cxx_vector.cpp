// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cxx_vector: the C++ allocations most programs make, with the system's
 * libstdc++ and glibc and built as distributions build (no frame pointers):
 * operator new keeps none either, so only CFI unwinding reaches the
 * program's frames from malloc (tests/e2e/test_alloc_stacks.sh).
 *
 *   cxx_vector [PAGES]        a std::vector<long> sized in make_counts(),
 *                             2 MiB by default, written one long per page
 *                             once a line comes on stdin ("ready PID" first),
 *                             so every page-fault sample lands in it; with
 *                             CXX_VECTOR_HOLD=SECONDS it stays that long after
 *   cxx_vector share [SECS]   false sharing in a vector's element array: a
 *                             std::vector<long> of 8 made by make_unique in
 *                             make_shared_counts(), two threads incrementing
 *                             elements 0 and 1 (one cache line) for SECS of
 *                             CPU time each (default 3), each on a CPU of
 *                             its own (spread.h)
 *
 * The cp:vector-* markers are the lines the tests expect.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "cpu_wait.h"
#include "spread.h"

static std::vector<long> counts;
static volatile int made;	/* work after the call: resize() is no tail call */

__attribute__((noinline)) static void make_counts(size_t n)
{
	counts.resize(n);	/* cp:vector-resize */
	made++;
}

static std::unique_ptr<std::vector<long>> shared_counts;
static volatile int stop;

__attribute__((noinline)) static void make_shared_counts(void)
{
	shared_counts = std::make_unique<std::vector<long>>(8);	/* cp:vector-unique */
	made++;
}

static void *worker(void *arg)
{
	volatile long *mine = shared_counts->data() + (long)arg;

	while (!stop)
		(*mine)++;	/* cp:vector-share */
	return NULL;
}

static int share(int seconds)
{
	pthread_t th[2];

	make_shared_counts();	/* cp:vector-main-unique */
	for (long t = 0; t < 2; t++) {
		pthread_create(&th[t], NULL, worker, (void *)t);
		cp_wl_spread(th[t], (int)t);
	}
	cp_wl_wait_cpu(2.0 * seconds, 10.0 * seconds);
	stop = 1;
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	printf("cxx_vector: counts %ld %ld, made %d\n", (*shared_counts)[0], (*shared_counts)[1],
	       made);
	return 0;
}

int main(int argc, char **argv)
{
	size_t pages;
	char line[16];

	if (argc > 1 && strcmp(argv[1], "share") == 0)
		return share(argc > 2 ? atoi(argv[2]) : 3);
	pages = argc > 1 ? (size_t)atol(argv[1]) : 512;
	make_counts(pages * 4096 / sizeof(long));	/* cp:vector-main */
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (size_t i = 0; i < pages; i++)
		counts[i * 4096 / sizeof(long)] = 1;
	printf("touched %zu pages, made %d\n", pages, made);
	fflush(stdout);
	/* CXX_VECTOR_HOLD=SECONDS: alive that long after, for a loaded profiler */
	if (getenv("CXX_VECTOR_HOLD"))
		sleep((unsigned int)atoi(getenv("CXX_VECTOR_HOLD")));
	return 0;
}
