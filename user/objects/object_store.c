// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Object store: three levels over one pool of nodes. Every level refers to
 * objects by a 32-bit pool index, so a small object costs one node plus a
 * 12-byte entry (index, first and last byte) in its page's sorted array.
 * Nodes are also threaded on an age list (oldest first) so eviction at the
 * cap is O(1).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "objects/object_store.h"
#include "objects/object_treap.h"
#include "util/hash.h"
#include "util/prefetch.h"

#define NIL	      UINT32_MAX
#define POOL_MIN      1024 /* first pool allocation, in nodes */
#define TABLE_MIN     64   /* buckets of a fresh hash table, a power of two */
#define SLOTS_MIN     2	   /* most pages hold a handful of objects */
#define CP_OBJ_RECENT 256  /* granules whose last object found is remembered */
/* a page: 39 % hits in the replay bench, 16 KiB: 28 % */
#define CP_OBJ_RECENT_SHIFT CP_OBJ_PAGE_SHIFT
/* a sorted array's entries hinted: all up to 1.5 KiB (128), else 15 spread over it */
#define CP_OBJ_HINT_BYTES  1536
#define CP_OBJ_HINT_SPLITS 16

struct node {
	struct cp_object obj;
	__u32 older; /* age list; next free node while unused */
	__u32 newer;
};

/*
 * An object of a page or chunk: its first and last byte as offsets in the
 * granule (it lies within it) next to its pool index, so a lookup reads this
 * array only, not a pool node per step of the binary search (a chunk holds
 * a hundred objects: seven cache misses) nor one to see that the page's
 * candidate ends before the address.
 */
struct slot {
	__u32 off;  /* start - base */
	__u32 last; /* last byte - base */
	__u32 idx;
};

/* The objects of one page or chunk, sorted by start. */
struct slots {
	__u32 nr;
	__u32 cap;
	__u64 base; /* first byte of the granule */
	struct slot e[];
};

struct bucket {
	__u64 key;	   /* page or chunk number */
	struct slots *arr; /* NULL: empty bucket */
};

/* Open addressing, linear probing, load factor <= 1/2, backward-shift deletion. */
struct table {
	struct bucket *b;
	size_t nr_b; /* a power of two */
	size_t used;
	unsigned int shift; /* 64 - log2(nr_b): Fibonacci hashing keeps the high bits */
};

struct cp_object_store {
	struct node *pool;
	size_t pool_cap;  /* nodes allocated */
	size_t pool_used; /* nodes ever handed out */
	__u32 free_head;
	__u32 oldest, newest;
	size_t max;
	struct table pages, chunks;
	struct cp_treap *huge;
	size_t nr_huge;
	__u32 rng;
	size_t slot_bytes; /* bytes held by slots arrays */
	__u32 *victims;	   /* scratch: objects an insert overlaps */
	size_t nr_victims, victims_cap;
	struct cp_object_store_stats st;
	/*
	 * The last object found per page (direct-mapped), valid while gen is
	 * the store's: any add or removal bumps it. Misses concentrate on few
	 * objects (paper §2.2.2), and a hit skips the two or three cache
	 * misses of a walk through the levels.
	 */
	__u64 gen; /* starts at 1 */
	struct {
		__u64 key; /* address >> CP_OBJ_RECENT_SHIFT */
		__u64 gen; /* 0: never filled */
		__u32 idx;
	} recent[CP_OBJ_RECENT];
};

static const char *const kind_names[CP_OBJ_KIND_NR] = {
	[CP_OBJ_UNKNOWN] = "unknown", [CP_OBJ_HEAP] = "heap", [CP_OBJ_MAPPING] = "mapping",
	[CP_OBJ_GLOBAL] = "global",   [CP_OBJ_TLS] = "tls",   [CP_OBJ_STACK] = "stack",
};

const char *cp_object_kind_name(enum cp_obj_kind kind)
{
	return (unsigned int)kind < CP_OBJ_KIND_NR ? kind_names[kind] : "?";
}

/* Last byte (inclusive, so a range may end at 2^64 - 1 without overflow). */
static __u64 obj_last(const struct cp_object *o)
{
	return o->start + (o->size ? o->size : 1) - 1;
}

static __u64 node_start(const struct cp_object_store *s, __u32 i)
{
	return s->pool[i].obj.start;
}

static __u64 node_last(const struct cp_object_store *s, __u32 i)
{
	return obj_last(&s->pool[i].obj);
}

/* ---- hash tables of page / chunk numbers ---- */

static int table_init(struct table *t, size_t nr_b)
{
	t->b = calloc(nr_b, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->nr_b = nr_b;
	t->used = 0;
	t->shift = 64 - __builtin_ctzll(nr_b);
	return 0;
}

static size_t table_home(const struct table *t, __u64 key)
{
	/* the top log2(nr_b) bits are in range: no mask (and no load of nr_b) per lookup */
	return (size_t)(cp_hash64(key) >> t->shift);
}

/* The bucket holding @key, or the empty bucket where it would go. */
static size_t table_probe(const struct table *t, __u64 key)
{
	size_t mask = t->nr_b - 1, i = table_home(t, key);

	while (t->b[i].arr && t->b[i].key != key)
		i = cp_probe_next(i, mask);
	return i;
}

static struct slots *table_get(const struct table *t, __u64 key)
{
	return t->b[table_probe(t, key)].arr;
}

static int table_grow(struct table *t)
{
	struct table n;

	if (table_init(&n, t->nr_b * 2))
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_b; i++) {
		if (t->b[i].arr) {
			n.b[table_probe(&n, t->b[i].key)] = t->b[i];
			n.used++;
		}
	}
	free(t->b);
	*t = n;
	return 0;
}

static void table_del_at(struct table *t, size_t i)
{
	size_t mask = t->nr_b - 1, j = i;

	for (;;) {
		j = cp_probe_next(j, mask);
		if (!t->b[j].arr)
			break;
		if (!cp_probe_between(i, table_home(t, t->b[j].key), j)) {
			t->b[i] = t->b[j];
			i = j;
		}
	}
	t->b[i].arr = NULL;
	t->used--;
}

/* ---- sorted arrays ---- */

/* Position of the last object starting at or below @addr, or -1. */
static long slots_floor(const struct slots *a, __u64 addr)
{
	long lo = 0, hi = (long)a->nr - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (a->base + a->e[mid].off <= addr) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

static __u32 slots_find(const struct slots *a, __u64 addr)
{
	long f;

	if (!a)
		return NIL;
	f = slots_floor(a, addr);
	if (f < 0 || a->base + a->e[f].last < addr)
		return NIL;
	return a->e[f].idx;
}

static int level_insert(struct cp_object_store *s, struct table *t, unsigned int shift, __u64 key,
			__u32 idx)
{
	struct slots *a;
	size_t b;
	long pos;

	if ((t->used + 1) * 2 > t->nr_b && table_grow(t))
		return -ENOMEM;
	b = table_probe(t, key);
	a = t->b[b].arr;
	if (!a) {
		a = malloc(sizeof(*a) + SLOTS_MIN * sizeof(a->e[0]));
		if (!a)
			return -ENOMEM;
		a->nr = 0;
		a->cap = SLOTS_MIN;
		a->base = key << shift;
		s->slot_bytes += sizeof(*a) + SLOTS_MIN * sizeof(a->e[0]);
		t->b[b].key = key;
		t->b[b].arr = a;
		t->used++;
	} else if (a->nr == a->cap) {
		struct slots *n = realloc(a, sizeof(*a) + 2 * a->cap * sizeof(a->e[0]));

		if (!n)
			return -ENOMEM;
		s->slot_bytes += n->cap * sizeof(n->e[0]);
		n->cap *= 2;
		t->b[b].arr = a = n;
	}
	pos = slots_floor(a, node_start(s, idx)) + 1;
	memmove(&a->e[pos + 1], &a->e[pos], (a->nr - pos) * sizeof(a->e[0]));
	a->e[pos] = (struct slot){
		.off = (__u32)(node_start(s, idx) - a->base),
		.last = (__u32)(node_last(s, idx) - a->base),
		.idx = idx,
	};
	a->nr++;
	return 0;
}

static void level_remove(struct cp_object_store *s, struct table *t, __u64 key, __u32 idx)
{
	size_t b = table_probe(t, key);
	struct slots *a = t->b[b].arr;
	long pos;

	if (!a)
		return;
	pos = slots_floor(a, node_start(s, idx));
	if (pos < 0 || a->e[pos].idx != idx)
		return;
	memmove(&a->e[pos], &a->e[pos + 1], (a->nr - pos - 1) * sizeof(a->e[0]));
	if (--a->nr == 0) {
		s->slot_bytes -= sizeof(*a) + a->cap * sizeof(a->e[0]);
		free(a);
		table_del_at(t, b);
	}
}

/* ---- treap of huge objects ---- */

static __u32 next_prio(struct cp_object_store *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 17;
	s->rng ^= s->rng << 5;
	return s->rng;
}

static int huge_insert(struct cp_object_store *s, __u32 idx)
{
	struct cp_treap *n = malloc(sizeof(*n)), *l, *r;

	if (!n)
		return -ENOMEM;
	n->start = node_start(s, idx);
	n->idx = idx;
	n->prio = next_prio(s);
	n->l = n->r = NULL;
	cp_treap_split(s->huge, n->start, &l, &r);
	s->huge = cp_treap_merge(cp_treap_merge(l, n), r);
	s->nr_huge++;
	return 0;
}

static void huge_remove(struct cp_object_store *s, __u64 start)
{
	struct cp_treap *l, *m, *r;

	/* a huge object crosses a chunk boundary, so start + 1 cannot wrap */
	cp_treap_split(s->huge, start, &l, &r);
	cp_treap_split(r, start + 1, &m, &r);
	if (m) {
		free(m);
		s->nr_huge--;
	}
	s->huge = cp_treap_merge(l, r);
}

/* ---- levels ---- */

enum level { LV_PAGE, LV_CHUNK, LV_HUGE };

static enum level level_of(__u64 start, __u64 last)
{
	if (start >> CP_OBJ_PAGE_SHIFT == last >> CP_OBJ_PAGE_SHIFT)
		return LV_PAGE;
	if (start >> CP_OBJ_CHUNK_SHIFT == last >> CP_OBJ_CHUNK_SHIFT)
		return LV_CHUNK;
	return LV_HUGE;
}

static int index_node(struct cp_object_store *s, __u32 i)
{
	__u64 start = node_start(s, i);

	switch (level_of(start, node_last(s, i))) {
	case LV_PAGE:
		return level_insert(s, &s->pages, CP_OBJ_PAGE_SHIFT, start >> CP_OBJ_PAGE_SHIFT, i);
	case LV_CHUNK:
		return level_insert(s, &s->chunks, CP_OBJ_CHUNK_SHIFT, start >> CP_OBJ_CHUNK_SHIFT,
				    i);
	default:
		return huge_insert(s, i);
	}
}

static void unindex_node(struct cp_object_store *s, __u32 i)
{
	__u64 start = node_start(s, i);

	switch (level_of(start, node_last(s, i))) {
	case LV_PAGE:
		level_remove(s, &s->pages, start >> CP_OBJ_PAGE_SHIFT, i);
		break;
	case LV_CHUNK:
		level_remove(s, &s->chunks, start >> CP_OBJ_CHUNK_SHIFT, i);
		break;
	default:
		huge_remove(s, start);
	}
}

/* The node holding @addr: page table first, where most objects live. */
static __u32 find_node(const struct cp_object_store *s, __u64 addr)
{
	struct cp_treap *t;
	__u32 i;

	i = slots_find(table_get(&s->pages, addr >> CP_OBJ_PAGE_SHIFT), addr);
	if (i != NIL)
		return i;
	i = slots_find(table_get(&s->chunks, addr >> CP_OBJ_CHUNK_SHIFT), addr);
	if (i != NIL)
		return i;
	t = cp_treap_floor(s->huge, addr);
	return t && node_last(s, t->idx) >= addr ? t->idx : NIL;
}

/* ---- pool and age list ---- */

static __u32 node_alloc(struct cp_object_store *s)
{
	__u32 i = s->free_head;

	if (i != NIL) {
		s->free_head = s->pool[i].older;
		return i;
	}
	if (s->pool_used == s->pool_cap) {
		size_t cap = s->pool_cap ? s->pool_cap * 2 : POOL_MIN;
		struct node *p;

		if (cap > s->max)
			cap = s->max;
		p = realloc(s->pool, cap * sizeof(*p));
		if (!p)
			return NIL;
		s->pool = p;
		s->pool_cap = cap;
	}
	return (__u32)s->pool_used++;
}

static void age_unlink(struct cp_object_store *s, __u32 i)
{
	struct node *n = &s->pool[i];

	if (n->older != NIL)
		s->pool[n->older].newer = n->newer;
	else
		s->oldest = n->newer;
	if (n->newer != NIL)
		s->pool[n->newer].older = n->older;
	else
		s->newest = n->older;
}

static void age_push_newest(struct cp_object_store *s, __u32 i)
{
	s->pool[i].older = s->newest;
	s->pool[i].newer = NIL;
	if (s->newest != NIL)
		s->pool[s->newest].newer = i;
	else
		s->oldest = i;
	s->newest = i;
}

/* Takes node @i out of every structure and returns it to the free list. */
static void detach(struct cp_object_store *s, __u32 i)
{
	s->gen++;
	unindex_node(s, i);
	age_unlink(s, i);
	s->pool[i].older = s->free_head;
	s->free_head = i;
	s->st.live--;
}

/* ---- overlap detection ---- */

static int victim_add(struct cp_object_store *s, __u32 i)
{
	if (s->nr_victims == s->victims_cap) {
		size_t cap = s->victims_cap ? s->victims_cap * 2 : 16;
		__u32 *v = realloc(s->victims, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->victims = v;
		s->victims_cap = cap;
	}
	s->victims[s->nr_victims++] = i;
	return 0;
}

/* Adds the objects of @a that overlap [start, last]. */
static int collect_slots(struct cp_object_store *s, const struct slots *a, __u64 start, __u64 last)
{
	long pos;

	if (!a)
		return 0;
	pos = slots_floor(a, start);
	if (pos < 0 || a->base + a->e[pos].last < start)
		pos++;
	for (; pos < (long)a->nr && a->base + a->e[pos].off <= last; pos++)
		if (victim_add(s, a->e[pos].idx))
			return -ENOMEM;
	return 0;
}

/*
 * Objects of a table overlapping [start, last] sit in the granules that
 * range touches; walk those granules or the whole table, whichever is fewer,
 * so a gigabyte mmap over a sparse table stays cheap.
 */
static int collect_table(struct cp_object_store *s, const struct table *t, unsigned int shift,
			 __u64 start, __u64 last)
{
	__u64 first = start >> shift, end = last >> shift;

	if (!t->used)
		return 0;
	if (end - first < t->used) {
		for (__u64 k = first;; k++) {
			if (collect_slots(s, table_get(t, k), start, last))
				return -ENOMEM;
			if (k == end)
				break;
		}
		return 0;
	}
	for (size_t b = 0; b < t->nr_b; b++) {
		const struct bucket *bk = &t->b[b];

		if (bk->arr && bk->key >= first && bk->key <= end &&
		    collect_slots(s, bk->arr, start, last))
			return -ENOMEM;
	}
	return 0;
}

static int collect_overlaps(struct cp_object_store *s, __u64 start, __u64 last)
{
	struct cp_treap *t;

	s->nr_victims = 0;
	if (collect_table(s, &s->pages, CP_OBJ_PAGE_SHIFT, start, last) ||
	    collect_table(s, &s->chunks, CP_OBJ_CHUNK_SHIFT, start, last))
		return -ENOMEM;
	t = cp_treap_floor(s->huge, start);
	if (t && node_last(s, t->idx) >= start && victim_add(s, t->idx))
		return -ENOMEM;
	for (t = cp_treap_after(s->huge, start); t && t->start <= last;
	     t = cp_treap_after(s->huge, t->start))
		if (victim_add(s, t->idx))
			return -ENOMEM;
	return 0;
}

/* ---- public API ---- */

struct cp_object_store *cp_object_store__new(size_t max_objects)
{
	struct cp_object_store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (!max_objects)
		max_objects = CP_MAX_OBJECTS;
	if (max_objects >= NIL)
		max_objects = NIL - 1;
	s->max = max_objects;
	s->free_head = s->oldest = s->newest = NIL;
	s->rng = 0x2545f491;
	s->gen = 1;
	if (table_init(&s->pages, TABLE_MIN) || table_init(&s->chunks, TABLE_MIN)) {
		cp_object_store__free(s);
		return NULL;
	}
	return s;
}

/*
 * Frees the buckets' arrays. An empty bucket costs no call: under -a the
 * profiler's own free() traps in the system-wide allocation probes while a
 * window is open, and two fresh tables of empty buckets went at every exec
 * and exit (256 calls of free(NULL) a process).
 */
static void free_table_slots(struct table *t)
{
	for (size_t b = 0; b < t->nr_b; b++)
		if (t->b[b].arr)
			free(t->b[b].arr);
}

void cp_object_store__free(struct cp_object_store *s)
{
	if (!s)
		return;
	if (s->pages.b)
		free_table_slots(&s->pages);
	if (s->chunks.b)
		free_table_slots(&s->chunks);
	free(s->pages.b);
	free(s->chunks.b);
	cp_treap_free(s->huge);
	free(s->pool);
	free(s->victims);
	free(s);
}

void cp_object_store__clear(struct cp_object_store *s)
{
	struct table pages, chunks;

	/* fresh tables first: on failure the store keeps its objects intact */
	if (table_init(&pages, TABLE_MIN))
		return;
	if (table_init(&chunks, TABLE_MIN)) {
		free(pages.b);
		return;
	}
	free_table_slots(&s->pages);
	free_table_slots(&s->chunks);
	free(s->pages.b);
	free(s->chunks.b);
	s->pages = pages;
	s->chunks = chunks;
	cp_treap_free(s->huge);
	s->huge = NULL;
	s->nr_huge = 0;
	free(s->pool);
	s->pool = NULL;
	s->pool_cap = s->pool_used = 0;
	s->free_head = s->oldest = s->newest = NIL;
	s->slot_bytes = 0;
	s->st.live = 0;
	s->gen++;
}

int cp_object_store__add(struct cp_object_store *s, const struct cp_object *obj)
{
	__u64 last = obj_last(obj);
	__u32 i;

	if (last < obj->start)
		return -EINVAL;
	if (collect_overlaps(s, obj->start, last)) {
		s->st.nomem++;
		return -ENOMEM;
	}
	for (size_t v = 0; v < s->nr_victims; v++)
		detach(s, s->victims[v]);
	s->st.replaced += s->nr_victims;
	while (s->st.live >= s->max) {
		detach(s, s->oldest);
		s->st.evicted++;
	}
	s->gen++;
	i = node_alloc(s);
	if (i == NIL) {
		s->st.nomem++;
		return -ENOMEM;
	}
	s->pool[i].obj = *obj;
	s->pool[i].obj.__pad = 0;
	if (index_node(s, i)) {
		s->pool[i].older = s->free_head;
		s->free_head = i;
		s->st.nomem++;
		return -ENOMEM;
	}
	age_push_newest(s, i);
	s->st.live++;
	s->st.inserted++;
	return 0;
}

int cp_object_store__remove(struct cp_object_store *s, __u64 start, struct cp_object *out)
{
	__u32 i = find_node(s, start);

	if (i == NIL || node_start(s, i) != start) {
		s->st.unknown_frees++;
		return -ENOENT;
	}
	if (out)
		*out = s->pool[i].obj;
	detach(s, i);
	s->st.removed++;
	return 0;
}

int cp_object_store__realloc(struct cp_object_store *s, __u64 old_start,
			     const struct cp_object *obj)
{
	if (old_start)
		cp_object_store__remove(s, old_start, NULL);
	return obj->start ? cp_object_store__add(s, obj) : 0;
}

/* a mask, not %: the same slots only while CP_OBJ_RECENT is a power of two */
_Static_assert((CP_OBJ_RECENT & (CP_OBJ_RECENT - 1)) == 0, "CP_OBJ_RECENT: a power of two");

static size_t recent_slot(__u64 key)
{
	return cp_hash_slot(cp_hash64(key), 56, CP_OBJ_RECENT - 1);
}

/* The node holding @addr, remembered as the last found in its page; NIL if none. */
static __u32 find_recent(struct cp_object_store *s, __u64 addr)
{
	__u64 key = addr >> CP_OBJ_RECENT_SHIFT;
	size_t r = recent_slot(key);
	__u32 i;

	/* gen starts at 1: an entry never filled never matches */
	if (s->recent[r].gen == s->gen && s->recent[r].key == key &&
	    node_start(s, s->recent[r].idx) <= addr && node_last(s, s->recent[r].idx) >= addr)
		return s->recent[r].idx;
	i = find_node(s, addr);
	if (i != NIL) {
		s->recent[r].key = key;
		s->recent[r].idx = i;
		s->recent[r].gen = s->gen;
	}
	return i;
}

/*
 * Stages 1 and 2 of a hint for the sorted array of @key, if its home bucket
 * holds it (most do): its first line (its length), then its entries, all if
 * few, else those the first halvings of a search look at.
 */
static void hint_slots(const struct table *t, __u64 key, int stage)
{
	const struct bucket *b = &t->b[table_home(t, key)];
	const struct slots *a = b->arr;

	if (!a || b->key != key)
		return;
	if (stage == 1)
		__builtin_prefetch(a);
	else if (a->nr * sizeof(a->e[0]) <= CP_OBJ_HINT_BYTES)
		cp_prefetch_range(a->e, a->nr * sizeof(a->e[0]));
	else
		for (size_t k = 1; k < CP_OBJ_HINT_SPLITS; k++)
			__builtin_prefetch(&a->e[k * a->nr / CP_OBJ_HINT_SPLITS]);
}

void cp_object_store__hint(struct cp_object_store *s, __u64 addr, int stage)
{
	__u64 key = addr >> CP_OBJ_RECENT_SHIFT, page = addr >> CP_OBJ_PAGE_SHIFT;
	__u64 chunk = addr >> CP_OBJ_CHUNK_SHIFT;
	size_t r = recent_slot(key);
	__u32 i;

	/* its page's last object: the lookup reads that node first */
	if (s->recent[r].gen == s->gen && s->recent[r].key == key) {
		if (stage == 0)
			__builtin_prefetch(&s->pool[s->recent[r].idx]);
		return;
	}
	switch (stage) {
	case 0:
		__builtin_prefetch(&s->pages.b[table_home(&s->pages, page)]);
		__builtin_prefetch(&s->chunks.b[table_home(&s->chunks, chunk)]);
		break;
	case 1:
	case 2:
		hint_slots(&s->pages, page, stage);
		hint_slots(&s->chunks, chunk, stage);
		break;
	default:
		i = find_recent(s, addr);
		if (i != NIL)
			__builtin_prefetch(&s->pool[i]);
	}
}

const struct cp_object *cp_object_store__find(struct cp_object_store *s, __u64 addr)
{
	__u32 i = find_recent(s, addr);

	if (i == NIL) {
		s->st.lookup_misses++;
		return NULL;
	}
	s->st.lookup_hits++;
	return &s->pool[i].obj;
}

size_t cp_object_store__count(const struct cp_object_store *s)
{
	return s->st.live;
}

void cp_object_store__stats(const struct cp_object_store *s, struct cp_object_store_stats *out)
{
	*out = s->st;
}

size_t cp_object_store__mem_bytes(const struct cp_object_store *s)
{
	return sizeof(*s) + s->pool_cap * sizeof(struct node) +
	       (s->pages.nr_b + s->chunks.nr_b) * sizeof(struct bucket) + s->slot_bytes +
	       s->nr_huge * sizeof(struct cp_treap) + s->victims_cap * sizeof(__u32);
}
