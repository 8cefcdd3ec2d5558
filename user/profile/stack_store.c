// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Stack store (see stack_store.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profile/stack_store.h"
#include "util/hash.h"

struct entry {
	__u64 hash;
	__u32 tgid;
	__u32 nr;
	size_t off; /* of its frames in pcs[] */
	struct cp_stack_counts c;
};

struct cp_stack_store {
	size_t cap;
	struct entry *e; /* first added first; cap of them */
	size_t n;
	__u64 *pcs; /* every entry's frames, back to back */
	size_t pcs_len, pcs_cap;
	__u32 *slots; /* 1 + index into e[]; 0: empty. Twice cap, a power of two */
	size_t mask;
	__u64 evicted;
};

static __u64 stack_hash(__u32 tgid, const __u64 *pcs, __u32 nr)
{
	__u64 h = cp_hash64(((__u64)tgid << 8) | nr);

	for (__u32 i = 0; i < nr; i++)
		h = cp_hash64(cp_hash_fold(h, 29) ^ pcs[i]);
	return cp_hash_fold(h, 32);
}

struct cp_stack_store *cp_stack_store__new(size_t cap)
{
	struct cp_stack_store *s = calloc(1, sizeof(*s));
	size_t slots = 16;

	if (!s)
		return NULL;
	s->cap = cap ? cap : CP_MAX_STACKS;
	while (slots < 2 * s->cap)
		slots *= 2;
	s->mask = slots - 1;
	s->e = calloc(s->cap, sizeof(*s->e));
	s->slots = calloc(slots, sizeof(*s->slots));
	if (!s->e || !s->slots) {
		cp_stack_store__free(s);
		return NULL;
	}
	return s;
}

void cp_stack_store__free(struct cp_stack_store *s)
{
	if (!s)
		return;
	free(s->e);
	free(s->pcs);
	free(s->slots);
	free(s);
}

static bool same(const struct cp_stack_store *s, const struct entry *e, __u64 hash, __u32 tgid,
		 const __u64 *pcs, __u32 nr)
{
	return e->hash == hash && e->tgid == tgid && e->nr == nr &&
	       !memcmp(s->pcs + e->off, pcs, nr * sizeof(*pcs));
}

/* The slot of the entry (tgid, pcs), or of the empty slot it would take. */
static size_t find_slot(const struct cp_stack_store *s, __u64 hash, __u32 tgid, const __u64 *pcs,
			__u32 nr)
{
	size_t i = cp_hash_slot(hash, 0, s->mask);

	while (s->slots[i] && !same(s, &s->e[s->slots[i] - 1], hash, tgid, pcs, nr))
		i = cp_probe_next(i, s->mask);
	return i;
}

static void rebuild_slots(struct cp_stack_store *s)
{
	memset(s->slots, 0, (s->mask + 1) * sizeof(*s->slots));
	for (size_t k = 0; k < s->n; k++) {
		size_t i = cp_hash_slot(s->e[k].hash, 0, s->mask);

		while (s->slots[i])
			i = cp_probe_next(i, s->mask);
		s->slots[i] = (__u32)(k + 1);
	}
}

static __u64 weight(const struct entry *e)
{
	return e->c.samples + e->c.ticks + e->c.bp_hits;
}

struct victim {
	__u64 weight;
	size_t k;
};

static int cmp_victims(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* Evicts the eighth of the entries that weigh least; compacts the rest in their order. */
static int evict(struct cp_stack_store *s)
{
	size_t drop = s->n / 8 ? s->n / 8 : 1, n = 0, len = 0;
	struct victim *v = malloc(s->n * sizeof(*v));
	bool *gone = calloc(s->n, sizeof(*gone));

	if (!v || !gone) {
		free(v);
		free(gone);
		return -ENOMEM;
	}
	for (size_t k = 0; k < s->n; k++)
		v[k] = (struct victim){weight(&s->e[k]), k};
	qsort(v, s->n, sizeof(*v), cmp_victims);
	for (size_t i = 0; i < drop; i++)
		gone[v[i].k] = true;
	for (size_t k = 0; k < s->n; k++) {
		struct entry e = s->e[k];

		if (gone[k])
			continue;
		memmove(s->pcs + len, s->pcs + e.off, e.nr * sizeof(*s->pcs));
		e.off = len;
		len += e.nr;
		s->e[n++] = e;
	}
	s->evicted += s->n - n;
	s->n = n;
	s->pcs_len = len;
	free(v);
	free(gone);
	rebuild_slots(s);
	return 0;
}

static int reserve_pcs(struct cp_stack_store *s, size_t more)
{
	size_t cap = s->pcs_cap ? s->pcs_cap : 1024;
	__u64 *p;

	if (s->pcs_len + more <= s->pcs_cap)
		return 0;
	while (cap < s->pcs_len + more)
		cap *= 2;
	p = realloc(s->pcs, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->pcs = p;
	s->pcs_cap = cap;
	return 0;
}

static void add_counts(struct cp_stack_counts *to, const struct cp_stack_counts *c)
{
	to->samples += c->samples;
	to->misses += c->misses;
	to->lat_sum += c->lat_sum;
	to->ticks += c->ticks;
	to->bp_hits += c->bp_hits;
}

int cp_stack_store__add(struct cp_stack_store *s, __u32 tgid, const __u64 *pcs, __u32 nr,
			const struct cp_stack_counts *c)
{
	__u64 hash;
	size_t i;
	int err;

	if (nr < 1 || nr > CP_STACK_DEPTH)
		return -EINVAL;
	hash = stack_hash(tgid, pcs, nr);
	i = find_slot(s, hash, tgid, pcs, nr);
	if (s->slots[i]) {
		add_counts(&s->e[s->slots[i] - 1].c, c);
		return 0;
	}
	if (s->n == s->cap) {
		err = evict(s);
		if (err)
			return err;
		i = find_slot(s, hash, tgid, pcs, nr);
	}
	err = reserve_pcs(s, nr);
	if (err)
		return err;
	memcpy(s->pcs + s->pcs_len, pcs, nr * sizeof(*pcs));
	s->e[s->n] =
		(struct entry){.hash = hash, .tgid = tgid, .nr = nr, .off = s->pcs_len, .c = *c};
	s->pcs_len += nr;
	s->slots[i] = (__u32)++s->n;
	return 0;
}

int cp_stack_store__for_each(const struct cp_stack_store *s, cp_stack_fn fn, void *ctx)
{
	for (size_t k = 0; k < s->n; k++) {
		const struct entry *e = &s->e[k];
		int ret = fn(ctx, e->tgid, s->pcs + e->off, e->nr, &e->c);

		if (ret)
			return ret;
	}
	return 0;
}

size_t cp_stack_store__held(const struct cp_stack_store *s)
{
	return s->n;
}

__u64 cp_stack_store__evicted(const struct cp_stack_store *s)
{
	return s->evicted;
}

void cp_stack_store__clear(struct cp_stack_store *s)
{
	s->n = 0;
	s->pcs_len = 0;
	memset(s->slots, 0, (s->mask + 1) * sizeof(*s->slots));
}
