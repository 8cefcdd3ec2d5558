/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A known 3-deep allocation chain, chain_outer -> chain_middle ->
 * chain_inner -> malloc, for tests that check allocation stacks: they find
 * the expected lines from the cp:chain-* markers (the call lines). The
 * functions are not inlined, and each does work after its call, so no call
 * is a tail call. Included by tests/workloads/alloc_chain.c and by the
 * golden recording's program (tests/golden/chain.c), which brings its own
 * malloc.
 */
#ifndef CP_WORKLOADS_ALLOC_CHAIN_H
#define CP_WORKLOADS_ALLOC_CHAIN_H

#include <stddef.h>

void *malloc(size_t size);

static volatile int depth;	/* work after each call: no tail calls */

__attribute__((noinline)) static char *chain_inner(size_t size)
{
	char *p = malloc(size);	/* cp:chain-inner */

	depth++;
	return p;
}

__attribute__((noinline)) static char *chain_middle(size_t size)
{
	char *p = chain_inner(size);	/* cp:chain-middle */

	depth++;
	return p;
}

__attribute__((noinline)) static char *chain_outer(size_t size)
{
	char *p = chain_middle(size);	/* cp:chain-outer */

	depth++;
	return p;
}

/*
 * An allocation wrapper always inlined, as projects write them in headers
 * (Phoenix's CALLOC): the return address is in its caller's code, and the
 * caller's line is the inline call site DWARF records.
 */
__attribute__((always_inline)) static inline char *chain_inline(size_t size)
{
	char *p = malloc(size);	/* cp:chain-inline */

	depth++;
	return p;
}

#endif /* CP_WORKLOADS_ALLOC_CHAIN_H */
