// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_paths: allocations from more distinct call stacks than the
 * allocation stack maps hold (cacheperf/alloc.h), then one heap object from
 * a call site never seen before, written one byte per page so every sample
 * of the run lands in it.
 *
 * Path i calls malloc under a frame record of its own whose return address
 * is a made-up one, path_ret(i): the frame-pointer walk of the probes then
 * sees PATHS distinct stacks (malloc's caller, path_ret(i), then the real
 * frames), and as many call sites (the caller and the return address of
 * its frame), each taking its stack at its first allocation. x86-64 only.
 * A long run's pace: BATCH paths, then a pause of PAUSE_US, and a pause
 * before the last call site.
 *
 * usage: alloc_paths [PATHS [PAGES]]   (default 24000 paths, 1024 pages);
 * prints "ready PID" after the paths and waits for a line on stdin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PAGE		4096
#define BATCH		500
#define PAUSE_US	50000

struct frame_record {
	void *next;
	uintptr_t ret;
};

/* A return address no code has: distinct for each path. */
static uintptr_t path_ret(unsigned int path)
{
	return 0x10000 + (uintptr_t)path * 16;
}

/*
 * malloc(32) with rbp pointing to a frame record whose return address is
 * path_ret(@path) and whose next record is this function's own. Below the
 * red zone, stack aligned for the call; rbp and rsp restored after.
 */
static __attribute__((noinline)) void *path_alloc(unsigned int path)
{
	struct frame_record fr = { __builtin_frame_address(0), path_ret(path) };
	void *p;

	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "sub $128, %%rsp\n\t"
			 "and $-16, %%rsp\n\t"
			 "push %%rbp\n\t"
			 "sub $8, %%rsp\n\t"
			 "mov %[fr], %%rbp\n\t"
			 "mov $32, %%edi\n\t"
			 "call malloc@PLT\n\t"
			 "add $8, %%rsp\n\t"
			 "pop %%rbp\n\t"
			 "mov %%rbx, %%rsp"
			 : "=a"(p)
			 : [fr] "r"(&fr)
			 : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0",
			   "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "memory", "cc");
	return p;
}

/* The call site that comes last: its object is the one the samples fall in. */
static __attribute__((noinline)) char *late_site(size_t bytes)
{
	char *mem = malloc(bytes);	/* cp:late-site */

	__asm__ volatile("" : : "r"(mem) : "memory");
	return mem;
}

int main(int argc, char **argv)
{
	unsigned int paths = argc > 1 ? (unsigned int)atoi(argv[1]) : 24000;
	size_t pages = argc > 2 ? (size_t)atol(argv[2]) : 1024;
	char line[16], *mem;

	for (unsigned int i = 0; i < paths; i++) {
		free(path_alloc(i));
		if ((i + 1) % BATCH == 0)
			usleep(PAUSE_US);
	}
	usleep(4 * PAUSE_US);
	mem = late_site(pages * PAGE);	/* cp:late-main */
	if (!mem)
		return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (size_t i = 0; i < pages; i++)
		mem[i * PAGE] = 1;
	printf("touched %zu pages after %u paths\n", pages, paths);
	return 0;	/* not freed: the report finds the object its samples fell in */
}
