// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_paths: allocations from more distinct call stacks than the
 * allocation stack map holds (cacheperf/alloc.h), then one heap object from
 * a call site never seen before, written one byte per page so every sample
 * of the run lands in it. Path i is PATH_DEPTH calls deep, each through
 * path_left() or path_right() as bit k of i says, so paths 0..2^PATH_DEPTH-1
 * are as many distinct stacks; each path allocates (and frees) REPEAT times,
 * so the probes' per-call-site stack cache (taken again every
 * CP_ALLOC_STACK_REFRESH allocations there) takes a stack on every path.
 *
 * usage: alloc_paths [PATHS [PAGES]]   (default 24000 paths, 1024 pages);
 * prints "ready PID" after the paths and waits for a line on stdin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_DEPTH	16
#define REPEAT		80
#define PAGE		4096

static void *path_left(unsigned int path, int depth);
static void *path_right(unsigned int path, int depth);

/* Allocates and frees REPEAT times at the end of path @path; one pointer kept. */
static __attribute__((noinline)) void *path_leaf(void)
{
	void *p = NULL;

	for (int i = 0; i < REPEAT; i++) {
		free(p);
		p = malloc(32);
	}
	return p;
}

/* The next call of the path: not a tail call, so each level keeps its frame. */
static __attribute__((noinline)) void *path_next(unsigned int path, int depth)
{
	void *p;

	if (depth == PATH_DEPTH)
		return path_leaf();
	p = (path >> depth) & 1 ? path_right(path, depth + 1) : path_left(path, depth + 1);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static __attribute__((noinline)) void *path_left(unsigned int path, int depth)
{
	void *p = path_next(path, depth);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static __attribute__((noinline)) void *path_right(unsigned int path, int depth)
{
	void *p = path_next(path, depth);

	__asm__ volatile("" : : "r"(p) : "memory");
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

	if (paths > 1u << PATH_DEPTH)
		paths = 1u << PATH_DEPTH;
	for (unsigned int i = 0; i < paths; i++)
		free(path_next(i, 0));
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
