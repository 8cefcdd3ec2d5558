// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* When a process started: /proc/PID/stat's starttime on the records' clock. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "machine/proc_start.h"

#define CP_STARTTIME_FIELD 22

int cp_proc_stat_starttime(const char *text, size_t len, __u64 *ticks)
{
	const char *p = NULL, *end = text + len;
	int field = 2; /* comm's closing parenthesis ends field 2 */
	__u64 v = 0;

	for (const char *q = text; q < end; q++)
		if (*q == ')')
			p = q + 1;
	if (!p)
		return -EINVAL;
	while (p < end && field < CP_STARTTIME_FIELD) {
		if (*p++ != ' ')
			return -EINVAL;
		field++;
		if (field == CP_STARTTIME_FIELD)
			break;
		if (p >= end || *p == ' ')
			return -EINVAL; /* an empty field: not the kernel's text */
		while (p < end && *p != ' ')
			p++;
	}
	if (field != CP_STARTTIME_FIELD || p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		__u64 d = (__u64)(*p - '0');

		if (v > (~0ull - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (p < end && *p != ' ' && *p != '\n')
		return -EINVAL;
	*ticks = v;
	return 0;
}

__u64 cp_proc_start_mono_ns(__u64 ticks, long hz, __u64 boot_minus_mono_ns)
{
	__u64 boot_ns;

	if (hz <= 0)
		return 0;
	boot_ns = ticks / (__u64)hz * 1000000000ull + ticks % (__u64)hz * 1000000000ull / (__u64)hz;
	return boot_ns > boot_minus_mono_ns ? boot_ns - boot_minus_mono_ns : 1;
}

bool cp_proc_started_after(__u64 start_ns, __u64 when_ns)
{
	return start_ns && when_ns && start_ns > when_ns;
}

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

int cp_proc_starttime(pid_t pid, __u64 *ticks)
{
	char path[32], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || cp_proc_stat_starttime(buf, (size_t)n, ticks))
		return -ESRCH;
	return 0;
}

__u64 cp_proc_ticks_mono_ns(__u64 ticks)
{
	__u64 mono = clock_ns(CLOCK_MONOTONIC), boot = clock_ns(CLOCK_BOOTTIME);

	return cp_proc_start_mono_ns(ticks, sysconf(_SC_CLK_TCK), boot > mono ? boot - mono : 0);
}
