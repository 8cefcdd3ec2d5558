/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Threads that must run as soon as they wake, on a loaded machine too: the
 * allocation windows' cutter and the workers that take probes off. An
 * ordinary thread waits tens of milliseconds for a CPU beside busy
 * targets, while the probes it is to remove keep trapping. They run at the
 * lowest real-time priority (SCHED_FIFO 1) where the profiler may, and
 * sleep nearly all the time.
 */
#ifndef CP_RT_THREAD_H
#define CP_RT_THREAD_H

#include <pthread.h>

/*
 * pthread_create(@t, @fn, @arg) at SCHED_FIFO priority 1, or as an
 * ordinary thread where that is refused (EPERM), named @name (at most 15
 * characters: what top -H and /proc/PID/task/TID/comm show). Returns 0 or
 * an errno.
 */
int cp_rt_thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

#endif /* CP_RT_THREAD_H */
