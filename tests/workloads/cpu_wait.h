/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Workloads whose threads run for a time: run for an amount of CPU time, not
 * of the clock. The profiler's evidence (ticks on the accesses, decoded
 * instructions, breakpoint histories) comes from the threads' running, so a
 * fixed amount of CPU time is the same evidence however busy the machine is;
 * a wall-clock run on a loaded machine got a fraction of it and the tests
 * that read its report failed by chance.
 */
#ifndef CP_WL_CPU_WAIT_H
#define CP_WL_CPU_WAIT_H

#include <time.h>

static inline double cp_wl_clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Sleeps until the process has used @cpu_s more seconds of CPU time (all its
 * threads), or @cap_s seconds of the clock have passed, whichever comes first.
 */
static inline void cp_wl_wait_cpu(double cpu_s, double cap_s)
{
	double cpu_end = cp_wl_clock_s(CLOCK_PROCESS_CPUTIME_ID) + cpu_s;
	double wall_end = cp_wl_clock_s(CLOCK_MONOTONIC) + cap_s;
	struct timespec poll = { 0, 10000000 };

	while (cp_wl_clock_s(CLOCK_PROCESS_CPUTIME_ID) < cpu_end &&
	       cp_wl_clock_s(CLOCK_MONOTONIC) < wall_end)
		nanosleep(&poll, NULL);
}

#endif /* CP_WL_CPU_WAIT_H */
