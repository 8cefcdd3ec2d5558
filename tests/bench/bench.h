/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the benches share: a repeatable pseudo-random stream and a clock. */
#ifndef CP_TESTS_BENCH_H
#define CP_TESTS_BENCH_H

#include <stdio.h>
#include <time.h>
#include <linux/types.h>

/* xorshift64: the same stream on every run, so runs compare. */
static inline __u64 rnd(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static inline double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this process: on a shared machine, what wall time counts of others is not in it. */
static inline double cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* The 1-minute load average (0 if unknown): benches on a shared machine print it with figures. */
static inline double cp_bench_loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double load = 0;

	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = 0;
		fclose(f);
	}
	return load;
}

#endif /* CP_TESTS_BENCH_H */
