/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Workloads whose threads share cache lines: each thread on a CPU of its
 * own. Sharing costs only while the threads run on two cores at once; a
 * scheduler free to place them may keep them on one CPU for a whole run
 * (beside two CPU hogs on a 2-CPU machine it did, in 1 of 34 runs of
 * tests/e2e/test_diff.sh), and that run has no sharing to find: its line
 * never moves between caches. Users of this header define _GNU_SOURCE
 * before any include (pthread_setaffinity_np).
 */
#ifndef CP_WL_SPREAD_H
#define CP_WL_SPREAD_H

#include <pthread.h>
#include <sched.h>

/*
 * Binds thread @th to the @i-th CPU (modulo their number) of those this
 * process may run on. With fewer than two such CPUs it does nothing: one
 * CPU cannot be shared across cores.
 */
static inline void cp_wl_spread(pthread_t th, int i)
{
	cpu_set_t allowed, one;
	int n, k = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) || (n = CPU_COUNT(&allowed)) < 2)
		return;
	i %= n;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || k++ != i)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pthread_setaffinity_np(th, sizeof(one), &one);
		return;
	}
}

#endif /* CP_WL_SPREAD_H */
