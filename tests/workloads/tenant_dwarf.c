// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A hostile tenant's program whose debug info is small on disk and costly
 * to read (tenant_dwarf.S; which kind is chosen when it is built:
 * tenant_dwarf_funcs, tenant_dwarf_inl, tenant_dwarf_lines). It says
 * "ready PID", then sums 8 MiB in cp_dwarf_loop() for MS milliseconds.
 *
 *   tenant_dwarf_KIND MS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long cp_dwarf_loop(const volatile long *buf, size_t longs);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	size_t bytes = 8u << 20, longs = bytes / sizeof(long);
	long *buf = malloc(bytes), sum = 0;
	double end;

	if (argc < 2 || !buf) {
		fprintf(stderr, "usage: %s MS\n", argv[0]);
		return 2;
	}
	memset(buf, 1, bytes);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	end = now_ms() + atoi(argv[1]);
	while (now_ms() < end)
		sum += cp_dwarf_loop(buf, longs);
	return sum == 42;
}
