// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The ring of per-interval epochs behind rolling summaries (see rolling.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/bpf_stats.h"
#include "profile/rolling.h"

_Static_assert(sizeof(struct cp_stats) % sizeof(__u64) == 0, "cp_stats is all __u64 counters");

struct cp_epoch {
	struct cp_insn_store *insns;
	struct cp_miss_store *misses;
	__u64 start_ns;
	struct cp_stats start; /* the BPF counters as it started */
};

struct cp_rolling {
	struct cp_cache_level l1;
	unsigned int nr;   /* epochs: the window's intervals and the one filling */
	unsigned int cur;  /* the one filling */
	unsigned int used; /* epochs started so far, up to nr */
	struct cp_epoch ep[];
};

struct cp_rolling *cp_rolling__new(const struct cp_cache_level *l1, unsigned int nr_intervals,
				   __u64 start_ns, const struct cp_stats *bpf)
{
	struct cp_rolling *r;
	size_t insns, lines;

	if (!nr_intervals || nr_intervals > CP_ROLL_MAX_INTERVALS)
		return NULL;
	r = calloc(1, sizeof(*r) + (nr_intervals + 1) * sizeof(r->ep[0]));
	if (!r)
		return NULL;
	r->l1 = *l1;
	r->nr = nr_intervals + 1;
	insns = CP_ROLL_INSNS / r->nr;
	lines = CP_ROLL_LINES / r->nr;
	if (insns < CP_ROLL_MIN_PER_EPOCH)
		insns = CP_ROLL_MIN_PER_EPOCH;
	if (lines < CP_ROLL_MIN_PER_EPOCH)
		lines = CP_ROLL_MIN_PER_EPOCH;
	for (unsigned int i = 0; i < r->nr; i++) {
		r->ep[i].insns = cp_insn_store__new(insns);
		r->ep[i].misses = cp_miss_store__new(l1, lines);
		if (!r->ep[i].insns || !r->ep[i].misses) {
			cp_rolling__free(r);
			return NULL;
		}
	}
	r->used = 1;
	r->ep[0].start_ns = start_ns;
	r->ep[0].start = *bpf;
	return r;
}

void cp_rolling__free(struct cp_rolling *r)
{
	if (!r)
		return;
	for (unsigned int i = 0; i < r->nr; i++) {
		cp_insn_store__free(r->ep[i].insns);
		cp_miss_store__free(r->ep[i].misses);
	}
	free(r);
}

struct cp_insn_store *cp_rolling__insns(struct cp_rolling *r)
{
	return r->ep[r->cur].insns;
}

struct cp_miss_store *cp_rolling__misses(struct cp_rolling *r)
{
	return r->ep[r->cur].misses;
}

void cp_rolling__rotate(struct cp_rolling *r, __u64 now_ns, const struct cp_stats *bpf)
{
	struct cp_epoch *e;

	r->cur = (r->cur + 1) % r->nr;
	if (r->used < r->nr)
		r->used++;
	e = &r->ep[r->cur];
	cp_insn_store__clear(e->insns);
	cp_miss_store__clear(e->misses);
	e->start_ns = now_ns;
	e->start = *bpf;
}

const struct cp_insn_store *cp_rolling__last(const struct cp_rolling *r, __u64 *start_ns,
					     __u64 *end_ns)
{
	const struct cp_epoch *last = &r->ep[(r->cur + r->nr - 1) % r->nr];

	if (r->used < 2)
		return NULL;
	*start_ns = last->start_ns;
	*end_ns = r->ep[r->cur].start_ns;
	return last->insns;
}

/*
 * The sampled totals of a window are its instructions' sums: the BPF
 * counters move on between the moment a record is counted and the moment
 * it is drained, so their growth over the window does not match the
 * epochs' records at the edges (an issue would explain more than 100 %).
 * Whether the source knows levels is the run's property; the window's
 * "level unknown" counts stay the counters' growth.
 */
static void window_totals(const struct cp_insn_store *insns, const struct cp_stats *run,
			  struct cp_stats *w)
{
	bool no_levels = cp_stats_levels_unknown(run);
	struct cp_ip_counts t;

	cp_insn_store__totals(insns, &t);
	w->samples[CP_ACCESS_LOAD] = t.loads;
	w->samples[CP_ACCESS_STORE] = t.stores;
	w->misses[CP_ACCESS_LOAD] = t.load_misses;
	w->misses[CP_ACCESS_STORE] = t.store_misses;
	if (no_levels) {
		w->na[CP_ACCESS_LOAD] = t.loads;
		w->na[CP_ACCESS_STORE] = t.stores;
	}
}

int cp_rolling__window(const struct cp_rolling *r, const struct cp_insn_store *whole,
		       const struct cp_stats *bpf, struct cp_roll_window *out)
{
	/* the oldest epoch started: the one after the filling one, once the ring went round */
	const struct cp_epoch *oldest = &r->ep[r->used < r->nr ? 0 : (r->cur + 1) % r->nr];
	const struct cp_insn **list = NULL;
	size_t n, nr_insns = 0, nr_lines = 0;

	memset(out, 0, sizeof(*out));
	/*
	 * Sized by what the epochs hold (the merged stores hold at most their
	 * sum), not by the caps: a window is written every interval, and the
	 * tables at the caps are over 20 MiB to zero each time for the few lines a
	 * soft source's window has.
	 */
	for (unsigned int i = 0; i < r->used; i++) {
		struct cp_miss_store_stats ms;

		cp_miss_store__stats(r->ep[i].misses, &ms);
		nr_insns += cp_insn_store__count(r->ep[i].insns);
		nr_lines += ms.lines;
	}
	if (nr_insns > CP_ROLL_INSNS)
		nr_insns = CP_ROLL_INSNS;
	/* at least one line: 0 would ask for the default cap */
	nr_lines = nr_lines < 1 ? 1 : nr_lines < CP_ROLL_LINES ? nr_lines : CP_ROLL_LINES;
	out->insns = cp_insn_store__new(nr_insns);
	out->misses = cp_miss_store__new(&r->l1, nr_lines);
	if (!out->insns || !out->misses)
		goto nomem;
	for (unsigned int i = 0; i < r->used; i++) {
		cp_insn_store__merge(out->insns, r->ep[i].insns);
		cp_miss_store__merge(out->misses, r->ep[i].misses);
	}
	out->insns_dropped = cp_insn_store__dropped(out->insns);
	out->start_ns = oldest->start_ns;
	cp_stats_delta(bpf, &oldest->start, &out->bpf);
	window_totals(out->insns, bpf, &out->bpf);
	if (!whole)
		return 0;
	n = cp_insn_store__count(out->insns);
	list = calloc(n ? n : 1, sizeof(*list));
	if (!list)
		goto nomem;
	n = cp_insn_store__top(out->insns, list, n);
	for (size_t i = 0; i < n; i++)
		cp_insn_store__copy_history(out->insns, whole, &list[i]->key);
	free(list);
	return 0;
nomem:
	cp_roll_window_free(out);
	return -ENOMEM;
}

void cp_roll_window_free(struct cp_roll_window *w)
{
	cp_insn_store__free(w->insns);
	cp_miss_store__free(w->misses);
	w->insns = NULL;
	w->misses = NULL;
}
