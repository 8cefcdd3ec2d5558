/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --max-memory: the profiler watches its own memory as the kernel counts
 * it (machine/self_mem.h: its cgroup's, or its status counters and memfds)
 * and, above the limit, shrinks its caches rather than growing. The
 * decision is pure (cp_mem_guard_*); the reading is cp_self_mem_read();
 * what a shrink drops is the profile's business.
 */
#ifndef CP_MEM_GUARD_H
#define CP_MEM_GUARD_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * Memory read 10 times a second near the limit: system-wide, it can grow by
 * CP_MEM_GROWTH_PER_S. Further below, the next reading is when that growth
 * could reach the limit, at most CP_MEM_CHECK_MAX_NS later: the reading was
 * a third of the profiler's steady CPU time under -p at 10 a second.
 */
#define CP_MEM_CHECK_NS	    100000000ull
#define CP_MEM_CHECK_MAX_NS 1000000000ull
#define CP_MEM_GROWTH_PER_S (100ull << 20)
/*
 * Between two shrinks: each halves the symbolizer's cap, so shrinking at
 * every check of a burst ends, and memory is re-read after the heap is trimmed.
 */
#define CP_MEM_HOLDOFF_NS 100000000ull
/*
 * A reading asked for at once (a new symbolizer snapshot) waits this long
 * after the last: the kernel's count costs up to a millisecond to read
 * (the memfds in /proc/self/maps and fd), and -a takes hundreds of
 * snapshots a second.
 */
#define CP_MEM_URGENT_NS 10000000ull

struct cp_mem_guard {
	__u64 limit_bytes;
	__u64 bytes;	  /* at the last check */
	__u64 peak_bytes; /* the highest seen at a check, or the kernel's peak */
	__u64 shrinks;	  /* times over the limit, and shrunk */
	__u64 last_shrink_ns;
	__u64 next_check_ns;
	__u64 last_read_ns; /* of the last cp_mem_guard_over() */
};

void cp_mem_guard_init(struct cp_mem_guard *g, __u64 limit_bytes);

/*
 * True when it is time to read memory again (then call cp_mem_guard_over()):
 * CP_MEM_CHECK_NS after the last time it was, or up to CP_MEM_CHECK_MAX_NS
 * while the last reading is so far below the limit that CP_MEM_GROWTH_PER_S
 * cannot reach it sooner.
 */
bool cp_mem_guard_due(struct cp_mem_guard *g, __u64 now_ns);

/* True when a reading asked for at once may be taken: CP_MEM_URGENT_NS after the last. */
bool cp_mem_guard_urgent(const struct cp_mem_guard *g, __u64 now_ns);

/*
 * Notes @bytes at @now_ns. True when the profiler must shrink now: memory
 * over the limit and no shrink in the last CP_MEM_HOLDOFF_NS (counted).
 */
bool cp_mem_guard_over(struct cp_mem_guard *g, __u64 bytes, __u64 now_ns);

/* Notes the kernel's own peak (memory.peak, VmHWM), which sees between checks. */
void cp_mem_guard_peak(struct cp_mem_guard *g, __u64 kernel_peak_bytes);

#endif /* CP_MEM_GUARD_H */
