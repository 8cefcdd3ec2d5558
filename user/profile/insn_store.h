/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Instruction store (paper §3.4): per (process, instruction) totals of every
 * sampled access, accumulated from the per-interval BPF counter snapshots;
 * the L1 sets and lines its forwarded misses landed on; and its access
 * history (addresses from breakpoints), which tells conflict from capacity
 * misses. Bounded: at the cap, new instructions are counted as dropped, not
 * stored; histories come from a separate pool of CP_INSN_MAX_HISTORIES,
 * because only the few instructions the breakpoints watch have one.
 */
#ifndef CP_INSN_STORE_H
#define CP_INSN_STORE_H

#include <stddef.h>
#include "cacheperf/abi.h"

#define CP_INSN_HISTORY	      64   /* addresses kept per access history (paper §3.5) */
#define CP_INSN_MAX_HISTORIES 1024 /* instructions with a history, per store */
#define CP_INSN_SETS	      4	   /* L1 sets remembered per instruction */
#define CP_INSN_MISS_ADDRS    4	   /* miss addresses (distinct 64-byte lines) kept */

/* An L1 set an instruction's forwarded misses landed on. */
struct cp_insn_set {
	__u32 set;
	__u32 misses;
};

struct cp_insn {
	struct cp_ip_key key;
	struct cp_ip_counts counts;
	__u64 fwd_misses;   /* forwarded misses noted (cp_insn_store__note_miss) */
	__u64 time_samples; /* soft source: timer ticks on it (__add_time) */
	__u32 nr_sets;
	__u32 other_set_misses; /* ... on sets beyond sets[] */
	struct cp_insn_set sets[CP_INSN_SETS];
	__u32 nr_miss_addrs;
	__u32 history;			      /* 1 + index of its history in the pool; 0: none */
	bool located;			      /* symbolized (cp_insn_store__set_located()) */
	__u64 miss_addrs[CP_INSN_MISS_ADDRS]; /* first miss address on each of its first lines */
};

/* The latest accesses of one instruction, oldest replaced once full. */
struct cp_insn_history {
	__u32 len;  /* addresses in addrs[] */
	__u32 next; /* slot the next address overwrites once full */
	__u64 seen; /* addresses ever added */
	__u64 addrs[CP_INSN_HISTORY];
};

struct cp_insn_store;

/* A store for at most @cap instructions; NULL on allocation failure. */
struct cp_insn_store *cp_insn_store__new(size_t cap);
void cp_insn_store__free(struct cp_insn_store *s);

/* Adds @c to the totals of @key. Returns 0, or -ENOSPC (counted) when full. */
int cp_insn_store__add(struct cp_insn_store *s, const struct cp_ip_key *key,
		       const struct cp_ip_counts *c);

/* Hints that @key comes next: its slot is fetched meanwhile (cp_miss_store__prefetch()). */
void cp_insn_store__prefetch(const struct cp_insn_store *s, const struct cp_ip_key *key);

/*
 * The second hint, some records later: reads the slot the first one fetched
 * and fetches every cache line of the entry it names.
 */
void cp_insn_store__prefetch_entry(const struct cp_insn_store *s, const struct cp_ip_key *key);

/*
 * Notes one forwarded miss of @key at @addr, which maps to L1 set @set:
 * counted per set (the first CP_INSN_SETS sets, the rest together) and the
 * address kept if it starts a new line among the first CP_INSN_MISS_ADDRS.
 * Creates the instruction if needed. Returns 1 when the caller should try
 * to symbolize it: while it is not located (cp_insn_store__set_located()), at
 * its 1st, 2nd, 4th, 8th ... miss, so a failed try (before its process's new
 * maps were read) is retried, but an address that never resolves (code
 * without a file: JIT, anonymous) costs a lookup per doubling, not per
 * sample. 0 otherwise, or -ENOSPC (counted).
 */
int cp_insn_store__note_miss(struct cp_insn_store *s, const struct cp_ip_key *key, __u64 addr,
			     __u32 set);

/* @key was symbolized: cp_insn_store__note_miss() stops asking. */
void cp_insn_store__set_located(struct cp_insn_store *s, const struct cp_ip_key *key);

/*
 * Appends @addr to @key's access history (the breakpoint manager feeds it),
 * creating the instruction and its history if needed. Returns 0, or
 * -ENOSPC when the store or the history pool is full (counted).
 */
int cp_insn_store__add_history(struct cp_insn_store *s, const struct cp_ip_key *key, __u64 addr);

/*
 * Adds @n timer ticks that interrupted @key (soft source: the time profile,
 * memory instruction or not), creating the instruction if needed. Returns
 * 0 or -ENOSPC (counted).
 */
int cp_insn_store__add_time(struct cp_insn_store *s, const struct cp_ip_key *key, __u64 n);

/*
 * The time samples of @in: its ticks when the source counted them, else
 * its sampled accesses (with the soft source every access is a tick).
 */
__u64 cp_insn_time_samples(const struct cp_insn *in);

/*
 * Adds everything @src holds but its histories to @dst: counts, forwarded
 * misses, sets, miss addresses. Returns 0, or -ENOSPC when @dst was full
 * for some instructions (counted in its dropped).
 */
int cp_insn_store__merge(struct cp_insn_store *dst, const struct cp_insn_store *src);

/*
 * Gives @key in @dst the access history it has in @src, oldest first,
 * unless @dst has one already (an access pattern does not age out).
 * Returns 0, or -ENOSPC (counted) when @dst has no room.
 */
int cp_insn_store__copy_history(struct cp_insn_store *dst, const struct cp_insn_store *src,
				const struct cp_ip_key *key);

/* The counts of every instruction of @s summed into @out. */
void cp_insn_store__totals(const struct cp_insn_store *s, struct cp_ip_counts *out);

/* Empties the store, histories too (the dropped counters are kept). */
void cp_insn_store__clear(struct cp_insn_store *s);

/* The access history of @in, or NULL when it has none. */
const struct cp_insn_history *cp_insn_store__history(const struct cp_insn_store *s,
						     const struct cp_insn *in);

/* History entries not kept: the instruction had none and the pool was full. */
__u64 cp_insn_store__history_dropped(const struct cp_insn_store *s);

/* The totals of @key, or NULL. */
const struct cp_insn *cp_insn_store__find(const struct cp_insn_store *s,
					  const struct cp_ip_key *key);

size_t cp_insn_store__count(const struct cp_insn_store *s);
__u64 cp_insn_store__dropped(const struct cp_insn_store *s);

/*
 * Fills @out with up to @max instructions, most sampled misses first (then
 * most samples, then lowest ip, so the order is stable). Returns how many.
 */
size_t cp_insn_store__top(const struct cp_insn_store *s, const struct cp_insn **out, size_t max);

#endif /* CP_INSN_STORE_H */
