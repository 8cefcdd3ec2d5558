// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own CPU time and memory (see self_usage.h). */
#include <sys/resource.h>

#include "util/self_usage.h"

double cp_self_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}
