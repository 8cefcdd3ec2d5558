/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * C2Sim's definition of a conflict miss (papers/c2sim.txt §3.1) applied to
 * one breakpoint history: the addresses run through a set-associative LRU
 * model of L1 and through a fully-associative LRU cache of the same
 * capacity; a conflict miss is a miss of the set-associative cache that
 * hits in the fully-associative one. Both start empty, so first touches
 * miss in both (compulsory) and never count as conflicts.
 *
 * Evidence, not the decision: a history holds one instruction's accesses
 * only, so the model sees none of the traffic of other instructions. The
 * classifier decides on set counts (cacheperf/breakpoint.h); the simulated
 * conflict share is reported next to that decision. Pure.
 */
#ifndef CP_LRU_MODEL_H
#define CP_LRU_MODEL_H

#include <stddef.h>
#include <linux/types.h>

#define CP_LRU_MAX_ACCESSES 1024 /* longest sequence simulated */

/* The cache modelled: sets x ways lines of line_bytes. */
struct cp_lru_geom {
	__u32 line_bytes;
	__u32 sets;
	__u32 ways;
};

struct cp_lru_result {
	__u32 accesses;
	__u32 lines;	  /* distinct lines */
	__u32 compulsory; /* first touches: misses in both caches */
	__u32 sa_misses;  /* set-associative LRU, compulsory included */
	__u32 fa_misses;  /* fully-associative LRU of sets x ways lines */
	__u32 conflict;	  /* set-associative misses that hit fully-associatively */
};

/*
 * Runs @n addresses (oldest first) through both models of @g. Returns 0
 * with @out filled, -EINVAL for a geometry with a zero field, -E2BIG for
 * more than CP_LRU_MAX_ACCESSES addresses.
 */
int cp_lru_simulate(const struct cp_lru_geom *g, const __u64 *addrs, size_t n,
		    struct cp_lru_result *out);

/* Conflict misses per set-associative miss, 0..1; 0 when nothing missed. */
double cp_lru_conflict_share(const struct cp_lru_result *r);

/*
 * Conflict misses per set-associative miss that was not a first touch,
 * 0..1; -1 when every miss was a first touch (the lines fit).
 */
double cp_lru_reuse_conflict_share(const struct cp_lru_result *r);

#endif /* CP_LRU_MODEL_H */
