/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Instruction store (paper §3.4): per (process, instruction) totals of every
 * sampled access, accumulated from the per-interval BPF counter snapshots.
 * Bounded: at the cap, new instructions are counted as dropped, not stored.
 */
#ifndef CP_INSN_STORE_H
#define CP_INSN_STORE_H

#include <stddef.h>
#include "cacheperf/abi.h"

struct cp_insn {
	struct cp_ip_key key;
	struct cp_ip_counts counts;
};

struct cp_insn_store;

/* A store for at most @cap instructions; NULL on allocation failure. */
struct cp_insn_store *insn_store__new(size_t cap);
void insn_store__free(struct cp_insn_store *s);

/* Adds @c to the totals of @key. Returns 0, or -ENOSPC (counted) when full. */
int insn_store__add(struct cp_insn_store *s, const struct cp_ip_key *key,
		    const struct cp_ip_counts *c);

/* The totals of @key, or NULL. */
const struct cp_insn *insn_store__find(const struct cp_insn_store *s, const struct cp_ip_key *key);

size_t insn_store__count(const struct cp_insn_store *s);
__u64 insn_store__dropped(const struct cp_insn_store *s);

/*
 * Fills @out with up to @max instructions, most sampled misses first (then
 * most samples, then lowest ip, so the order is stable). Returns how many.
 */
size_t insn_store__top(const struct cp_insn_store *s, const struct cp_insn **out, size_t max);

#endif /* CP_INSN_STORE_H */
