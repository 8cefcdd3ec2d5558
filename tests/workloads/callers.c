// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * callers: one instruction (touch()'s store, cp:callers-touch) reached by
 * two known call paths, so that its call stacks can be checked:
 *
 *   main -> path_a -> via_a -> inner -> touch   2 x PAGES pages
 *   main -> path_b ----------> inner -> touch       PAGES pages
 *
 * touch() writes one byte into each page of a fresh mapping, so with
 * --source faults each store is one page fault: two thirds of them through
 * path_a, one third through path_b. The expected frames are the call lines
 * marked cp:callers-*. Built with frame pointers (the workloads' flags); no
 * function is inlined and each does work after its call, so no call is a
 * tail call and every caller keeps its frame.
 *
 * Built again as callers_nofp (-DCP_INNER_NO_FRAME): inner() then keeps no
 * frame pointer and zeroes rbp before its call, as distribution libraries
 * built without frame pointers use rbp for data. A frame-pointer walk from
 * touch() stops at inner() (both paths give the same two frames); only the
 * CFI unwinding of a stack copy tells path_a from path_b.
 *
 * usage: callers [PAGES [LINGER_MS]]   (default 256, 0); waits for a line on
 * stdin after printing "ready PID", so a profiler that measures its costs
 * first is attached before the first touch; stays LINGER_MS after the last
 * (a profiler unwinds stack copies only while the process is alive).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE	4096

static volatile int depth;	/* work after each call: no tail calls */

__attribute__((noinline)) static void count(void)
{
	depth++;
}

/*
 * Not a leaf (it calls count()): GCC sets up no frame in a leaf that needs
 * no stack, even with -fno-omit-frame-pointer, and a frame-pointer walk from
 * inside such a leaf skips its caller (docs/stacks.md).
 */
__attribute__((noinline)) static void touch(char *mem, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)mem)[i * PAGE] = 1;	/* cp:callers-touch */
	count();
}

#ifdef CP_INNER_NO_FRAME
__attribute__((noinline, optimize("omit-frame-pointer"))) static void inner(char *mem,
									     size_t pages)
{
	/* rbp as data: saved by the prologue (its CFI says where), not a frame */
	__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
#else
__attribute__((noinline)) static void inner(char *mem, size_t pages)
{
#endif
	touch(mem, pages);	/* cp:callers-inner */
	depth++;
}

__attribute__((noinline)) static void via_a(char *mem, size_t pages)
{
	inner(mem, pages);	/* cp:callers-via-a */
	depth++;
}

__attribute__((noinline)) static void path_a(char *mem, size_t pages)
{
	via_a(mem, pages);	/* cp:callers-path-a */
	depth++;
}

__attribute__((noinline)) static void path_b(char *mem, size_t pages)
{
	inner(mem, pages);	/* cp:callers-path-b */
	depth++;
}

int main(int argc, char **argv)
{
	size_t pages = argc > 1 ? (size_t)atol(argv[1]) : 256;
	char line[16], *mem;

	mem = mmap(NULL, 3 * pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	/* one fault per page: no transparent huge page filling 512 at once */
	madvise(mem, 3 * pages * PAGE, MADV_NOHUGEPAGE);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	path_a(mem, 2 * pages);	/* cp:callers-main-a */
	path_b(mem + 2 * pages * PAGE, pages);	/* cp:callers-main-b */
	printf("touched %zu pages, depth %d\n", 3 * pages, depth);
	fflush(stdout);
	if (argc > 2)
		usleep((useconds_t)atol(argv[2]) * 1000);
	return 0;
}
