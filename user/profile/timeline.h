/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The timeline: per interval, the counts of the instructions with the most
 * of them, so a report can draw each issue's impact over the run (the HTML
 * report's timeline, docs/html.md). Fed with each interval's counter
 * entries (cp_profile__add_counts()), live and from a recording's counter
 * sections alike. The rolling epochs (rolling.h) cannot serve: they are
 * live only, span one window, and are emptied as they age.
 *
 * An interval is the counter batches that come with no sample between
 * them: the live run drains its samples, then walks the counter map in
 * batches, once per interval, and a recording keeps that order. It ends at
 * the time of the latest sample before it. An interval no sample came in
 * is merged with the next (its counts are not lost).
 *
 * Bounded: CP_TL_TOP instructions per interval (an issue's instructions
 * have >= 1 % of the run's counts, so in an interval they fall out of the
 * top only when 64 others each had more there); the rest are in the
 * interval's totals only. At CP_TL_INTERVALS intervals neighbours are
 * merged pairwise, and each kept interval spans twice as many from then
 * on: the whole run, at a resolution that halves as it grows. Memory:
 * CP_TL_INTERVALS x CP_TL_TOP x 40 bytes, about 300 KiB. Pure.
 */
#ifndef CP_TIMELINE_H
#define CP_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/abi.h"
#include "profile/insn_store.h"

#define CP_TL_INTERVALS 120
#define CP_TL_TOP	64

/* An instruction's counts in an interval (or an interval's totals). */
struct cp_tl_entry {
	struct cp_ip_key key;
	__u64 misses;  /* sampled load and store misses */
	__u64 samples; /* sampled loads and stores */
	__u64 ticks;   /* soft source: timer ticks */
};

struct cp_tl_interval {
	__u64 end_ns;			   /* the latest sample time in it; 0: none */
	__u32 spans;			   /* counter intervals merged into it */
	__u32 nr;			   /* entries in top[] */
	struct cp_tl_entry total;	   /* every instruction's counts (key unused) */
	struct cp_tl_entry top[CP_TL_TOP]; /* in no particular order */
};

struct cp_timeline;

/*
 * A timeline ranking instructions by time samples (@soft: the soft
 * source), else by misses once any came (before: by samples, as for a
 * source with no levels). NULL when out of memory.
 */
struct cp_timeline *cp_timeline__new(bool soft);
void cp_timeline__free(struct cp_timeline *t);

/*
 * @n counter entries. @mark: the samples received so far; the entries open
 * a new interval when it differs from the last call's. @time_ns: the
 * latest sample time.
 */
void cp_timeline__add(struct cp_timeline *t, const struct cp_insn *v, size_t n, __u64 mark,
		      __u64 time_ns);

/* Intervals kept, and the @i-th, oldest first. */
__u32 cp_timeline__count(const struct cp_timeline *t);
const struct cp_tl_interval *cp_timeline__get(const struct cp_timeline *t, __u32 i);

/* The weight an entry is ranked by in @t now. */
__u64 cp_tl_weight(const struct cp_timeline *t, const struct cp_tl_entry *e);

#endif /* CP_TIMELINE_H */
