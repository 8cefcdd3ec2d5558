// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_sites: allocations of known sizes from known call sites, in several
 * threads, through every function the allocation probes cover. Each call is
 * made through CP_CALL3 (call_site.h), followed by a global label
 * `cp_ret_FUNC`, so the return address of every call site is a symbol.
 * Built twice: dynamically and statically linked (alloc_sites_static), the
 * allocator then being in the executable.
 *
 * usage: alloc_sites [sites|storm SECONDS|pairs N|newsites]
 *   sites (default): prints "ready PID", waits for a line; then NR_THREADS
 *     threads each allocate through every function with sizes
 *     SIZE_BASE * (thread + 1) + function, grow one object through a chain of
 *     CHAIN reallocs, free every FREED-th object, and print one line per
 *     object still alive: "obj TID FUNC ADDR SIZE"; then "done", waits for
 *     a line, frees everything and exits 0. Before the threads start, main
 *     maps MAP_LEN anonymous bytes from the call site `cp_ret_mmap`, grows
 *     the mapping to twice that with mremap (which may move it) and prints
 *     "map PID ADDR LEN".
 *   storm SECONDS: "ready PID", waits for a line, then malloc+free as fast as
 *     it can for SECONDS, prints "pairs N", exits.
 *   pairs N: "ready PID", waits for a line, then N malloc+free pairs timed,
 *     prints "ns NS_PER_PAIR cpu CPU_NS_PER_PAIR", exits: elapsed time and
 *     the process's CPU time (user + kernel, so probe traps count, and time
 *     other processes take on a busy machine does not).
 *   newsites: "ready PID", waits for a line, then one malloc+free at each
 *     of NEW_SITES call sites never used before, timed; prints "ns
 *     NS_PER_SITE cpu CPU_NS_PER_SITE" and exits: what the probes' work at a
 *     call site's first allocation costs (deeper stack, stack copy).
 */
#define _GNU_SOURCE	/* mremap */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "call_site.h"
#include "sites_run.h"

#define NR_THREADS	4
#define PER_FUNC	8	/* objects per function and thread */
#define SIZE_BASE	1000
#define CHAIN		6	/* reallocs of the chained object */
#define MAP_LEN		(64 * 4096)

__attribute__((noinline)) static void *s_malloc(size_t n)
{
	void *r;

	CP_CALL3("malloc", "cp_ret_malloc", n, 0, 0, r);
	return r;
}

__attribute__((noinline)) static void *s_calloc(size_t n, size_t m)
{
	void *r;

	CP_CALL3("calloc", "cp_ret_calloc", n, m, 0, r);
	return r;
}

__attribute__((noinline)) static void *s_realloc(void *p, size_t n)
{
	void *r;

	CP_CALL3("realloc", "cp_ret_realloc", p, n, 0, r);
	return r;
}

__attribute__((noinline)) static void *s_reallocarray(void *p, size_t n, size_t m)
{
	void *r;

	CP_CALL3("reallocarray", "cp_ret_reallocarray", p, n, m, r);
	return r;
}

__attribute__((noinline)) static void *s_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;
	long r;

	CP_CALL3("posix_memalign", "cp_ret_posix_memalign", &p, align, n, r);
	return r ? NULL : p;
}

__attribute__((noinline)) static void *s_aligned_alloc(size_t align, size_t n)
{
	void *r;

	CP_CALL3("aligned_alloc", "cp_ret_aligned_alloc", align, n, 0, r);
	return r;
}

__attribute__((noinline)) static void *s_memalign(size_t align, size_t n)
{
	void *r;

	CP_CALL3("memalign", "cp_ret_memalign", align, n, 0, r);
	return r;
}

__attribute__((noinline)) static void *s_valloc(size_t n)
{
	void *r;

	CP_CALL3("valloc", "cp_ret_valloc", n, 0, 0, r);
	return r;
}

__attribute__((noinline)) static void *s_pvalloc(size_t n)
{
	void *r;

	CP_CALL3("pvalloc", "cp_ret_pvalloc", n, 0, 0, r);
	return r;
}

__attribute__((noinline)) static void s_free(void *p)
{
	long r;

	CP_CALL3("free", "cp_ret_free", p, 0, 0, r);
	(void)r;
}

/* An anonymous mapping made by the program itself: a `mapping` object. */
__attribute__((noinline)) static void *s_mmap(size_t len)
{
	void *r;

	asm volatile("mov %%rsp, %%rbx\n\t"
		     "sub $128, %%rsp\n\t"
		     "and $-16, %%rsp\n\t"
		     "mov $0x22, %%rcx\n\t"	/* MAP_PRIVATE | MAP_ANONYMOUS */
		     "mov $-1, %%r8\n\t"
		     "xor %%r9d, %%r9d\n\t"
		     "call mmap@PLT\n"
		     ".globl cp_ret_mmap\n"
		     "cp_ret_mmap:\n\t"
		     "mov %%rbx, %%rsp\n\t"
		     : "=a"(r)
		     : "D"(0), "S"(len), "d"(3)	/* PROT_READ | PROT_WRITE */
		     : "rbx", "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
	return r;
}

/*
 * NEW_SITES distinct call sites, straight-line: one malloc+free each, the
 * size varied so that no two blocks are alike (and none is merged), the
 * pointer published so that the pair is not elided.
 */
#define NEW_SITES	1024
static void *volatile site_sink;
#define SITE_1		do { site_sink = malloc(64 + (__COUNTER__ & 63)); free(site_sink); } while (0);
#define SITE_4		SITE_1 SITE_1 SITE_1 SITE_1
#define SITE_16		SITE_4 SITE_4 SITE_4 SITE_4
#define SITE_64		SITE_16 SITE_16 SITE_16 SITE_16
#define SITE_256	SITE_64 SITE_64 SITE_64 SITE_64
#define SITE_1024	SITE_256 SITE_256 SITE_256 SITE_256

__attribute__((noinline)) static void new_sites(void)
{
	SITE_1024
}

/* The function names the test expects, in the order below. */
static const char *const funcs[] = {
	"malloc", "calloc", "reallocarray", "posix_memalign", "aligned_alloc",
	"memalign", "valloc", "pvalloc", "realloc",
};
#define NR_FUNCS	(sizeof(funcs) / sizeof(funcs[0]))

struct obj {
	void *p;
	size_t size;
	int func;
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj objs[NR_THREADS][NR_FUNCS * PER_FUNC];

static void *one(int f, size_t size)
{
	switch (f) {
	case 0: return s_malloc(size);
	case 1: return s_calloc(1, size);
	case 2: return s_reallocarray(NULL, size, 1);
	case 3: return s_posix_memalign(64, size);
	case 4: return s_aligned_alloc(64, size);
	case 5: return s_memalign(128, size);
	case 6: return s_valloc(size);
	case 7: return s_pvalloc(size);
	default: return NULL;
	}
}

static void *worker(void *arg)
{
	int t = (int)(long)arg, n = 0;
	long tid = syscall(SYS_gettid);

	for (unsigned int f = 0; f < NR_FUNCS; f++) {
		for (int i = 0; i < PER_FUNC; i++) {
			size_t size = SIZE_BASE * (t + 1) + f * 16 + i;
			struct obj *o = &objs[t][n++];
			void *p;

			o->func = f;
			if (f < NR_FUNCS - 1) {
				o->p = one(f, size);
				o->size = size;
				continue;
			}
			/* a realloc chain: the first object is a plain malloc, then it grows */
			p = s_malloc(size);
			for (int k = 1; k <= CHAIN; k++)
				p = s_realloc(p, size + 4096 * k);
			o->p = p;
			o->size = size + 4096 * CHAIN;
		}
	}
	/* every third object dies: the test must not find it */
	for (int i = 0; i < n; i += 3) {
		s_free(objs[t][i].p);
		objs[t][i].p = NULL;
	}
	pthread_mutex_lock(&out_lock);
	for (int i = 0; i < n; i++)
		if (objs[t][i].p)
			printf("obj %ld %s %p %zu\n", tid, funcs[objs[t][i].func], objs[t][i].p,
			       objs[t][i].size);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return NULL;
}

static unsigned long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}


int main(int argc, char **argv)
{
	void *map;
	const char *mode = argc > 1 ? argv[1] : "sites";

	printf("ready %d\n", getpid());
	fflush(stdout);
	if (cp_wait_line())
		return 1;
	if (!strcmp(mode, "storm") || !strcmp(mode, "pairs")) {
		long arg = argc > 2 ? atol(argv[2]) : 1;
		unsigned long long pairs = 0, start = clock_ns(CLOCK_MONOTONIC), end;
		unsigned long long cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

		end = start + (unsigned long long)arg * 1000000000ull;
		for (;;) {
			/* check the clock every 1024 pairs: it costs more than a pair */
			/* through the call sites: the compiler may drop a plain malloc+free */
			for (int i = 0; i < 1024; i++)
				s_free(s_malloc(64));
			pairs += 1024;
			if (mode[0] == 's' ? clock_ns(CLOCK_MONOTONIC) >= end : pairs >= (unsigned long long)arg)
				break;
		}
		if (mode[0] == 's')
			printf("pairs %llu\n", pairs);
		else
			printf("ns %.1f cpu %.1f\n", (double)(clock_ns(CLOCK_MONOTONIC) - start) / (double)pairs,
			       (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start) /
			       (double)pairs);
		return 0;
	}
	if (!strcmp(mode, "newsites")) {
		unsigned long long start = clock_ns(CLOCK_MONOTONIC);
		unsigned long long cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

		new_sites();
		printf("ns %.1f cpu %.1f\n", (double)(clock_ns(CLOCK_MONOTONIC) - start) / NEW_SITES,
		       (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start) / NEW_SITES);
		return 0;
	}
	map = s_mmap(MAP_LEN);
	/* grown (maybe moved): the mapping keeps its call site */
	map = mremap(map, MAP_LEN, 2 * MAP_LEN, MREMAP_MAYMOVE);
	if (map == MAP_FAILED)
		return 1;
	printf("map %ld %p %d\n", (long)getpid(), map, 2 * MAP_LEN);
	if (cp_sites_run(worker, NR_THREADS))
		return 1;
	for (int t = 0; t < NR_THREADS; t++)
		for (unsigned int i = 0; i < NR_FUNCS * PER_FUNC; i++)
			free(objs[t][i].p);
	munmap(map, 2 * MAP_LEN);
	return 0;
}
