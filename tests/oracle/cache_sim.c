// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The oracle's cache model: private L1D and L2, shared LLC, coherence, true miss classes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache_sim.h"

/* A set-associative LRU cache; tag 0 is an empty way (lines are stored + 1). */
struct sa_cache {
	struct cp_lru_geom g;
	__u64 *tag;
	__u64 *stamp;
};

/* A fully-associative LRU cache of cap lines: a hash of line -> node, nodes in LRU order. */
struct fa_node {
	__u64 line;
	int prev, next;		/* LRU list, -1 ends */
	int hnext;		/* bucket chain */
};

struct fa_cache {
	struct fa_node *node;
	int *bucket;
	__u32 nb, cap, used;
	int head, tail;		/* most and least recently used */
};

/* What the model knows of one line across the cores (the directory). */
struct line_info {
	__u64 line;		/* + 1; 0: free table slot */
	__u8 holders;		/* cores with the line in L1 or L2 */
	__s8 owner;		/* core holding it modified, -1 none */
	__u8 touched;		/* cores that ever had it */
	__u8 invalidated;	/* cores whose copy another core's write took away */
	__u64 written[CP_SIM_MAX_CORES];	/* bytes written by others since that loss */
};

struct cp_sim {
	struct cp_sim_geom g;
	struct sa_cache l1[CP_SIM_MAX_CORES], l2[CP_SIM_MAX_CORES], llc;
	struct fa_cache fa[CP_SIM_MAX_CORES];
	struct line_info *lines;
	size_t nr_lines, cap_lines;
	__u64 clock;
};

static const char *const class_names[CP_MISS_CLASS_NR] = {
	"hit", "compulsory", "capacity", "conflict", "true_sharing", "false_sharing",
};

const char *cp_miss_class_name(enum cp_miss_class c)
{
	return (unsigned int)c < CP_MISS_CLASS_NR ? class_names[c] : "?";
}

/* ---- set-associative caches ---- */

static int sa_init(struct sa_cache *c, const struct cp_lru_geom *g)
{
	size_t n = (size_t)g->sets * g->ways;

	c->g = *g;
	c->tag = calloc(n, sizeof(*c->tag));
	c->stamp = calloc(n, sizeof(*c->stamp));
	return c->tag && c->stamp ? 0 : -ENOMEM;
}

static void sa_free(struct sa_cache *c)
{
	free(c->tag);
	free(c->stamp);
}

/* The way of @line in its set, or -1. */
static long sa_find(const struct sa_cache *c, __u64 line)
{
	size_t base = (size_t)(line % c->g.sets) * c->g.ways;

	for (__u32 w = 0; w < c->g.ways; w++)
		if (c->tag[base + w] == line + 1)
			return (long)(base + w);
	return -1;
}

/* Puts @line in (it is absent); returns the line it evicted + 1, or 0. */
static __u64 sa_insert(struct sa_cache *c, __u64 line, __u64 now)
{
	size_t base = (size_t)(line % c->g.sets) * c->g.ways, victim = base;
	__u64 old;

	for (__u32 w = 0; w < c->g.ways; w++) {
		if (!c->tag[base + w]) {
			victim = base + w;
			break;
		}
		if (c->stamp[base + w] < c->stamp[victim])
			victim = base + w;
	}
	old = c->tag[victim];
	c->tag[victim] = line + 1;
	c->stamp[victim] = now;
	return old;
}

static void sa_remove(struct sa_cache *c, __u64 line)
{
	long w = sa_find(c, line);

	if (w >= 0)
		c->tag[w] = 0;
}

/* ---- the fully-associative shadow ---- */

static int fa_init(struct fa_cache *f, __u32 cap)
{
	f->cap = cap;
	f->nb = 1;
	while (f->nb < 2 * cap)
		f->nb <<= 1;
	f->node = calloc(cap, sizeof(*f->node));
	f->bucket = malloc(f->nb * sizeof(*f->bucket));
	if (!f->node || !f->bucket)
		return -ENOMEM;
	memset(f->bucket, 0xff, f->nb * sizeof(*f->bucket));
	f->head = f->tail = -1;
	return 0;
}

static void fa_free(struct fa_cache *f)
{
	free(f->node);
	free(f->bucket);
}

static __u32 fa_hash(const struct fa_cache *f, __u64 line)
{
	return (__u32)((line * 0x9e3779b97f4a7c15ull) >> 40) & (f->nb - 1);
}

static int fa_find(const struct fa_cache *f, __u64 line)
{
	int i = f->bucket[fa_hash(f, line)];

	while (i >= 0 && f->node[i].line != line)
		i = f->node[i].hnext;
	return i;
}

static void fa_unlink(struct fa_cache *f, int i)
{
	struct fa_node *n = &f->node[i];

	if (n->prev >= 0)
		f->node[n->prev].next = n->next;
	else
		f->head = n->next;
	if (n->next >= 0)
		f->node[n->next].prev = n->prev;
	else
		f->tail = n->prev;
}

static void fa_push_front(struct fa_cache *f, int i)
{
	f->node[i].prev = -1;
	f->node[i].next = f->head;
	if (f->head >= 0)
		f->node[f->head].prev = i;
	f->head = i;
	if (f->tail < 0)
		f->tail = i;
}

static void fa_unhash(struct fa_cache *f, int i)
{
	int *p;

	if (f->node[i].line == ~0ull)	/* dropped: in no bucket */
		return;
	p = &f->bucket[fa_hash(f, f->node[i].line)];
	while (*p != i)
		p = &f->node[*p].hnext;
	*p = f->node[i].hnext;
}

/* Touches @line: true if it was there (a hit), else it goes in, evicting the LRU line. */
static bool fa_touch(struct fa_cache *f, __u64 line)
{
	int i = fa_find(f, line);
	__u32 b;

	if (i >= 0) {
		fa_unlink(f, i);
		fa_push_front(f, i);
		return true;
	}
	if (f->used < f->cap) {
		i = (int)f->used++;
	} else {
		i = f->tail;
		fa_unlink(f, i);
		fa_unhash(f, i);
	}
	b = fa_hash(f, line);
	f->node[i].line = line;
	f->node[i].hnext = f->bucket[b];
	f->bucket[b] = i;
	fa_push_front(f, i);
	return false;
}

/* Drops @line if present; its node goes to the tail, the next to be reused. */
static void fa_drop(struct fa_cache *f, __u64 line)
{
	int i = fa_find(f, line);

	if (i < 0)
		return;
	fa_unhash(f, i);
	f->node[i].line = ~0ull;	/* not a line any access can have */
	f->node[i].hnext = -1;
	fa_unlink(f, i);
	f->node[i].next = -1;
	f->node[i].prev = f->tail;
	if (f->tail >= 0)
		f->node[f->tail].next = i;
	else
		f->head = i;
	f->tail = i;
}

/* ---- the line table ---- */

static size_t line_slot(const struct cp_sim *s, __u64 line)
{
	return (size_t)((line * 0x9e3779b97f4a7c15ull) >> 17) & (s->cap_lines - 1);
}

static int lines_grow(struct cp_sim *s)
{
	struct line_info *old = s->lines;
	size_t old_cap = s->cap_lines, cap = old_cap ? old_cap * 2 : 1 << 16;

	s->lines = calloc(cap, sizeof(*s->lines));
	if (!s->lines) {
		s->lines = old;
		return -ENOMEM;
	}
	s->cap_lines = cap;
	for (size_t i = 0; i < old_cap; i++) {
		size_t j;

		if (!old[i].line)
			continue;
		for (j = line_slot(s, old[i].line - 1); s->lines[j].line; j = (j + 1) & (cap - 1))
			;
		s->lines[j] = old[i];
	}
	free(old);
	return 0;
}

/* The table entry of @line, created empty; NULL when the table cannot grow. */
static struct line_info *line_get(struct cp_sim *s, __u64 line)
{
	size_t i;

	if ((s->nr_lines + 1) * 10 > s->cap_lines * 7 && lines_grow(s))
		return NULL;
	for (i = line_slot(s, line); s->lines[i].line; i = (i + 1) & (s->cap_lines - 1))
		if (s->lines[i].line == line + 1)
			return &s->lines[i];
	s->nr_lines++;
	s->lines[i] = (struct line_info){ .line = line + 1, .owner = -1 };
	return &s->lines[i];
}

/* ---- the model ---- */

static bool geom_ok(const struct cp_lru_geom *g, __u32 line_bytes)
{
	return g->sets && g->ways && g->line_bytes == line_bytes;
}

struct cp_sim *cp_sim__new(const struct cp_sim_geom *g)
{
	struct cp_sim *s;
	int err = 0;

	if (!g->cores || g->cores > CP_SIM_MAX_CORES || !g->l1.line_bytes ||
	    g->l1.line_bytes > 64 || !geom_ok(&g->l1, g->l1.line_bytes) ||
	    !geom_ok(&g->l2, g->l1.line_bytes) || !geom_ok(&g->llc, g->l1.line_bytes))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->g = *g;
	for (__u32 c = 0; c < g->cores && !err; c++)
		err = sa_init(&s->l1[c], &g->l1) ?: sa_init(&s->l2[c], &g->l2) ?:
		      fa_init(&s->fa[c], g->l1.sets * g->l1.ways);
	if (err || sa_init(&s->llc, &g->llc) || lines_grow(s)) {
		cp_sim__free(s);
		return NULL;
	}
	return s;
}

void cp_sim__free(struct cp_sim *s)
{
	if (!s)
		return;
	for (__u32 c = 0; c < CP_SIM_MAX_CORES; c++) {
		sa_free(&s->l1[c]);
		sa_free(&s->l2[c]);
		fa_free(&s->fa[c]);
	}
	sa_free(&s->llc);
	free(s->lines);
	free(s);
}

/* @line left one private cache of @core: if it is in neither now, the core no longer holds it. */
static void left_private(struct cp_sim *s, __u32 core, __u64 line)
{
	struct line_info *li;

	if (sa_find(&s->l1[core], line) >= 0 || sa_find(&s->l2[core], line) >= 0)
		return;
	li = line_get(s, line);
	if (!li)
		return;
	li->holders &= (__u8)~(1u << core);
	if (li->owner == (__s8)core)
		li->owner = -1;		/* written back */
}

/* Fills @line into @core's L2 (if absent) and L1, handling what they evict. */
static void fill_private(struct cp_sim *s, __u32 core, __u64 line)
{
	__u64 out;

	if (sa_find(&s->l2[core], line) < 0) {
		out = sa_insert(&s->l2[core], line, s->clock);
		if (out)
			left_private(s, core, out - 1);
	}
	out = sa_insert(&s->l1[core], line, s->clock);
	if (out)
		left_private(s, core, out - 1);
}

/* Another core's write of @bytes took @line: every other holder loses it. */
static void invalidate_others(struct cp_sim *s, struct line_info *li, __u32 core, __u64 line,
			      __u64 bytes)
{
	for (__u32 o = 0; o < s->g.cores; o++) {
		if (o == core)
			continue;
		if (li->holders & (1u << o)) {
			sa_remove(&s->l1[o], line);
			sa_remove(&s->l2[o], line);
			fa_drop(&s->fa[o], line);
			li->holders &= (__u8)~(1u << o);
			li->invalidated |= (__u8)(1u << o);
			li->written[o] = bytes;
		} else if (li->invalidated & (1u << o)) {
			li->written[o] |= bytes;
		}
	}
}

static enum cp_miss_class classify_miss(struct cp_sim *s, struct line_info *li, __u32 core,
					__u64 line, __u64 bytes)
{
	__u8 bit = (__u8)(1u << core);

	if (!(li->touched & bit)) {
		li->touched |= bit;
		return CP_MISS_COMPULSORY;
	}
	if (li->invalidated & bit) {
		li->invalidated &= (__u8)~bit;
		return li->written[core] & bytes ? CP_MISS_TRUE_SHARING : CP_MISS_FALSE_SHARING;
	}
	return fa_find(&s->fa[core], line) >= 0 ? CP_MISS_CONFLICT : CP_MISS_CAPACITY;
}

int cp_sim__access(struct cp_sim *s, __u32 core, __u64 addr, __u32 size, bool write,
		   struct cp_sim_result *out)
{
	__u32 lb = s->g.l1.line_bytes, off;
	__u64 line = addr / lb, bytes;
	struct line_info *li;
	long w;

	core %= s->g.cores;
	off = (__u32)(addr % lb);
	if (!size)
		size = 1;
	if (off + size > lb)
		size = lb - off;
	bytes = (size >= 64 ? ~0ull : ((1ull << size) - 1)) << off;
	li = line_get(s, line);
	if (!li)
		return -ENOMEM;
	s->clock++;
	out->level = CP_SIM_L1;
	out->cls = CP_MISS_HIT;
	w = sa_find(&s->l1[core], line);
	if (w >= 0) {
		s->l1[core].stamp[w] = s->clock;
	} else {
		out->cls = classify_miss(s, li, core, line, bytes);
		w = sa_find(&s->l2[core], line);
		if (w >= 0)
			out->level = CP_SIM_L2;
		else if (li->owner >= 0 && li->owner != (__s8)core)
			out->level = CP_SIM_HITM;
		else if (li->holders & ~(1u << core) || sa_find(&s->llc, line) >= 0)
			out->level = CP_SIM_L3;
		else
			out->level = CP_SIM_DRAM;
		if (w >= 0)
			s->l2[core].stamp[w] = s->clock;
		if (sa_find(&s->llc, line) < 0)
			sa_insert(&s->llc, line, s->clock);
		else
			s->llc.stamp[sa_find(&s->llc, line)] = s->clock;
		/* the LLC keeps lines the cores hold; its evictions touch no private cache */
		fill_private(s, core, line);
		li = line_get(s, line);	/* the table may have grown meanwhile */
		if (!li)
			return -ENOMEM;
		li->holders |= (__u8)(1u << core);
		li->touched |= (__u8)(1u << core);
		if (out->level == CP_SIM_HITM)
			li->owner = -1;	/* the modified copy was written back, now shared */
	}
	fa_touch(&s->fa[core], line);
	if (write) {
		invalidate_others(s, li, core, line, bytes);
		li->owner = (__s8)core;
	}
	return 0;
}
