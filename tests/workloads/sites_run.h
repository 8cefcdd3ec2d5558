/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The protocol of the sites workloads (alloc_sites, cxx_sites): they print
 * "ready PID" and wait for a line before allocating, run their threads,
 * print "done" and wait for a line before freeing everything.
 */
#ifndef CP_WORKLOADS_SITES_RUN_H
#define CP_WORKLOADS_SITES_RUN_H

#include <pthread.h>
#include <stdio.h>

/* 0 once a line came on stdin, -1 at its end. */
static inline int cp_wait_line(void)
{
	char line[64];

	return fgets(line, sizeof(line), stdin) ? 0 : -1;
}

/*
 * Runs @n (at most 16) threads of @worker, each given its index, joins them,
 * prints "done" and waits for a line. Returns 0, or -1 when stdin ended.
 */
static inline int cp_sites_run(void *(*worker)(void *), int n)
{
	pthread_t th[16];

	for (long t = 0; t < n && t < 16; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < n && t < 16; t++)
		pthread_join(th[t], NULL);
	printf("done\n");
	fflush(stdout);
	return cp_wait_line();
}

#endif /* CP_WORKLOADS_SITES_RUN_H */
