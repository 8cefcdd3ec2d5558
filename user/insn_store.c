// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "top_n.h"

#include "insn_store.h"

/* Open addressing, linear probing, load factor <= 1/2. */
struct cp_insn_store {
	struct cp_insn *slots;
	bool *used;
	size_t nr_slots;	/* a power of two */
	size_t count;
	size_t cap;
	__u64 dropped;
};

static size_t hash_key(const struct cp_ip_key *k)
{
	__u64 h = k->ip * 0x9e3779b97f4a7c15ull ^ ((__u64)k->tgid << 32 | k->tgid);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 32));
}

struct cp_insn_store *insn_store__new(size_t cap)
{
	struct cp_insn_store *s = calloc(1, sizeof(*s));
	size_t n = 16;

	if (!s)
		return NULL;
	while (n < cap * 2)
		n <<= 1;
	s->slots = calloc(n, sizeof(*s->slots));
	s->used = calloc(n, sizeof(*s->used));
	if (!s->slots || !s->used) {
		insn_store__free(s);
		return NULL;
	}
	s->nr_slots = n;
	s->cap = cap;
	return s;
}

void insn_store__free(struct cp_insn_store *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s->used);
	free(s);
}

static bool same_key(const struct cp_ip_key *a, const struct cp_ip_key *b)
{
	return a->tgid == b->tgid && a->ip == b->ip;
}

/* The slot holding @key, or the empty slot where it would go. */
static size_t probe(const struct cp_insn_store *s, const struct cp_ip_key *key)
{
	size_t mask = s->nr_slots - 1, i = hash_key(key) & mask;

	while (s->used[i] && !same_key(&s->slots[i].key, key))
		i = (i + 1) & mask;
	return i;
}

int insn_store__add(struct cp_insn_store *s, const struct cp_ip_key *key,
		    const struct cp_ip_counts *c)
{
	size_t i = probe(s, key);
	struct cp_ip_counts *t;

	if (!s->used[i]) {
		if (s->count >= s->cap) {
			s->dropped++;
			return -ENOSPC;
		}
		s->used[i] = 1;
		s->count++;
		s->slots[i].key = *key;
		s->slots[i].key.__pad = 0;
	}
	t = &s->slots[i].counts;
	t->loads += c->loads;
	t->stores += c->stores;
	t->load_misses += c->load_misses;
	t->store_misses += c->store_misses;
	t->hitm += c->hitm;
	t->lat_sum += c->lat_sum;
	for (int l = 0; l < CP_LVL_NR; l++)
		t->lvl[l] += c->lvl[l];
	return 0;
}

const struct cp_insn *insn_store__find(const struct cp_insn_store *s, const struct cp_ip_key *key)
{
	size_t i = probe(s, key);

	return s->used[i] ? &s->slots[i] : NULL;
}

size_t insn_store__count(const struct cp_insn_store *s)
{
	return s->count;
}

__u64 insn_store__dropped(const struct cp_insn_store *s)
{
	return s->dropped;
}

static __u64 misses(const struct cp_insn *i)
{
	return i->counts.load_misses + i->counts.store_misses;
}

static int by_impact(const void *a, const void *b)
{
	const struct cp_insn *x = *(const struct cp_insn *const *)a;
	const struct cp_insn *y = *(const struct cp_insn *const *)b;
	__u64 sx = x->counts.loads + x->counts.stores, sy = y->counts.loads + y->counts.stores;

	if (misses(x) != misses(y))
		return misses(x) > misses(y) ? -1 : 1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (x->key.ip != y->key.ip)
		return x->key.ip < y->key.ip ? -1 : 1;
	return x->key.tgid < y->key.tgid ? -1 : x->key.tgid > y->key.tgid;
}

size_t insn_store__top(const struct cp_insn_store *s, const struct cp_insn **out, size_t max)
{
	return cp_top_n(s->slots, s->used, s->nr_slots, sizeof(*s->slots), s->count, by_impact,
			(const void **)out, max);
}
