/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --max-memory: the profiler watches its own RSS and, above the limit,
 * shrinks its caches rather than growing. The decision is pure (this
 * header); reading RSS is cp_self_rss_bytes(); what a shrink drops is the
 * profile's business.
 */
#ifndef CP_MEM_GUARD_H
#define CP_MEM_GUARD_H

#include <stdbool.h>
#include <linux/types.h>

/* RSS read 10 times a second (~10 us each): system-wide, it can grow by 100 MiB/s */
#define CP_MEM_CHECK_NS		100000000ull
/*
 * Between two shrinks: each halves the symbolizer's cap, so shrinking at
 * every check of a burst ends, and RSS is re-read after the heap is trimmed.
 */
#define CP_MEM_HOLDOFF_NS	100000000ull

struct cp_mem_guard {
	__u64 limit_bytes;
	__u64 rss_bytes;		/* at the last check */
	__u64 peak_bytes;		/* the highest seen at a check */
	__u64 shrinks;			/* times over the limit, and shrunk */
	__u64 last_shrink_ns;
	__u64 next_check_ns;
};

void cp_mem_guard_init(struct cp_mem_guard *g, __u64 limit_bytes);

/* True when it is time to read RSS again (then call cp_mem_guard_over()). */
bool cp_mem_guard_due(struct cp_mem_guard *g, __u64 now_ns);

/*
 * Notes @rss_bytes at @now_ns. True when the profiler must shrink now: RSS
 * over the limit and no shrink in the last CP_MEM_HOLDOFF_NS (counted).
 */
bool cp_mem_guard_over(struct cp_mem_guard *g, __u64 rss_bytes, __u64 now_ns);

/* This process's resident set size from /proc/self/statm; 0 or -errno. */
int cp_self_rss_bytes(__u64 *out);

#endif /* CP_MEM_GUARD_H */
