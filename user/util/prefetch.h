/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Prefetch hints for the replay's read-ahead: every cache line of an entry
 * that spans several (a miss store line is 424 bytes; a hint for its first
 * 64 left the handling waiting on the rest). Hints only: no effect on results.
 */
#ifndef CP_PREFETCH_H
#define CP_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#define CP_PREFETCH_LINE 64

static inline void cp_prefetch_range(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(CP_PREFETCH_LINE - 1);
	uintptr_t end = (uintptr_t)p + len;

	for (; a < end; a += CP_PREFETCH_LINE)
		__builtin_prefetch((const void *)a);
}

#endif /* CP_PREFETCH_H */
