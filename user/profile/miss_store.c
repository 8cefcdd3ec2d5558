// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Miss store: misses by L1 set and by line, with per-thread byte masks. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/byte_mask.h"
#include "util/hash.h"
#include "util/prefetch.h"
#include "util/top_n.h"

#include "profile/miss_store.h"

/* How many slots past the home slot eviction looks at for the coldest line. */
#define CP_EVICT_PROBE 8

struct cp_miss_store {
	__u32 line_bytes;
	__u32 line_shift;
	__u32 nr_sets;
	__u64 *set_misses;
	__u64 total;
	/* open addressing, linear probing, at most half full */
	struct cp_line *slots;
	bool *used;
	size_t nr_slots;
	size_t max_lines;
	struct cp_miss_store_stats st;
};

static __u64 hash_key(__u32 tgid, __u64 line)
{
	return cp_hash_fold(cp_hash64(line) ^ ((__u64)tgid * 0xff51afd7ed558ccdull), 29);
}

struct cp_miss_store *cp_miss_store__new(const struct cp_cache_level *l1, size_t max_lines)
{
	struct cp_miss_store *s;
	size_t slots = 16;

	if (!l1->line_bytes || l1->line_bytes > CP_LINE_MAX_BYTES ||
	    (l1->line_bytes & (l1->line_bytes - 1)) || !l1->sets)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->line_bytes = l1->line_bytes;
	s->line_shift = (__u32)__builtin_ctz(l1->line_bytes);
	s->nr_sets = l1->sets;
	s->max_lines = max_lines ? max_lines : CP_MAX_LINES;
	while (slots < s->max_lines * 2)
		slots <<= 1;
	s->nr_slots = slots;
	s->set_misses = calloc(s->nr_sets, sizeof(*s->set_misses));
	s->slots = calloc(slots, sizeof(*s->slots));
	s->used = calloc(slots, sizeof(*s->used));
	if (!s->set_misses || !s->slots || !s->used) {
		cp_miss_store__free(s);
		return NULL;
	}
	return s;
}

void cp_miss_store__free(struct cp_miss_store *s)
{
	if (!s)
		return;
	free(s->set_misses);
	free(s->slots);
	free(s->used);
	free(s);
}

/* Removes slot @i and re-places the probe chain after it (no tombstones). */
static void remove_slot(struct cp_miss_store *s, size_t i)
{
	size_t mask = s->nr_slots - 1, j = i;

	s->used[i] = false;
	for (;;) {
		size_t home;

		j = cp_probe_next(j, mask);
		if (!s->used[j])
			return;
		home = cp_hash_slot(hash_key(s->slots[j].tgid, s->slots[j].line), 0, mask);
		/* move j back to i unless its home lies cyclically in (i, j] */
		if (!cp_probe_between(i, home, j)) {
			s->slots[i] = s->slots[j];
			s->used[i] = true;
			s->used[j] = false;
			i = j;
		}
	}
}

/*
 * Evicts the coldest of the last CP_EVICT_PROBE lines of the probe chain
 * [@home, @end) that an insert just walked, so the chain (and its cluster)
 * shrinks by one before the new line takes its end. Evicting anywhere else
 * would let the insert fill the gap between clusters: clusters would merge
 * until every probe walks most of the table. An empty chain (@home free)
 * evicts from the cluster that follows.
 */
static void evict_one(struct cp_miss_store *s, size_t home, size_t end)
{
	size_t mask = s->nr_slots - 1, victim = s->nr_slots;
	size_t len = (end - home) & mask;
	int seen = 0;

	for (size_t k = 1; k <= len && seen < CP_EVICT_PROBE; k++) {
		size_t i = (end - k) & mask;

		seen++;
		if (victim == s->nr_slots || s->slots[i].misses < s->slots[victim].misses)
			victim = i;
	}
	for (size_t k = 0; !seen && k < s->nr_slots && seen < CP_EVICT_PROBE; k++) {
		size_t i = (end + k) & mask;

		if (!s->used[i])
			continue;
		seen++;
		victim = i;
	}
	if (victim == s->nr_slots)
		return;
	remove_slot(s, victim);
	s->st.lines--;
	s->st.evicted++;
}

static struct cp_line *find_or_add(struct cp_miss_store *s, __u32 tgid, __u64 line)
{
	size_t mask = s->nr_slots - 1, home = cp_hash_slot(hash_key(tgid, line), 0, mask), i = home;

	for (; s->used[i]; i = cp_probe_next(i, mask))
		if (s->slots[i].tgid == tgid && s->slots[i].line == line)
			return &s->slots[i];
	if (s->st.lines >= s->max_lines) {
		evict_one(s, home, i);
		/* the chain may have moved: find the free slot again */
		for (i = cp_hash_slot(hash_key(tgid, line), 0, mask); s->used[i];
		     i = cp_probe_next(i, mask))
			;
	}
	memset(&s->slots[i], 0, sizeof(s->slots[i]));
	s->slots[i].tgid = tgid;
	s->slots[i].line = line;
	s->used[i] = true;
	s->st.lines++;
	return &s->slots[i];
}

/* Counts a sample of (@tgid, @ip) on bytes @mask; returns its index in l->ips, or -1 past them. */
static int note_ip(struct cp_line *l, __u32 tgid, __u64 ip, __u64 mask)
{
	__u32 i;

	for (i = 0; i < CP_LINE_MAX_IPS && l->ips[i].misses; i++) {
		if (l->ips[i].ip == ip && l->ips[i].tgid == tgid) {
			/* saturates: 0 would free the slot */
			l->ips[i].misses += l->ips[i].misses < UINT32_MAX;
			l->ips[i].mask |= mask;
			return (int)i;
		}
	}
	if (i == CP_LINE_MAX_IPS) {
		l->more_ips++;
		return -1;
	}
	l->ips[i] = (struct cp_line_ip){.ip = ip, .misses = 1, .mask = mask, .tgid = tgid};
	return (int)i;
}

/*
 * Adds the access of thread @t (bytes @mask) to the line's epoch masks and
 * counts it as concurrent when another thread touched the line in the same
 * epoch with a write on either side: true when the bytes meet.
 */
static void note_epoch(struct cp_line *l, struct cp_line_thread *t, const struct cp_mem_access *a,
		       __u64 mask)
{
	__u32 epoch = (__u32)(a->time_ns / CP_SHARE_EPOCH_NS);
	bool met = false, overlap = false;

	if (epoch != l->epoch) {
		l->epoch = epoch;
		for (__u32 i = 0; i < l->nr_threads; i++)
			l->thr[i].epoch_read = l->thr[i].epoch_write = 0;
	}
	for (__u32 i = 0; i < l->nr_threads; i++) {
		const struct cp_line_thread *o = &l->thr[i];
		__u64 touched = o->epoch_read | o->epoch_write;

		if (o == t || !touched || (!a->store && !o->epoch_write))
			continue;
		met = true;
		overlap |= (mask & o->epoch_write) || (a->store && (mask & touched));
	}
	if (a->store)
		t->epoch_write |= mask;
	else
		t->epoch_read |= mask;
	if (overlap)
		l->concurrent_true++;
	else if (met)
		l->concurrent_false++;
}

void cp_miss_store__prefetch(const struct cp_miss_store *s, __u32 tgid, __u64 addr)
{
	size_t i = cp_hash_slot(hash_key(tgid, addr >> s->line_shift), 0, s->nr_slots - 1);

	__builtin_prefetch(&s->used[i]);
	cp_prefetch_range(&s->slots[i], sizeof(s->slots[i]));
}

int cp_miss_store__add(struct cp_miss_store *s, const struct cp_mem_access *a)
{
	__u64 line = a->addr >> s->line_shift;
	struct cp_line *l = find_or_add(s, a->space ? a->space : a->tgid, line);
	__u64 mask = cp_byte_mask((__u32)(a->addr & (s->line_bytes - 1)), a->size, s->line_bytes);
	struct cp_line_thread *t = NULL;
	int ip;

	s->set_misses[line % s->nr_sets]++;
	s->total++;
	s->st.added++;
	l->misses++;
	l->stores += a->store;
	l->hitm += a->hitm;
	l->weight_sum += a->weight;
	ip = note_ip(l, a->tgid, a->ip, mask);
	for (__u32 i = 0; i < l->nr_threads; i++)
		if (l->thr[i].tid == a->tid)
			t = &l->thr[i];
	if (!t && l->nr_threads < CP_LINE_MAX_THREADS) {
		t = &l->thr[l->nr_threads++];
		t->tid = a->tid;
		t->pid = a->tgid;
	}
	if (!t) {
		l->more_threads++;
		return 0;
	}
	t->accesses++;
	if (ip >= 0)
		t->ip_accesses[ip]++;
	if (a->store)
		t->write_mask |= mask;
	else
		t->read_mask |= mask;
	t->hitm_reads += a->hitm && !a->store;
	note_epoch(l, t, a, mask);
	return 0;
}

__u64 cp_miss_store__set_misses(const struct cp_miss_store *s, __u32 set)
{
	return set < s->nr_sets ? s->set_misses[set] : 0;
}

__u32 cp_miss_store__nr_sets(const struct cp_miss_store *s)
{
	return s->nr_sets;
}

__u64 cp_miss_store__total(const struct cp_miss_store *s)
{
	return s->total;
}

const struct cp_line *cp_miss_store__find(const struct cp_miss_store *s, __u32 tgid, __u64 addr)
{
	__u64 line = addr >> s->line_shift;
	size_t mask = s->nr_slots - 1;

	for (size_t i = cp_hash_slot(hash_key(tgid, line), 0, mask); s->used[i];
	     i = cp_probe_next(i, mask))
		if (s->slots[i].tgid == tgid && s->slots[i].line == line)
			return &s->slots[i];
	return NULL;
}

static int by_misses(const void *a, const void *b)
{
	const struct cp_line *x = *(const struct cp_line *const *)a;
	const struct cp_line *y = *(const struct cp_line *const *)b;

	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

size_t cp_miss_store__top(const struct cp_miss_store *s, const struct cp_line **out, size_t max)
{
	return cp_top_n(s->slots, s->used, s->nr_slots, sizeof(*s->slots), s->st.lines, by_misses,
			(const void **)out, max);
}

void cp_miss_store__stats(const struct cp_miss_store *s, struct cp_miss_store_stats *out)
{
	*out = s->st;
}

void cp_miss_store__clear(struct cp_miss_store *s)
{
	memset(s->used, 0, s->nr_slots * sizeof(*s->used));
	memset(s->set_misses, 0, s->nr_sets * sizeof(*s->set_misses));
	s->total = 0;
	s->st.lines = 0;
}

/*
 * Folds the threads and instructions of @src into @dst (same tgid and
 * line), with the concurrent samples that soft sources judge sharing by:
 * each store counted them within its own epochs, so they add up. The
 * epoch masks follow the later epoch of the two. A sharing epoch that two
 * stores split (an interval ended within it) is not joined: a sample met
 * only the threads of its own store's part.
 */
static __u32 add_sat32(__u32 a, __u32 b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static void merge_line(struct cp_line *dst, const struct cp_line *src)
{
	int at[CP_LINE_MAX_IPS];
	bool same_epoch;

	dst->misses += src->misses;
	dst->stores += src->stores;
	dst->hitm += src->hitm;
	dst->weight_sum += src->weight_sum;
	dst->more_threads += src->more_threads;
	dst->more_ips += src->more_ips;
	dst->concurrent_true += src->concurrent_true;
	dst->concurrent_false += src->concurrent_false;
	if (src->epoch > dst->epoch) {
		dst->epoch = src->epoch;
		for (__u32 j = 0; j < dst->nr_threads; j++)
			dst->thr[j].epoch_read = dst->thr[j].epoch_write = 0;
	}
	same_epoch = src->epoch == dst->epoch;
	/* where each of @src's instructions is in @dst: -1 past its CP_LINE_MAX_IPS */
	for (__u32 i = 0; i < CP_LINE_MAX_IPS; i++) {
		__u32 k;

		at[i] = -1;
		if (!src->ips[i].misses)
			continue;
		for (k = 0; k < CP_LINE_MAX_IPS && dst->ips[k].misses; k++)
			if (dst->ips[k].ip == src->ips[i].ip &&
			    dst->ips[k].tgid == src->ips[i].tgid)
				break;
		if (k == CP_LINE_MAX_IPS) {
			dst->more_ips += src->ips[i].misses;
			continue;
		}
		at[i] = (int)k;
		dst->ips[k].ip = src->ips[i].ip;
		dst->ips[k].tgid = src->ips[i].tgid;
		dst->ips[k].misses = add_sat32(dst->ips[k].misses, src->ips[i].misses);
		dst->ips[k].mask |= src->ips[i].mask;
	}
	for (__u32 i = 0; i < src->nr_threads; i++) {
		const struct cp_line_thread *st = &src->thr[i];
		struct cp_line_thread *t = NULL;

		for (__u32 j = 0; j < dst->nr_threads; j++)
			if (dst->thr[j].tid == st->tid)
				t = &dst->thr[j];
		if (!t && dst->nr_threads < CP_LINE_MAX_THREADS) {
			t = &dst->thr[dst->nr_threads++];
			*t = (struct cp_line_thread){.tid = st->tid, .pid = st->pid};
		}
		if (!t) {
			dst->more_threads += st->accesses;
			continue;
		}
		t->accesses += st->accesses;
		for (__u32 k = 0; k < CP_LINE_MAX_IPS; k++)
			if (at[k] >= 0)
				t->ip_accesses[at[k]] += st->ip_accesses[k];
		t->hitm_reads += st->hitm_reads;
		t->read_mask |= st->read_mask;
		t->write_mask |= st->write_mask;
		if (same_epoch) {
			t->epoch_read |= st->epoch_read;
			t->epoch_write |= st->epoch_write;
		}
	}
}

int cp_miss_store__merge(struct cp_miss_store *dst, const struct cp_miss_store *src)
{
	if (dst->line_bytes != src->line_bytes || dst->nr_sets != src->nr_sets)
		return -EINVAL;
	for (__u32 i = 0; i < src->nr_sets; i++)
		dst->set_misses[i] += src->set_misses[i];
	dst->total += src->total;
	dst->st.added += src->st.added;
	for (size_t i = 0; i < src->nr_slots; i++) {
		const struct cp_line *l = &src->slots[i];

		if (src->used[i])
			merge_line(find_or_add(dst, l->tgid, l->line), l);
	}
	return 0;
}

enum cp_sharing cp_line_sharing(const struct cp_line *line)
{
	bool writes = false, overlap = false, read_overlap = false;
	__u32 hitm_readers = 0;

	if (line->nr_threads < 2)
		return CP_SHARING_NONE;
	for (__u32 i = 0; i < line->nr_threads; i++) {
		const struct cp_line_thread *a = &line->thr[i];

		writes |= a->write_mask != 0;
		hitm_readers += a->hitm_reads != 0;
		for (__u32 j = 0; j < line->nr_threads; j++) {
			const struct cp_line_thread *b = &line->thr[j];

			if (i == j)
				continue;
			/* a byte @a wrote that another thread touched */
			if (a->write_mask & (b->read_mask | b->write_mask))
				overlap = true;
			if (a->read_mask & b->read_mask)
				read_overlap = true;
		}
	}
	if (writes)
		return overlap ? CP_SHARING_TRUE : CP_SHARING_FALSE;
	/* no write sampled: HITM loads by several threads say the line is written elsewhere */
	if (hitm_readers >= 2)
		return read_overlap ? CP_SHARING_TRUE : CP_SHARING_FALSE;
	return CP_SHARING_NONE;
}

enum cp_sharing cp_line_sharing_concurrent(const struct cp_line *line)
{
	if (line->concurrent_true + line->concurrent_false < CP_SHARE_MIN_CONCURRENT)
		return CP_SHARING_NONE;
	return line->concurrent_true ? CP_SHARING_TRUE : CP_SHARING_FALSE;
}

/* The bytes of @line exactly one of its threads touched. */
static __u64 owned_bytes(const struct cp_line *line)
{
	__u64 once = 0, twice = 0;

	for (__u32 i = 0; i < line->nr_threads; i++) {
		__u64 t = line->thr[i].read_mask | line->thr[i].write_mask;

		twice |= once & t;
		once |= t;
	}
	return once & ~twice;
}

bool cp_line_parts(const struct cp_line *line, bool soft, struct cp_line_parts *out)
{
	__u64 touched = 0, written = 0;

	*out = (struct cp_line_parts){.rest = owned_bytes(line)};
	for (__u32 i = 0; i < line->nr_threads; i++) {
		touched |= line->thr[i].read_mask | line->thr[i].write_mask;
		written |= line->thr[i].write_mask;
	}
	out->shared = touched & ~out->rest;
	for (__u32 k = 0; k < CP_LINE_MAX_IPS && line->ips[k].misses; k++) {
		if (line->ips[k].mask & ~out->rest)
			continue;
		out->rest_misses += line->ips[k].misses;
		for (__u32 i = 0; i < line->nr_threads; i++)
			out->rest_accesses[i] += line->thr[i].ip_accesses[k];
	}
	out->shared_misses = line->misses - out->rest_misses;
	/* a thread's samples by instructions past ips[] are the shared part's */
	for (__u32 i = 0; i < line->nr_threads; i++)
		out->shared_accesses[i] = line->thr[i].accesses - out->rest_accesses[i];
	/* threads past thr[] may touch the "owned" bytes: not judged */
	return !line->more_threads && (out->shared & written) && (out->rest & written) &&
	       out->rest_misses >= CP_SHARE_MIN_CONCURRENT &&
	       (!soft || line->concurrent_false >= CP_SHARE_MIN_CONCURRENT);
}

const char *cp_sharing_name(enum cp_sharing s)
{
	switch (s) {
	case CP_SHARING_TRUE:
		return "true sharing";
	case CP_SHARING_FALSE:
		return "false sharing";
	case CP_SHARING_NONE:
	default:
		return "none";
	}
}
