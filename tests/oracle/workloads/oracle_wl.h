/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers of the oracle's corpus workloads: a numeric argument with a
 * default, and running N worker threads to completion. Workloads mark the
 * line of their expected dominant issue with a comment "ORACLE: ISSUE" and
 * the allocation (or global) of its object with "ORACLE: OBJECT", which
 * tests/bench/accuracy.sh reads to check the oracle's own truth.
 */
#ifndef CP_ORACLE_WL_H
#define CP_ORACLE_WL_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static inline long wl_arg(int argc, char **argv, int i, long def)
{
	return argc > i ? atol(argv[i]) : def;
}

/* Worker threads start together (a barrier), so their accesses interleave. */
struct wl_start {
	pthread_barrier_t *go;
	void *(*fn)(void *);
	void *arg;
};

static inline void *wl_trampoline(void *p)
{
	struct wl_start *s = p;

	pthread_barrier_wait(s->go);
	return s->fn(s->arg);
}

static inline void wl_run(int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	struct wl_start s[16];
	pthread_barrier_t go;
	pthread_t t[16];

	if (n > 16)
		n = 16;
	pthread_barrier_init(&go, NULL, (unsigned int)n);
	for (int i = 0; i < n; i++) {
		s[i] = (struct wl_start){ &go, fn, (char *)args + (size_t)i * arg_size };
		if (pthread_create(&t[i], NULL, wl_trampoline, &s[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
}

#endif /* CP_ORACLE_WL_H */
