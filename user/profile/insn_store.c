// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/prefetch.h"
#include "util/top_n.h"

#include "profile/insn_store.h"

/*
 * Entries are dense, in order of arrival (ent[0..count)); an open-addressing
 * table of indices (linear probing, load factor <= 1/2) finds them. A
 * sample's lookup then touches a 4-byte slot and its entry, not a sparse
 * table of whole entries: the entries of a profile's few thousand
 * instructions stay within a few MiB. ent is allocated for cap entries at
 * once (pages are only touched as entries come), so pointers to entries
 * stay valid.
 */
struct cp_insn_store {
	struct cp_insn *ent;
	bool *ent_used;	 /* true for ent[0..count), for cp_top_n() */
	__u32 *slots;	 /* index + 1 into ent; 0: empty */
	size_t nr_slots; /* a power of two */
	size_t count;
	size_t cap;
	__u64 dropped;
	struct cp_insn_history *histories; /* allocated on the first one */
	__u32 nr_histories;
	__u64 history_dropped;
};

static size_t hash_key(const struct cp_ip_key *k)
{
	return (size_t)cp_hash_mix(cp_hash64(k->ip) ^ ((__u64)k->tgid << 32 | k->tgid), 29, 32);
}

struct cp_insn_store *cp_insn_store__new(size_t cap)
{
	struct cp_insn_store *s = calloc(1, sizeof(*s));
	size_t n = 16;

	if (!s)
		return NULL;
	while (n < cap * 2)
		n <<= 1;
	s->slots = calloc(n, sizeof(*s->slots));
	s->ent = calloc(cap ? cap : 1, sizeof(*s->ent));
	s->ent_used = calloc(cap ? cap : 1, sizeof(*s->ent_used));
	if (!s->slots || !s->ent || !s->ent_used) {
		cp_insn_store__free(s);
		return NULL;
	}
	s->nr_slots = n;
	s->cap = cap;
	return s;
}

void cp_insn_store__free(struct cp_insn_store *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s->ent);
	free(s->ent_used);
	free(s->histories);
	free(s);
}

static bool same_key(const struct cp_ip_key *a, const struct cp_ip_key *b)
{
	return a->tgid == b->tgid && a->ip == b->ip;
}

/* The slot holding @key, or the empty slot where it would go. */
static size_t probe(const struct cp_insn_store *s, const struct cp_ip_key *key)
{
	size_t mask = s->nr_slots - 1, i = cp_hash_slot(hash_key(key), 0, mask);

	while (s->slots[i] && !same_key(&s->ent[s->slots[i] - 1].key, key))
		i = cp_probe_next(i, mask);
	return i;
}

/* The entry of @key, created if needed; NULL (counted) when the store is full. */
static struct cp_insn *find_or_add(struct cp_insn_store *s, const struct cp_ip_key *key)
{
	size_t i = probe(s, key);
	struct cp_insn *in;

	if (!s->slots[i]) {
		if (s->count >= s->cap) {
			s->dropped++;
			return NULL;
		}
		in = &s->ent[s->count];
		memset(in, 0, sizeof(*in)); /* a cleared store reuses entries */
		in->key = *key;
		in->key.__pad = 0;
		s->ent_used[s->count++] = true;
		s->slots[i] = (__u32)s->count;
	}
	return &s->ent[s->slots[i] - 1];
}

int cp_insn_store__add(struct cp_insn_store *s, const struct cp_ip_key *key,
		       const struct cp_ip_counts *c)
{
	struct cp_insn *in = find_or_add(s, key);
	struct cp_ip_counts *t;

	if (!in)
		return -ENOSPC;
	t = &in->counts;
	t->loads += c->loads;
	t->stores += c->stores;
	t->load_misses += c->load_misses;
	t->store_misses += c->store_misses;
	t->hitm += c->hitm;
	t->lat_sum += c->lat_sum;
	t->ticks += c->ticks;
	for (int l = 0; l < CP_LVL_NR; l++)
		t->lvl[l] += c->lvl[l];
	return 0;
}

int cp_insn_store__add_time(struct cp_insn_store *s, const struct cp_ip_key *key, __u64 n)
{
	struct cp_insn *in = find_or_add(s, key);

	if (!in)
		return -ENOSPC;
	in->time_samples += n;
	return 0;
}

__u64 cp_insn_time_samples(const struct cp_insn *in)
{
	__u64 t = in->time_samples + in->counts.ticks;

	return t ? t : in->counts.loads + in->counts.stores;
}

/* Counts @n misses of @in on L1 set @set. */
static void add_set_misses(struct cp_insn *in, __u32 set, __u32 n)
{
	__u32 i;

	for (i = 0; i < in->nr_sets && in->sets[i].set != set; i++)
		;
	if (i < in->nr_sets) {
		in->sets[i].misses += n;
	} else if (in->nr_sets < CP_INSN_SETS) {
		in->sets[in->nr_sets].set = set;
		in->sets[in->nr_sets++].misses = n;
	} else {
		in->other_set_misses += n;
	}
}

/* Keeps @addr if it starts a new line among the first CP_INSN_MISS_ADDRS. */
static void add_miss_addr(struct cp_insn *in, __u64 addr)
{
	for (__u32 i = 0; i < in->nr_miss_addrs; i++)
		if (in->miss_addrs[i] >> 6 == addr >> 6)
			return;
	if (in->nr_miss_addrs < CP_INSN_MISS_ADDRS)
		in->miss_addrs[in->nr_miss_addrs++] = addr;
}

void cp_insn_store__prefetch(const struct cp_insn_store *s, const struct cp_ip_key *key)
{
	__builtin_prefetch(&s->slots[cp_hash_slot(hash_key(key), 0, s->nr_slots - 1)]);
}

void cp_insn_store__prefetch_entry(const struct cp_insn_store *s, const struct cp_ip_key *key)
{
	__u32 at = s->slots[cp_hash_slot(hash_key(key), 0, s->nr_slots - 1)];

	if (at)
		cp_prefetch_range(&s->ent[at - 1], sizeof(s->ent[0]));
}

int cp_insn_store__note_miss(struct cp_insn_store *s, const struct cp_ip_key *key, __u64 addr,
			     __u32 set)
{
	struct cp_insn *in = find_or_add(s, key);

	if (!in)
		return -ENOSPC;
	in->fwd_misses++;
	add_set_misses(in, set, 1);
	add_miss_addr(in, addr);
	return !in->located && !(in->fwd_misses & (in->fwd_misses - 1));
}

void cp_insn_store__set_located(struct cp_insn_store *s, const struct cp_ip_key *key)
{
	size_t i = probe(s, key);

	if (s->slots[i])
		s->ent[s->slots[i] - 1].located = true;
}

int cp_insn_store__merge(struct cp_insn_store *dst, const struct cp_insn_store *src)
{
	int ret = 0;

	for (size_t i = 0; i < src->count; i++) {
		const struct cp_insn *from = &src->ent[i];
		struct cp_insn *in;

		if (cp_insn_store__add(dst, &from->key, &from->counts)) {
			ret = -ENOSPC;
			continue;
		}
		in = &dst->ent[dst->slots[probe(dst, &from->key)] - 1];
		in->fwd_misses += from->fwd_misses;
		in->time_samples += from->time_samples;
		in->other_set_misses += from->other_set_misses;
		for (__u32 k = 0; k < from->nr_sets; k++)
			add_set_misses(in, from->sets[k].set, from->sets[k].misses);
		for (__u32 k = 0; k < from->nr_miss_addrs; k++)
			add_miss_addr(in, from->miss_addrs[k]);
	}
	return ret;
}

int cp_insn_store__copy_history(struct cp_insn_store *dst, const struct cp_insn_store *src,
				const struct cp_ip_key *key)
{
	const struct cp_insn *from = cp_insn_store__find(src, key);
	const struct cp_insn_history *h = from ? cp_insn_store__history(src, from) : NULL;
	const struct cp_insn *to = cp_insn_store__find(dst, key);
	int ret = 0;

	if (!h || (to && to->history))
		return 0;
	/* oldest first: once full, the oldest sits at next */
	for (__u32 k = 0; k < h->len && !ret; k++)
		ret = cp_insn_store__add_history(
			dst, key,
			h->addrs[h->len < CP_INSN_HISTORY ? k : (h->next + k) % CP_INSN_HISTORY]);
	return ret;
}

void cp_insn_store__totals(const struct cp_insn_store *s, struct cp_ip_counts *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < s->count; i++) {
		const struct cp_ip_counts *c = &s->ent[i].counts;

		out->loads += c->loads;
		out->stores += c->stores;
		out->load_misses += c->load_misses;
		out->store_misses += c->store_misses;
		out->hitm += c->hitm;
		out->lat_sum += c->lat_sum;
		out->ticks += c->ticks;
		for (int l = 0; l < CP_LVL_NR; l++)
			out->lvl[l] += c->lvl[l];
	}
}

void cp_insn_store__clear(struct cp_insn_store *s)
{
	memset(s->slots, 0, s->nr_slots * sizeof(*s->slots));
	memset(s->ent_used, 0, s->count * sizeof(*s->ent_used));
	s->count = 0;
	s->nr_histories = 0;
}

int cp_insn_store__add_history(struct cp_insn_store *s, const struct cp_ip_key *key, __u64 addr)
{
	struct cp_insn *in = find_or_add(s, key);
	struct cp_insn_history *h;

	if (!in)
		return -ENOSPC;
	if (!in->history) {
		if (!s->histories)
			s->histories = calloc(CP_INSN_MAX_HISTORIES, sizeof(*s->histories));
		if (!s->histories || s->nr_histories >= CP_INSN_MAX_HISTORIES) {
			s->history_dropped++;
			return -ENOSPC;
		}
		in->history = ++s->nr_histories;
	}
	h = &s->histories[in->history - 1];
	h->seen++;
	if (h->len < CP_INSN_HISTORY) {
		h->addrs[h->len++] = addr;
		return 0;
	}
	h->addrs[h->next] = addr;
	h->next = (h->next + 1) % CP_INSN_HISTORY;
	return 0;
}

const struct cp_insn_history *cp_insn_store__history(const struct cp_insn_store *s,
						     const struct cp_insn *in)
{
	return in->history && s->histories ? &s->histories[in->history - 1] : NULL;
}

__u64 cp_insn_store__history_dropped(const struct cp_insn_store *s)
{
	return s->history_dropped;
}

const struct cp_insn *cp_insn_store__find(const struct cp_insn_store *s,
					  const struct cp_ip_key *key)
{
	size_t i = probe(s, key);

	return s->slots[i] ? &s->ent[s->slots[i] - 1] : NULL;
}

size_t cp_insn_store__count(const struct cp_insn_store *s)
{
	return s->count;
}

__u64 cp_insn_store__dropped(const struct cp_insn_store *s)
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
	/* --source soft: then by time, memory instruction or not */
	if (x->counts.ticks != y->counts.ticks)
		return x->counts.ticks > y->counts.ticks ? -1 : 1;
	if (x->key.ip != y->key.ip)
		return x->key.ip < y->key.ip ? -1 : 1;
	return x->key.tgid < y->key.tgid ? -1 : x->key.tgid > y->key.tgid;
}

size_t cp_insn_store__top(const struct cp_insn_store *s, const struct cp_insn **out, size_t max)
{
	return cp_top_n(s->ent, s->ent_used, s->count, sizeof(*s->ent), s->count, by_impact,
			(const void **)out, max);
}
