// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * slow_touch: one store instruction writes a fresh page every 50 ms while
 * the program allocates and frees a block each time, for SECONDS. With the
 * page-fault source each write is a sample of the same instruction, so the
 * breakpoint manager arms it, and at 20 hits a second its 64-access history
 * stays unfilled, the breakpoint armed, for about 3 s. What a profiler
 * killed meanwhile must leave behind: nothing (tests/e2e/test_sigkill.sh).
 *
 * usage: slow_touch SECONDS    prints "slow_touch: N pages, sum S" (S == N)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE		4096
#define STEP_US		50000

__attribute__((noinline, noclone)) static void touch(volatile char *p)
{
	*p = 1;	/* CP_MARK slow store */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) * (1000000 / STEP_US) : 0, sum = 0;
	char *mem;

	if (n <= 0) {
		fprintf(stderr, "usage: slow_touch SECONDS\n");
		return 2;
	}
	mem = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (long i = 0; i < n; i++) {
		char *b = malloc(64 + (size_t)i % 512);

		if (!b)
			return 1;
		memset(b, 0, 64);
		touch(mem + i * PAGE);
		free(b);
		usleep(STEP_US);
	}
	for (long i = 0; i < n; i++)
		sum += mem[i * PAGE];
	printf("slow_touch: %ld pages, sum %ld\n", n, sum);
	return sum == n ? 0 : 1;
}
