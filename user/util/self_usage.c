// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own CPU time (see self_usage.h). */
#include <sys/resource.h>

#include "util/self_usage.h"

static __u64 tv_ns(const struct timeval *tv)
{
	return (__u64)tv->tv_sec * 1000000000ull + (__u64)tv->tv_usec * 1000ull;
}

__u64 cp_self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime);
}
