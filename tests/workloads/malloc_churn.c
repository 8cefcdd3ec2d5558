// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * malloc_churn: what a busy service does to its allocator, for
 * tests/bench/malloc_overhead. NR_THREADS threads each keep NR_SLOTS live
 * objects and replace a random one PAIRS times: free the old object, malloc a
 * new one of 16 to 256 bytes (mostly small, as a service's strings, list
 * nodes and request records are) and write its first and last bytes. One
 * replacement is a pair (one malloc, one free). The threads start together
 * after they have filled their slots; their pairs are timed.
 *
 * usage: malloc_churn PAIRS      pairs per thread; prints
 *          "loop_ns NS"          wall-clock time of all the threads' pairs
 *          "loop_cpu_ns NS"      the process's CPU time in them (user and
 *                                kernel: probe traps count)
 *          "pairs_per_s N"       NR_THREADS * PAIRS / wall-clock time
 *          "loop_user_ns NS"     the user-mode part of loop_cpu_ns, then
 *          "loop_sys_ns NS"      the kernel's (traps, interrupts)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#define NR_THREADS	4
#define NR_SLOTS	1024	/* live objects per thread: 16-256 KiB, in L2 */

/* Sizes of a request's objects: small ones most often (16 entries, one picked at random). */
static const unsigned short sizes[16] = {
	16, 16, 24, 24, 32, 32, 32, 48, 48, 64, 64, 96, 128, 160, 192, 256,
};

struct worker {
	pthread_t th;
	unsigned long long seed;
	long pairs;
	void *slot[NR_SLOTS];
};

static pthread_barrier_t start, done;

/* xorshift64: the same stream on every run */
static unsigned long long next(unsigned long long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *new_object(unsigned long long r)
{
	size_t sz = sizes[r & 15];
	char *p = malloc(sz);	/* cp:churn-malloc */

	if (!p)
		abort();
	p[0] = (char)r;
	p[sz - 1] = (char)(r >> 8);
	return p;
}

static void *run(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < NR_SLOTS; i++)
		w->slot[i] = new_object(next(&w->seed));
	pthread_barrier_wait(&start);
	for (long i = 0; i < w->pairs; i++) {
		unsigned long long r = next(&w->seed);
		void **s = &w->slot[(r >> 4) % NR_SLOTS];

		free(*s);	/* cp:churn-free */
		*s = new_object(r >> 16);
	}
	pthread_barrier_wait(&done);
	for (int i = 0; i < NR_SLOTS; i++)
		free(w->slot[i]);
	return NULL;
}

/* User and kernel CPU ns of the process so far. */
static void usage_ns(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec * 1e9 + (double)ru.ru_utime.tv_usec * 1e3;
	*sys = (double)ru.ru_stime.tv_sec * 1e9 + (double)ru.ru_stime.tv_usec * 1e3;
}

static double clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static struct worker w[NR_THREADS];
	long pairs = argc > 1 ? atol(argv[1]) : 0;
	double t0, c0, u0, s0, t1, c1, u1, s1;

	if (pairs < 1) {
		fprintf(stderr, "usage: malloc_churn PAIRS   (per thread, >= 1)\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, NR_THREADS + 1);
	pthread_barrier_init(&done, NULL, NR_THREADS + 1);
	for (int i = 0; i < NR_THREADS; i++) {
		w[i].seed = 0x9e3779b97f4a7c15ull * (unsigned long long)(i + 1);
		w[i].pairs = pairs;
		if (pthread_create(&w[i].th, NULL, run, &w[i])) {
			fprintf(stderr, "malloc_churn: cannot create a thread\n");
			return 1;
		}
	}
	pthread_barrier_wait(&start);
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	usage_ns(&u0, &s0);
	pthread_barrier_wait(&done);
	t1 = clock_ns(CLOCK_MONOTONIC);
	c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	usage_ns(&u1, &s1);
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(w[i].th, NULL);
	printf("loop_ns %.0f\nloop_cpu_ns %.0f\npairs_per_s %.0f\nloop_user_ns %.0f\nloop_sys_ns %.0f\n",
	       t1 - t0, c1 - c0, (double)NR_THREADS * (double)pairs / ((t1 - t0) / 1e9), u1 - u0,
	       s1 - s0);
	return 0;
}
