// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own CPU time and status figures (see self_usage.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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

/* The helpers' CPU time waited for so far (atomic: workers are waited for on any thread). */
static __u64 helpers_ns;

void cp_self_helpers_add_ns(__u64 ns)
{
	__atomic_add_fetch(&helpers_ns, ns, __ATOMIC_RELAXED);
}

/* The helpers at work whose CPU time counts before they are waited for (live_on false: none). */
static clockid_t live_clock[CP_SELF_HELPER_CLOCKS];
static bool live_on[CP_SELF_HELPER_CLOCKS];

/* The most given so far: a helper reaped between two readings never makes one go back. */
static __u64 helpers_last;

void cp_self_helper_clock(unsigned int slot, clockid_t clock, bool on)
{
	if (!on) {
		__atomic_store_n(&live_on[slot], false, __ATOMIC_RELEASE);
		return;
	}
	live_clock[slot] = clock;
	__atomic_store_n(&live_on[slot], true, __ATOMIC_RELEASE);
}

__u64 cp_self_helpers_cpu_ns(void)
{
	__u64 ns = __atomic_load_n(&helpers_ns, __ATOMIC_RELAXED), last;
	struct timespec ts;

	for (unsigned int i = 0; i < CP_SELF_HELPER_CLOCKS; i++)
		if (__atomic_load_n(&live_on[i], __ATOMIC_ACQUIRE) &&
		    !clock_gettime(live_clock[i], &ts))
			ns += (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	last = __atomic_load_n(&helpers_last, __ATOMIC_RELAXED);
	while (ns > last && !__atomic_compare_exchange_n(&helpers_last, &last, ns, false,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return ns > last ? ns : last;
}

__u64 cp_self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return cp_rusage_cpu_ns(&ru) + cp_self_helpers_cpu_ns();
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

__u64 cp_statm_resident_bytes(int fd)
{
	unsigned long long size, pages;
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &pages) != 2)
		return 0;
	return pages * (__u64)sysconf(_SC_PAGESIZE);
}
