// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cxx_bad_alloc: a C++ program that catches the std::bad_alloc its operator
 * new throws, built once per allocator that implements operator new (glibc
 * with libstdc++'s, tcmalloc, jemalloc: cxx_bad_alloc_libc,
 * cxx_bad_alloc_tcmalloc, cxx_bad_alloc_jemalloc). Protocol: prints
 * "ready PID", waits for a line; then allocates a table of PAGES pages
 * (default 4096) with operator new[] in make_table(), writes one long per
 * page ROUNDS times (default 4; every page-fault sample of the run lands in
 * it), asks operator new and operator new[] for half the address space,
 * prints "caught bad_alloc N" with the number of std::bad_alloc caught (2
 * when both threw and the catch was reached), frees the table and exits 0.
 * A probe that breaks unwinding through operator new ends it in
 * std::terminate() (SIGABRT) instead.
 *
 *   cxx_bad_alloc pairs N   "ready PID", waits for a line, then N pairs of
 *                           operator new(64) and operator delete, timed:
 *                           prints "ns NS cpu NS" per pair (what
 *                           tests/bench/alloc_probe_cost reads)
 *
 * The cp:bad-alloc-* markers are the lines the tests expect.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <time.h>
#include <unistd.h>

#include "sites_run.h"

#define PAGE_LONGS	(4096 / sizeof(long))

static long *table;
static volatile int made;	/* work after the call: new[] is no tail call */
static volatile size_t huge = (size_t)-1 / 2;	/* no allocator can, whatever the overcommit */

__attribute__((noinline)) static void make_table(size_t pages)
{
	table = new long[pages * PAGE_LONGS];	/* cp:bad-alloc-table */
	made++;
}

/* operator new (@array: new[]) of half the address space; 1 when it threw std::bad_alloc */
__attribute__((noinline)) static int new_throws(bool array)
{
	try {
		void *p = array ? ::operator new[](huge) : ::operator new(huge);

		array ? ::operator delete[](p) : ::operator delete(p);
	} catch (const std::bad_alloc &) {
		return 1;
	}
	return 0;
}

static unsigned long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One operator new and delete pair, through a call the compiler cannot drop. */
__attribute__((noinline)) static void new_pair(void)
{
	void *volatile p = ::operator new(64);

	::operator delete(p);
}

static int pairs(unsigned long long n)
{
	unsigned long long start, cpu_start;

	printf("ready %d\n", getpid());
	fflush(stdout);
	if (cp_wait_line())
		return 1;
	start = clock_ns(CLOCK_MONOTONIC);
	cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (unsigned long long i = 0; i < n; i++)
		new_pair();
	printf("ns %.1f cpu %.1f\n", (double)(clock_ns(CLOCK_MONOTONIC) - start) / (double)n,
	       (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start) / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "pairs"))
		return pairs(strtoull(argv[2], NULL, 0) ?: 1);

	size_t pages = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	int rounds = argc > 2 ? atoi(argv[2]) : 4, caught;

	if (!pages)
		return 2;
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (cp_wait_line())
		return 1;
	make_table(pages);	/* cp:bad-alloc-call */
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < pages; i++)
			table[i * PAGE_LONGS] += r + 1;
	caught = new_throws(false) + new_throws(true);
	printf("caught bad_alloc %d\n", caught);
	fflush(stdout);
	delete[] table;
	return caught == 2 ? 0 : 3;
}
