// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stream: one load streaming over a heap array again and again.
 *
 *   (default)    capacity: the array is 8 times this machine's L2 (sysfs
 *                cpu0 cache index2, 8 MiB if unreadable): every pass evicts
 *                what the next one needs
 *   --friendly   the negative control: a 16 KiB array, half an L1D, summed
 *                the same way: cache-friendly, no issue
 *
 * usage: stream [--friendly] [SECONDS]   (default 3 s of CPU time)
 *
 * Lines the tests look for carry MARK comments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_wait.h"

#define FRIENDLY_BYTES	(16u << 10)

/* L2's size from sysfs ("1024K"), 1 MiB if unreadable. */
static size_t l2_bytes(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index2/size", "r");
	unsigned long n = 0;
	char unit = 'K';

	if (f) {
		if (fscanf(f, "%lu%c", &n, &unit) < 1)
			n = 0;
		fclose(f);
	}
	if (!n)
		return 1u << 20;
	return unit == 'M' ? n << 20 : unit == 'K' ? n << 10 : n;
}

static long pass(const long *a, size_t n)
{
	long sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += ((const volatile long *)a)[i];	/* MARK: stream-load */
	return sum;
}

int main(int argc, char **argv)
{
	size_t bytes = 8 * l2_bytes();
	int seconds = 3;
	long sum = 0, passes = 0;
	double end, cap;
	long *a;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--friendly") == 0)
			bytes = FRIENDLY_BYTES;
		else
			seconds = atoi(argv[i]);
	}
	a = malloc(bytes);	/* MARK: stream-alloc */
	if (!a)
		return 1;
	memset(a, 1, bytes);
	/* SECONDS of CPU time, at most ten times as long by the clock (cpu_wait.h) */
	for (end = cp_wl_clock_s(CLOCK_PROCESS_CPUTIME_ID) + seconds,
	     cap = cp_wl_clock_s(CLOCK_MONOTONIC) + 10.0 * seconds;
	     cp_wl_clock_s(CLOCK_PROCESS_CPUTIME_ID) < end && cp_wl_clock_s(CLOCK_MONOTONIC) < cap;
	     passes++)
		sum += pass(a, bytes / sizeof(long));
	printf("stream: %zu bytes, %ld passes, sum %ld\n", bytes, passes, sum);
	free(a);
	return 0;
}
