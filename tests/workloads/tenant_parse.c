// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tenant_parse: a hostile tenant's binary whose unwind and debug info the
 * root profiler must parse within bounds (tests/e2e/test_tenant_files.sh).
 * Prints "ready PID", then walks a 64 MiB buffer for MS milliseconds and
 * exits 0.
 *
 *   tenant_parse cfi MS    in stream(), called from frameless(), which keeps
 *                          no frame pointer and zeroes rbp: a frame-pointer
 *                          walk stops there and the profiler unwinds the
 *                          stack copies by CFI. frameless()'s FDE says
 *                          DW_CFA_undefined of register 50,331,648 before
 *                          the call, which libdw's table of registers is
 *                          sized for (8 bytes each: 384 MiB) when it unwinds
 *                          through that call.
 *   tenant_parse deep MS   in cp_deep_stream() (tenant_parse.S), whose debug
 *                          info nests 300,000 lexical blocks in a unit with
 *                          no subprogram: only a walk of the whole unit
 *                          finds what holds an address there, and libdw's
 *                          dwarf_getscopes() recurses once per level; then
 *                          in cp_deep_shallow(), with ordinary debug info.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (64u << 20)

long cp_deep_stream(const volatile long *buf, size_t longs);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The other functions keep their ordinary debug info. */
static __attribute__((noinline)) long stream(const volatile long *buf, size_t longs)
{
	long sum = 0;

	for (size_t i = 0; i < longs; i += 8) /* one long per 64-byte line */
		sum += buf[i];
	return sum;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static long
frameless(const volatile long *buf, size_t longs)
{
	long sum;

	__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
	/* DW_CFA_undefined, ULEB128 register 0x18 << 21 */
	__asm__ volatile(".cfi_escape 0x07, 0x80, 0x80, 0x80, 0x18");
	sum = stream(buf, longs);
	return sum + 1;
}

static __attribute__((noinline)) long cp_deep_shallow(const volatile long *buf, size_t longs)
{
	return stream(buf, longs);
}

int main(int argc, char **argv)
{
	long *buf = malloc(BUF_BYTES), sum = 0;
	size_t longs = BUF_BYTES / sizeof(long);
	bool deep;
	double end;

	if (argc < 3 || !buf || (strcmp(argv[1], "cfi") && strcmp(argv[1], "deep")))
		return 2;
	deep = !strcmp(argv[1], "deep");
	memset(buf, 1, BUF_BYTES);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	end = now_ms() + atoi(argv[2]);
	while (now_ms() < end)
		sum += deep ? cp_deep_stream(buf, longs) + cp_deep_shallow(buf, longs)
			    : frameless(buf, longs);
	return sum == 42;
}
