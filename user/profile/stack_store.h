/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stack store: what was counted per (process, user call stack) over a run,
 * each distinct stack once. A stack's first frame is the instruction
 * charged, the others the return addresses of its callers, innermost first
 * (bpf/stacks.bpf.h counts them, user/live/stack_drain.h reads the frames).
 * The same (process, frames) added twice is one entry whose counts add up.
 *
 * Bounded: at the cap, the eighth of the entries with the fewest samples,
 * ticks and breakpoint hits (the newest of equals last) make room at once,
 * so one full store costs one sort per cap / 8 new stacks; what went is
 * counted (cp_stack_store__evicted(), the report's Limits). Pure, no I/O.
 */
#ifndef CP_STACK_STORE_H
#define CP_STACK_STORE_H

#include <stddef.h>
#include "cacheperf/abi.h"

#define CP_MAX_STACKS	       32768 /* (process, stack) entries of a run's store */
#define CP_MAX_INTERVAL_STACKS 4096  /* ... of an interval's (--pprof-dir) */

/* One (process, stack)'s counts, as the drain and a recording hand them over. */
struct cp_stack_sample {
	__u32 tgid;
	__u32 nr; /* pcs[] used, 1..CP_STACK_DEPTH */
	/* pcs[0]: the sampled instruction; then its callers' return addresses */
	__u64 pcs[CP_STACK_DEPTH];
	struct cp_stack_counts c;
};

/* pcs[0]: the sampled instruction; pcs[1..nr-1]: return addresses of its callers, innermost first
 */
typedef int (*cp_stack_fn)(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
			   const struct cp_stack_counts *c);

struct cp_stack_store;

/* A store of at most @cap entries (0: CP_MAX_STACKS); NULL on allocation failure. */
struct cp_stack_store *cp_stack_store__new(size_t cap);
void cp_stack_store__free(struct cp_stack_store *s);

/*
 * Adds @c to the counts of @nr frames @pcs of process @tgid (a new entry on
 * first sight, evicting at the cap). Returns 0, -EINVAL for @nr outside
 * 1..CP_STACK_DEPTH, or -ENOMEM (the store is as it was).
 */
int cp_stack_store__add(struct cp_stack_store *s, __u32 tgid, const __u64 *pcs, __u32 nr,
			const struct cp_stack_counts *c);

/*
 * Calls @fn for every entry, in the order they were first added (of those
 * left); stops at, and returns, @fn's first nonzero return. 0 otherwise.
 */
int cp_stack_store__for_each(const struct cp_stack_store *s, cp_stack_fn fn, void *ctx);

/* Drops every entry (the eviction count stays). */
void cp_stack_store__clear(struct cp_stack_store *s);

/* Entries held, and entries evicted at the cap so far. */
size_t cp_stack_store__held(const struct cp_stack_store *s);
__u64 cp_stack_store__evicted(const struct cp_stack_store *s);

#endif /* CP_STACK_STORE_H */
