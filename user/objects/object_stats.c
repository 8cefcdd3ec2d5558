// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Samples per object group (open addressing; groups are never removed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/top_n.h"

#include "objects/object_stats.h"

struct cp_object_stats {
	struct cp_object_group *slots;
	bool *used;
	size_t nr_slots;
	size_t max;
	size_t count;
	__u64 dropped;
};

/* A group is one call site (heap, mappings made by the program) or one start. */
static __u64 group_id(const struct cp_resolved *r)
{
	return r->callsite ? r->callsite : r->start;
}

static __u64 hash_group(__u32 tgid, __u8 kind, __u64 id)
{
	return cp_hash_fold(cp_hash64(id ^ ((__u64)tgid << 40) ^ ((__u64)kind << 56)), 31);
}

struct cp_object_stats *cp_object_stats__new(size_t max)
{
	struct cp_object_stats *s = calloc(1, sizeof(*s));
	size_t slots = 16;

	if (!s)
		return NULL;
	s->max = max ? max : CP_MAX_OBJECT_GROUPS;
	while (slots < s->max * 2)
		slots <<= 1;
	s->nr_slots = slots;
	s->slots = calloc(slots, sizeof(*s->slots));
	s->used = calloc(slots, sizeof(*s->used));
	if (!s->slots || !s->used) {
		cp_object_stats__free(s);
		return NULL;
	}
	return s;
}

void cp_object_stats__free(struct cp_object_stats *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s->used);
	free(s);
}

static void add_tid(struct cp_object_group *g, __u32 tid)
{
	if (!tid)
		return;
	for (__u32 i = 0; i < g->nr_tids; i++)
		if (g->tids[i] == tid)
			return;
	if (g->nr_tids < CP_OBJ_GROUP_TIDS)
		g->tids[g->nr_tids++] = tid;
}

int cp_object_stats__add(struct cp_object_stats *s, __u32 tgid, const struct cp_resolved *r,
			 __u64 caller, bool miss)
{
	__u64 id = group_id(r);
	size_t mask = s->nr_slots - 1;
	size_t i = cp_hash_slot(hash_group(tgid, (__u8)r->kind, id ^ caller), 0, mask);
	struct cp_object_group *g;

	/*
	 * The caller too: call-site ids start over at an exec, and the image
	 * the process was (a shell's fork) had its own under the same numbers
	 */
	for (; s->used[i]; i = cp_probe_next(i, mask)) {
		g = &s->slots[i];
		if (g->tgid == tgid && g->kind == r->kind && g->id == id && g->caller == caller)
			goto found;
	}
	if (s->count >= s->max) {
		s->dropped++;
		return -ENOSPC;
	}
	g = &s->slots[i];
	memset(g, 0, sizeof(*g));
	s->used[i] = true;
	s->count++;
	g->tgid = tgid;
	g->id = id;
	g->kind = (__u8)r->kind;
	g->before_attach = r->before_attach;
	g->callsite = r->callsite;
	g->caller = caller;
	g->start = r->start;
	g->size = r->size;
	g->objects = 1;
	memcpy(g->name, r->name, sizeof(g->name));
	memcpy(g->path, r->path, sizeof(g->path));
found:
	if (g->callsite && r->start != g->start) {
		/* another object from the same call site: sizes may differ, keep the last */
		g->objects++;
		g->start = r->start;
		g->size = r->size;
	}
	g->flags |= r->flags;
	g->backoff |= r->backoff;
	g->doubtful += !!(r->flags & CP_OBJ_F_GUARD_BACKOFF);
	add_tid(g, r->tid);
	g->samples++;
	g->misses += miss;
	return 0;
}

static int by_impact(const void *a, const void *b)
{
	const struct cp_object_group *x = *(const struct cp_object_group *const *)a;
	const struct cp_object_group *y = *(const struct cp_object_group *const *)b;

	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

size_t cp_object_stats__top(const struct cp_object_stats *s, const struct cp_object_group **out,
			    size_t max)
{
	return cp_top_n(s->slots, s->used, s->nr_slots, sizeof(*s->slots), s->count, by_impact,
			(const void **)out, max);
}

size_t cp_object_stats__count(const struct cp_object_stats *s)
{
	return s->count;
}

__u64 cp_object_stats__dropped(const struct cp_object_stats *s)
{
	return s->dropped;
}
