// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Issues: their source lines and objects, merging and ranking. */
#include <stdlib.h>
#include <string.h>

#include "classify/issue.h"

static bool same_line(const void *pa, const void *pb)
{
	const struct cp_issue_insn *a = pa, *b = pb;

	if (a->tgid != b->tgid)
		return false;
	/* a location with a line names a statement, which the paper reports */
	if (a->have_loc && b->have_loc && a->loc.line && b->loc.line)
		return a->loc.line == b->loc.line && !strcmp(a->loc.file, b->loc.file) &&
		       !strcmp(a->loc.module, b->loc.module);
	return a->ip == b->ip;
}

static bool same_group(const void *pa, const void *pb)
{
	const struct cp_issue_object *a = pa, *b = pb;

	if (a->kind != b->kind)
		return false;
	if (a->kind == CP_OBJ_HEAP && a->callsite && b->callsite)
		return a->callsite == b->callsite;
	/* shared files all start at their offset 0: the name tells them apart */
	return a->start == b->start && (a->kind != CP_OBJ_MAPPING || !strcmp(a->name, b->name));
}

/*
 * The entry of @arr (*@n used of @max, @size bytes each) that @same matches
 * with @item, or a copy of @item appended (*@added); NULL, counted in
 * *@more, when it is new and the array is full.
 */
static void *find_or_append(void *arr, __u32 *n, __u32 max, size_t size, const void *item,
			    bool (*same)(const void *, const void *), __u32 *more, bool *added)
{
	char *e = arr;

	*added = false;
	for (__u32 i = 0; i < *n; i++, e += size)
		if (same(e, item))
			return e;
	if (*n >= max) {
		(*more)++;
		return NULL;
	}
	memcpy(e, item, size);
	(*n)++;
	*added = true;
	return e;
}

/* Swaps the entry at @e towards @arr's front while @key ranks it above its predecessor. */
static void bubble_up(void *arr, void *e, size_t size, __u64 (*key)(const void *))
{
	char *p = e, *first = arr;

	for (; p > first && key(p) > key(p - size); p -= size)
		for (size_t b = 0; b < size; b++) {
			char t = p[b];

			p[b] = p[b - size];
			p[b - size] = t;
		}
}

static __u64 insn_misses(const void *e)
{
	return ((const struct cp_issue_insn *)e)->misses;
}

static __u64 object_refs(const void *e)
{
	return ((const struct cp_issue_object *)e)->refs;
}

void cp_issue_add_insn(struct cp_issue *is, const struct cp_issue_insn *in)
{
	bool added;
	struct cp_issue_insn *t =
		find_or_append(is->insns, &is->nr_insns, CP_ISSUE_MAX_INSNS, sizeof(*in), in,
			       same_line, &is->more_insns, &added);

	if (!t)
		return;
	if (added) {
		t->nr_ips = in->nr_ips ? in->nr_ips : 1;
	} else {
		/* the representative ip: the newcomer if it outweighs all before it */
		if (in->misses > t->misses)
			t->ip = in->ip;
		t->nr_ips += in->nr_ips ? in->nr_ips : 1;
		t->samples += in->samples;
		t->misses += in->misses;
	}
	bubble_up(is->insns, t, sizeof(*t), insn_misses);
}

static void add_tid(struct cp_issue_object *g, __u32 tid)
{
	for (__u32 i = 0; i < g->nr_tids; i++)
		if (g->alloc_tids[i] == tid)
			return;
	if (g->nr_tids < CP_ISSUE_MAX_TIDS)
		g->alloc_tids[g->nr_tids++] = tid;
}

void cp_issue_add_object(struct cp_issue *is, const struct cp_issue_object *obj, __u32 refs)
{
	bool added;
	struct cp_issue_object *g =
		find_or_append(is->objects, &is->nr_objects, CP_ISSUE_MAX_OBJECTS, sizeof(*obj),
			       obj, same_group, &is->more_objects, &added);

	if (!g)
		return;
	if (added) {
		g->nr_objects = obj->nr_objects ? obj->nr_objects : 1;
		g->refs = refs;
	} else {
		/* one object seen twice stays one; otherwise the groups add up */
		if (!(g->nr_objects == 1 && obj->nr_objects <= 1 && g->start == obj->start))
			g->nr_objects += obj->nr_objects ? obj->nr_objects : 1;
		g->refs += refs;
		for (__u32 t = 0; t < obj->nr_tids; t++)
			add_tid(g, obj->alloc_tids[t]);
	}
	bubble_up(is->objects, g, sizeof(*g), object_refs);
}

bool cp_issue_related(const struct cp_issue *a, const struct cp_issue *b)
{
	if (a->tgid != b->tgid || a->type != b->type || a->origin != b->origin)
		return false;
	for (__u32 i = 0; i < a->nr_objects; i++)
		for (__u32 j = 0; j < b->nr_objects; j++)
			if (same_group(&a->objects[i], &b->objects[j]))
				return true;
	for (__u32 i = 0; i < a->nr_insns; i++)
		for (__u32 j = 0; j < b->nr_insns; j++)
			if (same_line(&a->insns[i], &b->insns[j]))
				return true;
	return false;
}

bool cp_issue_line_insn(const struct cp_issue *is, __u64 ip_bytes)
{
	__u64 other = is->sharing.other_part;

	if (!other)
		return true;
	return is->type == CP_ISSUE_FALSE_SHARING ? !(ip_bytes & other) : (ip_bytes & ~other) != 0;
}

size_t cp_issue_pids(const struct cp_issue *is, __u32 *out)
{
	size_t n = 0;

	out[n++] = is->tgid;
	for (__u32 i = 0; i < is->sharing.nr_threads && i < CP_LINE_MAX_THREADS; i++) {
		__u32 pid = is->sharing.thr[i].pid;
		size_t k = 0;

		while (k < n && out[k] != pid)
			k++;
		if (pid && k == n)
			out[n++] = pid;
	}
	return n;
}

void cp_issue_merge(struct cp_issue *dst, const struct cp_issue *src)
{
	dst->score += src->score;
	dst->misses_per_s += src->misses_per_s;
	dst->cost_cycles_per_s += src->cost_cycles_per_s;
	dst->have_cost |= src->have_cost;
	dst->samples += src->samples;
	dst->misses += src->misses;
	for (__u32 i = 0; i < src->nr_insns; i++)
		cp_issue_add_insn(dst, &src->insns[i]);
	dst->more_insns += src->more_insns;
	for (__u32 i = 0; i < src->nr_objects; i++)
		cp_issue_add_object(dst, &src->objects[i], src->objects[i].refs);
	dst->more_objects += src->more_objects;
	if (dst->type == CP_ISSUE_FALSE_SHARING || dst->type == CP_ISSUE_TRUE_SHARING) {
		__u32 lines = dst->sharing.nr_lines + src->sharing.nr_lines;

		/* the evidence shown is the line with the most misses */
		if (src->sharing.line_misses > dst->sharing.line_misses)
			dst->sharing = src->sharing;
		dst->sharing.nr_lines = lines;
	}
	if (dst->type == CP_ISSUE_CONFLICT && src->conflict.accesses > dst->conflict.accesses)
		dst->conflict = src->conflict;
	if (src->capacity.footprint > dst->capacity.footprint)
		dst->capacity = src->capacity;
}

static __u64 first_ip(const struct cp_issue *is)
{
	return is->nr_insns ? is->insns[0].ip : is->sharing.line_addr;
}

/* -1 when @x ranks first (larger), 1 when @y does, else 0. */
static int larger_first(double x, double y)
{
	return x > y ? -1 : x < y;
}

static int by_impact(const void *pa, const void *pb)
{
	const struct cp_issue *a = pa, *b = pb;
	int r = larger_first(a->score, b->score);

	if (!r)
		r = larger_first(a->cost_cycles_per_s, b->cost_cycles_per_s);
	if (!r)
		r = larger_first(a->misses_per_s, b->misses_per_s);
	/* ties: lowest process, then lowest address, then type, so the order is stable */
	if (!r)
		r = -larger_first(a->tgid, b->tgid);
	if (!r)
		r = -larger_first((double)first_ip(a), (double)first_ip(b));
	return r ? r : (int)a->type - (int)b->type;
}

void cp_issue_rank(struct cp_issue *issues, size_t n)
{
	qsort(issues, n, sizeof(*issues), by_impact);
}
