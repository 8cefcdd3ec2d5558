/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Rolling summaries: the instruction and miss stores of the last window,
 * kept as a ring of per-interval epochs. The profile feeds the epoch that
 * is filling; at each interval it closes and the oldest one is emptied to
 * take its place, so old data ages out and the memory is the same after an
 * hour or a month. A window is the epochs merged into fresh stores.
 *
 * Memory bound: the epochs share CP_ROLL_INSNS instructions and
 * CP_ROLL_LINES lines (each epoch gets its part, however many intervals a
 * window has), and a merged window holds at most as many again. A store's
 * table has a power of two of slots, at least twice its cap, so the ring
 * has at most 4 x CP_ROLL_INSNS instruction slots (288 bytes each) and
 * 4 x CP_ROLL_LINES line slots (424 bytes), and a window at most half as many
 * (sized by what its epochs hold):
 * 6 x 16384 x 289 + 6 x 16384 x 425 bytes, under 68 MiB, whatever the run's
 * length, plus the L1 set counters. What does not fit is counted (the
 * stores' dropped and evicted counters), never grown into.
 */
#ifndef CP_ROLLING_H
#define CP_ROLLING_H

#include <linux/types.h>

#include "cacheperf/abi.h"
#include "machine/geometry.h"
#include "profile/insn_store.h"
#include "profile/miss_store.h"

#define CP_ROLL_MAX_INTERVALS 60    /* intervals in a window */
#define CP_ROLL_INSNS	      16384 /* instructions over all epochs, and in a window */
#define CP_ROLL_LINES	      16384 /* lines over all epochs, and in a window */
#define CP_ROLL_MIN_PER_EPOCH 256   /* ... but at least this many per epoch */

struct cp_rolling;

/* The stores of a window (cp_roll_window_free() them) and its span. */
struct cp_roll_window {
	struct cp_insn_store *insns;
	struct cp_miss_store *misses;
	struct cp_stats bpf; /* the BPF counters' growth over the window */
	__u64 start_ns;	     /* start of its oldest epoch */
	__u64 insns_dropped; /* instructions a full window store could not take */
};

/*
 * A ring for windows of @nr_intervals intervals (1..CP_ROLL_MAX_INTERVALS)
 * mapping misses onto @l1, whose first epoch starts at @start_ns with the
 * BPF counters at @bpf. NULL when out of memory or the geometry is unusable.
 */
struct cp_rolling *cp_rolling__new(const struct cp_cache_level *l1, unsigned int nr_intervals,
				   __u64 start_ns, const struct cp_stats *bpf);
void cp_rolling__free(struct cp_rolling *r);

/* The stores of the epoch filling now: the profile adds to them as to the whole run's. */
struct cp_insn_store *cp_rolling__insns(struct cp_rolling *r);
struct cp_miss_store *cp_rolling__misses(struct cp_rolling *r);

/*
 * The epoch filling ends at @now_ns with the BPF counters at @bpf; the
 * oldest epoch, past the window, is emptied and starts filling.
 */
void cp_rolling__rotate(struct cp_rolling *r, __u64 now_ns, const struct cp_stats *bpf);

/*
 * The epoch that closed at the last cp_rolling__rotate(): its instructions
 * (valid until the next rotation) and its span in @start_ns and @end_ns.
 * NULL before the first rotation. One interval's data, as --pprof-dir
 * writes it (docs/pprof.md).
 */
const struct cp_insn_store *cp_rolling__last(const struct cp_rolling *r, __u64 *start_ns,
					     __u64 *end_ns);

/*
 * Merges the epochs of the window into @out, which ends now with the BPF
 * counters at @bpf; instructions get the access histories @whole (the run's
 * store) has for them, as an access pattern does not age. 0 or -ENOMEM.
 */
int cp_rolling__window(const struct cp_rolling *r, const struct cp_insn_store *whole,
		       const struct cp_stats *bpf, struct cp_roll_window *out);
void cp_roll_window_free(struct cp_roll_window *w);

#endif /* CP_ROLLING_H */
