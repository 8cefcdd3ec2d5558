/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hashing and linear probing for the open-addressing tables (instruction,
 * miss, object and call-site stores, caches of decodes and symbols).
 *
 * Each table keeps its own way of folding its key into one 64-bit word: the
 * golden outputs list some tables' entries in slot order, so a table's slot
 * of a key must stay bit for bit what it was. What they share is built here
 * from parameters (which bits a slot takes, which shifts a mix uses), so the
 * constants and the probe arithmetic have one home. All static inline: they
 * run several times per replayed sample.
 */
#ifndef CP_HASH_H
#define CP_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* 2^64 / golden ratio: Fibonacci hashing spreads consecutive keys over the high bits */
#define CP_HASH_GOLDEN64 0x9e3779b97f4a7c15ull
/* splitmix64's multipliers (Steele, Lea, Flood 2014), the second rounds of the mixes */
#define CP_HASH_MIX1 0xbf58476d1ce4e5b9ull
#define CP_HASH_MIX2 0x94d049bb133111ebull

/*
 * Returns @key times CP_HASH_GOLDEN64 (Fibonacci hashing): a multiply that
 * carries every key bit into the high bits of the product, so a slot taken
 * from the high bits (cp_hash_slot() with a large @shift) or after a
 * cp_hash_fold() differs for keys that differ in any bit. Pure, no state.
 */
static inline __u64 cp_hash64(__u64 key)
{
	return key * CP_HASH_GOLDEN64;
}

/*
 * Returns @h xor @h shifted right by @shift (0 < @shift < 64): folds the
 * well mixed high bits of a product into the low bits that a mask keeps.
 */
static inline __u64 cp_hash_fold(__u64 h, unsigned int shift)
{
	return h ^ (h >> shift);
}

/*
 * Returns cp_hash_fold(cp_hash_fold(@h, @s1) * CP_HASH_MIX1, @s2): one more
 * multiply round, for keys whose parts a single multiply leaves correlated
 * (an address and a small id xored together). The shifts are the caller's:
 * they decide the slots, so a table keeps the ones its golden outputs saw.
 */
static inline __u64 cp_hash_mix(__u64 h, unsigned int s1, unsigned int s2)
{
	return cp_hash_fold(cp_hash_fold(h, s1) * CP_HASH_MIX1, s2);
}

/*
 * Returns splitmix64's finalizer of @x + CP_HASH_GOLDEN64: a bijection with
 * full avalanche, so keys 0, 1, 2... (CPU numbers) give unrelated values.
 * For pseudo-random choices made from a key, not for table slots.
 */
static inline __u64 cp_splitmix64(__u64 x)
{
	x += CP_HASH_GOLDEN64;
	x = (x ^ (x >> 30)) * CP_HASH_MIX1;
	x = (x ^ (x >> 27)) * CP_HASH_MIX2;
	return x ^ (x >> 31);
}

/*
 * Returns the slot of hash @h in a table of @mask + 1 slots (a power of
 * two): bits @shift and up of @h, cut to the table, so always <= @mask.
 * @shift is 0 for hashes already folded into their low bits, and large for
 * a bare cp_hash64() product whose best bits are its highest (Fibonacci
 * hashing takes the top log2(slots) bits: @shift = 64 - log2(slots)).
 */
static inline size_t cp_hash_slot(__u64 h, unsigned int shift, size_t mask)
{
	return (size_t)(h >> shift) & mask;
}

/*
 * Returns the slot after @i in a table of @mask + 1 slots (a power of two),
 * wrapping to 0 at the end: the step of linear probing, which walks memory
 * forward and so keeps a probe run within few cache lines.
 */
static inline size_t cp_probe_next(size_t i, size_t mask)
{
	return (i + 1) & mask;
}

/*
 * Returns true if slot @home lies cyclically in (@i, @j]: in backward-shift
 * deletion (no tombstones), the entry at @j whose home slot that is must
 * stay where it is when @i empties, as a probe for it starts past @i;
 * otherwise it moves to @i so that probes through @i still find it.
 */
static inline bool cp_probe_between(size_t i, size_t home, size_t j)
{
	return i <= j ? (i < home && home <= j) : (i < home || home <= j);
}

#endif /* CP_HASH_H */
