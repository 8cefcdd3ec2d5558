// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bp_hot: a hot loop whose loads miss for known reasons, for breakpoint
 * sampling end to end and for its overhead.
 *
 *   conflict  8 load instructions, each walking a column of 64 pages of its
 *             own (stride 4096 bytes): every access on one L1 set, each on
 *             a line of its own, so each settles as a conflict
 *   padded    8 load instructions, each walking 64 rows of 4096 + 64 bytes:
 *             a new set at every row, no conflict; each fills its history
 *
 * Memory is fresh (no transparent huge pages), so the first pass faults
 * every page in: the page-fault source (--source faults) sees each
 * instruction's faults in a run, as a PMU would see its misses. After the
 * passes it prints "loop_ns N", the time of the passes after the first.
 *
 * usage: bp_hot [PASSES]   (default 200000, about a second here)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define WALKS	8
#define ROWS	64
#define PAGE	4096
#define LINE	64
#define COL_BYTES	(WALKS * ROWS * PAGE)
#define PAD_BYTES	(WALKS * ROWS * (PAGE + LINE))

/*
 * 8 walks of 64 rows @stride bytes apart, the second starting where the
 * first ends (in %rsi); each .rept copy is a load instruction of its own.
 */
#define WALKS_ASM(stride)						\
	".rept 8\n\t"							\
	"mov $64, %%ecx\n"						\
	"1:\n\t"								\
	"movzbl (%%rsi), %%eax\n\t"					\
	"add $" #stride ", %%rsi\n\t"					\
	"dec %%ecx\n\t"							\
	"jnz 1b\n\t"							\
	".endr"

__attribute__((noinline)) static void conflict_pass(const char *base)
{
	asm volatile(WALKS_ASM(4096) /* CP_MARK conflict loads */
		     : "+S"(base) : : "rax", "rcx", "memory", "cc");
}

__attribute__((noinline)) static void padded_pass(const char *base)
{
	asm volatile(WALKS_ASM(4160) /* CP_MARK padded loads */
		     : "+S"(base) : : "rax", "rcx", "memory", "cc");
}

static char *fresh(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* one fault per page, not one per 2 MiB */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

int main(int argc, char **argv)
{
	long passes = argc > 1 ? atol(argv[1]) : 200000;
	char *col = fresh(COL_BYTES), *pad = fresh(PAD_BYTES);
	struct timespec t0, t1;

	_Static_assert(PAGE + LINE == 4160 && ROWS == 64 && WALKS == 8, "the asm's constants");
	if (!col || !pad || passes < 1) {
		fprintf(stderr, "usage: bp_hot [PASSES >= 1]\n");
		return 2;
	}
	conflict_pass(col);
	padded_pass(pad);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 1; i < passes; i++) {
		conflict_pass(col);
		padded_pass(pad);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("loop_ns %lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll +
				   (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
