/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The oracle's cache model: per core a private L1D and L2 (set-associative,
 * LRU), a shared LLC, and MESI-style coherence between the cores: a write
 * invalidates every other core's copy, a read of a line another core holds
 * modified is served by that core (HITM). Pure and deterministic.
 *
 * Every access reports the level that served it and, for an L1 miss, its
 * true class:
 *  - compulsory: the core's first touch of the line;
 *  - coherence: the core's copy was invalidated by another core's write:
 *    true sharing when the bytes written since overlap the bytes accessed,
 *    false sharing otherwise;
 *  - conflict: a fully-associative LRU cache of the L1's capacity, fed the
 *    same accesses of the core, holds the line (papers/c2sim.txt §3.1);
 *  - capacity: otherwise.
 * Invalidations remove the line from the fully-associative shadow too, so a
 * coherence loss never reads as a conflict later.
 *
 * Simplifications (named in docs/figures.md, "Accuracy"): an access crossing a line
 * boundary counts on its first line; no prefetchers; no line fill buffer
 * (a second miss to an in-flight line is served where the first was).
 */
#ifndef CP_ORACLE_CACHE_SIM_H
#define CP_ORACLE_CACHE_SIM_H

#include <stdbool.h>
#include <linux/types.h>

#include "classify/lru_model.h"

#define CP_SIM_MAX_CORES	8

enum cp_sim_level {
	CP_SIM_L1 = 0,
	CP_SIM_L2,
	CP_SIM_L3,		/* the LLC, or a clean copy snooped from another core */
	CP_SIM_HITM,		/* another core's modified copy */
	CP_SIM_DRAM,
	CP_SIM_LEVEL_NR,
};

enum cp_miss_class {
	CP_MISS_HIT = 0,	/* not an L1 miss */
	CP_MISS_COMPULSORY,
	CP_MISS_CAPACITY,
	CP_MISS_CONFLICT,
	CP_MISS_TRUE_SHARING,
	CP_MISS_FALSE_SHARING,
	CP_MISS_CLASS_NR,
};

struct cp_sim_geom {
	struct cp_lru_geom l1, l2, llc;	/* line_bytes equal in all three, <= 64 */
	__u32 cores;			/* 1..CP_SIM_MAX_CORES */
};

struct cp_sim_result {
	enum cp_sim_level level;
	enum cp_miss_class cls;
};

struct cp_sim;

/* A model of @g, every cache empty; NULL for a bad geometry or no memory. */
struct cp_sim *cp_sim__new(const struct cp_sim_geom *g);
void cp_sim__free(struct cp_sim *s);

/*
 * Core @core reads or writes @size bytes at @addr. Fills @out. Returns 0,
 * or -ENOMEM (the line table could not grow: the model stops being exact).
 */
int cp_sim__access(struct cp_sim *s, __u32 core, __u64 addr, __u32 size, bool write,
		   struct cp_sim_result *out);

/* "compulsory", "capacity", "conflict", "true_sharing", "false_sharing" ("hit"). */
const char *cp_miss_class_name(enum cp_miss_class c);

#endif /* CP_ORACLE_CACHE_SIM_H */
