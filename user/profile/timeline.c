// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-interval counts of the top instructions (see timeline.h). */
#include <stdlib.h>
#include <string.h>

#include "profile/timeline.h"

struct cp_timeline {
	bool soft;
	bool any_miss;
	bool open;	/* iv[nr - 1] takes entries */
	__u64 mark;	/* of the last call */
	__u32 nr;	/* intervals in iv[] */
	__u32 per_slot; /* counter intervals each slot spans before the next opens */
	struct cp_tl_interval iv[CP_TL_INTERVALS];
};

struct cp_timeline *cp_timeline__new(bool soft)
{
	struct cp_timeline *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->soft = soft;
	t->per_slot = 1;
	return t;
}

void cp_timeline__free(struct cp_timeline *t)
{
	free(t);
}

__u64 cp_tl_weight(const struct cp_timeline *t, const struct cp_tl_entry *e)
{
	if (t->soft)
		return e->ticks ? e->ticks : e->samples;
	return t->any_miss ? e->misses : e->samples;
}

static void entry_add(struct cp_tl_entry *dst, const struct cp_tl_entry *src)
{
	dst->misses += src->misses;
	dst->samples += src->samples;
	dst->ticks += src->ticks;
}

/* Adds @e to @iv's top: summed with its key, else kept if room or heavier than the lightest. */
static void top_add(const struct cp_timeline *t, struct cp_tl_interval *iv,
		    const struct cp_tl_entry *e)
{
	__u32 light = 0;

	for (__u32 i = 0; i < iv->nr; i++) {
		if (iv->top[i].key.tgid == e->key.tgid && iv->top[i].key.ip == e->key.ip) {
			entry_add(&iv->top[i], e);
			return;
		}
		if (cp_tl_weight(t, &iv->top[i]) < cp_tl_weight(t, &iv->top[light]))
			light = i;
	}
	if (iv->nr < CP_TL_TOP)
		iv->top[iv->nr++] = *e;
	else if (cp_tl_weight(t, e) > cp_tl_weight(t, &iv->top[light]))
		iv->top[light] = *e;
}

/* Folds @src into @dst (its neighbour: the later one). */
static void interval_merge(const struct cp_timeline *t, struct cp_tl_interval *dst,
			   const struct cp_tl_interval *src)
{
	entry_add(&dst->total, &src->total);
	dst->spans += src->spans;
	dst->end_ns = src->end_ns > dst->end_ns ? src->end_ns : dst->end_ns;
	for (__u32 i = 0; i < src->nr; i++)
		top_add(t, dst, &src->top[i]);
}

/* Full: neighbours merged pairwise, and each slot spans twice as many from now on. */
static void halve(struct cp_timeline *t)
{
	__u32 k = 0;

	for (__u32 i = 0; i < t->nr; i += 2, k++) {
		if (k != i)
			t->iv[k] = t->iv[i];
		if (i + 1 < t->nr)
			interval_merge(t, &t->iv[k], &t->iv[i + 1]);
	}
	memset(&t->iv[k], 0, (t->nr - k) * sizeof(t->iv[0]));
	t->nr = k;
	t->per_slot *= 2;
}

/* The slot a new counter interval goes into. */
static struct cp_tl_interval *next_interval(struct cp_timeline *t)
{
	if (t->nr && t->iv[t->nr - 1].spans < t->per_slot) {
		t->iv[t->nr - 1].spans++;
		return &t->iv[t->nr - 1];
	}
	if (t->nr == CP_TL_INTERVALS)
		halve(t);
	/* after halving, the last slot may still have room */
	if (t->nr && t->iv[t->nr - 1].spans < t->per_slot) {
		t->iv[t->nr - 1].spans++;
		return &t->iv[t->nr - 1];
	}
	memset(&t->iv[t->nr], 0, sizeof(t->iv[0]));
	t->iv[t->nr].spans = 1;
	return &t->iv[t->nr++];
}

void cp_timeline__add(struct cp_timeline *t, const struct cp_insn *v, size_t n, __u64 mark,
		      __u64 time_ns)
{
	struct cp_tl_interval *iv;

	if (!n)
		return;
	if (!t->open || mark != t->mark)
		iv = next_interval(t);
	else
		iv = &t->iv[t->nr - 1];
	t->open = true;
	t->mark = mark;
	iv->end_ns = time_ns > iv->end_ns ? time_ns : iv->end_ns;
	for (size_t i = 0; i < n; i++) {
		const struct cp_ip_counts *c = &v[i].counts;
		struct cp_tl_entry e = {
			.key = v[i].key,
			.misses = c->load_misses + c->store_misses,
			.samples = c->loads + c->stores,
			.ticks = c->ticks,
		};

		t->any_miss |= e.misses != 0;
		entry_add(&iv->total, &e);
		if (cp_tl_weight(t, &e))
			top_add(t, iv, &e);
	}
}

__u32 cp_timeline__count(const struct cp_timeline *t)
{
	return t ? t->nr : 0;
}

const struct cp_tl_interval *cp_timeline__get(const struct cp_timeline *t, __u32 i)
{
	return t && i < t->nr ? &t->iv[i] : NULL;
}
