// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cp_tenantlib: the library a hostile tenant names (tests/e2e/
 * test_tenant_files.sh), loaded by tests/workloads/tenant_files. Its one
 * function walks a buffer a line at a time, so the soft source's ticks land
 * in it, missing, and the profiler must open the library to name them.
 */
#include <stddef.h>

long cp_tenant_stream(const volatile long *buf, size_t longs)
{
	long sum = 0;

	for (size_t i = 0; i < longs; i += 8) /* one long per 64-byte line */
		sum += buf[i];
	return sum;
}
