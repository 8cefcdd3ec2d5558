/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perf_event_open(2), which glibc does not wrap: @attr for @pid on @cpu
 * in group @group (-1: none), close-on-exec. A descriptor, or -errno.
 */
#ifndef CP_UTIL_PERF_OPEN_H
#define CP_UTIL_PERF_OPEN_H

#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <linux/perf_event.h>

static inline int cp_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group)
{
	int fd = (int)syscall(__NR_perf_event_open, attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

#endif /* CP_UTIL_PERF_OPEN_H */
