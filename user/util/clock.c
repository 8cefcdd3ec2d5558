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
