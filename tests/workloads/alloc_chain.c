// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_chain: one heap object allocated three calls deep, main ->
 * chain_outer -> chain_middle -> chain_inner -> malloc (alloc_chain.h), then
 * written one byte per page, so every sample of the run lands in it. Tests
 * find the expected allocation stack from the cp:chain-* markers on the
 * call lines.
 *
 * With "inline" after PAGES it allocates through chain_inline() instead,
 * a header wrapper inlined into main.
 *
 * usage: alloc_chain [PAGES [inline]]   (default 1024); waits for a line on stdin
 * after printing "ready PID", so the profiler sees the allocation first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_chain.h"

#define PAGE	4096

int main(int argc, char **argv)
{
	size_t pages = argc > 1 ? (size_t)atol(argv[1]) : 1024;
	char line[16], *mem;

	if (argc > 2 && strcmp(argv[2], "inline") == 0)
		mem = chain_inline(pages * PAGE);	/* cp:chain-main-inline */
	else
		mem = chain_outer(pages * PAGE);	/* cp:chain-main */
	if (!mem)
		return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (size_t i = 0; i < pages; i++)
		((volatile char *)mem)[i * PAGE] = 1;
	printf("touched %zu pages, depth %d\n", pages, depth);
	return 0;	/* not freed: the report finds the object its samples fell in */
}
