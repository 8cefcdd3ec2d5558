// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own CPU time and status figures (see self_usage.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "util/self_usage.h"

static __u64 tv_ns(const struct timeval *tv)
{
	return (__u64)tv->tv_sec * 1000000000ull + (__u64)tv->tv_usec * 1000ull;
}

__u64 cp_rusage_cpu_ns(const struct rusage *ru)
{
	return tv_ns(&ru->ru_utime) + tv_ns(&ru->ru_stime);
}

__u64 cp_self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return cp_rusage_cpu_ns(&ru);
}

int cp_self_status_bytes(const char *key, __u64 *bytes)
{
	FILE *f = fopen("/proc/self/status", "re");
	size_t len = strlen(key);
	char line[128];
	unsigned long long kib;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':' &&
		    sscanf(line + len + 1, "%llu kB", &kib) == 1) {
			*bytes = (__u64)kib << 10;
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}
