// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The monotonic clock (see clock.h). */
#include <time.h>

#include "util/clock.h"

__u64 cp_now_ns(void)
{
	struct timespec ts;

	/* cannot fail: the clock id is valid and &ts is writable */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

__u64 cp_wall_ns_of(__u64 mono_ns)
{
	struct timespec ts;
	__u64 now = cp_now_ns(), wall;

	clock_gettime(CLOCK_REALTIME, &ts);
	wall = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	return now >= mono_ns ? wall - (now - mono_ns) : wall + (mono_ns - now);
}
