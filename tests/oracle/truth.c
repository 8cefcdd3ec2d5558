// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Ground truth per instruction, line and object, and the dominant issue. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "objects/elf_syms.h"
#include "util/grow.h"
#include "symbols/symbolizer.h"

#include "truth.h"

#define NO_OBJ		(~0u)
#define LINE_OBJS	4	/* heap objects remembered per shared line */

/* A key -> index table that grows; keys are stored + 1 (0 marks a free slot). */
struct index {
	__u64 *key;
	__u32 *val;
	size_t n, cap;
};

struct t_insn {
	__u64 ip;
	__u64 loads, stores;
	__u64 miss[CP_MISS_CLASS_NR];
	__u32 conflict_objs[2];		/* distinct heap objects of its conflict misses */
};

struct t_line {
	__u64 line;
	__u64 miss[CP_MISS_CLASS_NR];
	__u32 objs[LINE_OBJS];		/* heap objects its sharing misses fell in */
};

struct t_obj {
	bool heap;
	__u64 start, size, ip;		/* ip: the allocation's call site */
	__u32 tid;
	const char *name;		/* globals */
	__u64 miss[CP_MISS_CLASS_NR];
};

struct cp_truth {
	__u32 line_bytes;
	const struct cp_elf_syms *syms;
	struct index ip_ix, line_ix, glob_ix;
	struct t_insn *insns;
	size_t nr_insns, cap_insns;
	struct t_line *lines;
	size_t nr_lines, cap_lines;
	struct t_obj *objs;
	size_t nr_objs, cap_objs;
	__u32 *live;			/* live heap objects by start */
	size_t nr_live, cap_live;
	__u64 loads, stores, load_miss, store_miss;	/* misses: not compulsory */
	__u64 miss[CP_MISS_CLASS_NR];
};

static size_t slot_of(__u64 key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 21) & (cap - 1);
}

/* The value of @key, or *@added = true and the next free value @next. ~0 on no memory. */
static __u32 index_get(struct index *x, __u64 key, __u32 next, bool *added)
{
	size_t i;

	*added = false;
	if ((x->n + 1) * 2 > x->cap) {
		struct index y = { .cap = x->cap ? x->cap * 2 : 4096 };

		y.key = calloc(y.cap, sizeof(*y.key));
		y.val = calloc(y.cap, sizeof(*y.val));
		if (!y.key || !y.val) {
			free(y.key);
			free(y.val);
			return NO_OBJ;
		}
		for (size_t k = 0; k < x->cap; k++) {
			if (!x->key[k])
				continue;
			for (i = slot_of(x->key[k], y.cap); y.key[i]; i = (i + 1) & (y.cap - 1))
				;
			y.key[i] = x->key[k];
			y.val[i] = x->val[k];
		}
		y.n = x->n;
		free(x->key);
		free(x->val);
		*x = y;
	}
	for (i = slot_of(key + 1, x->cap); x->key[i]; i = (i + 1) & (x->cap - 1))
		if (x->key[i] == key + 1)
			return x->val[i];
	x->key[i] = key + 1;
	x->val[i] = next;
	x->n++;
	*added = true;
	return next;
}

struct cp_truth *cp_truth__new(__u32 line_bytes)
{
	struct cp_truth *t = calloc(1, sizeof(*t));

	if (t)
		t->line_bytes = line_bytes;
	return t;
}

void cp_truth__free(struct cp_truth *t)
{
	if (!t)
		return;
	free(t->ip_ix.key), free(t->ip_ix.val), free(t->line_ix.key), free(t->line_ix.val);
	free(t->glob_ix.key), free(t->glob_ix.val);
	free(t->insns), free(t->lines), free(t->objs), free(t->live);
	free(t);
}

void cp_truth__set_globals(struct cp_truth *t, const struct cp_elf_syms *syms)
{
	t->syms = syms;
}

static struct t_obj *obj_new(struct cp_truth *t)
{
	if (cp_grow((void **)&t->objs, &t->cap_objs, t->nr_objs, sizeof(*t->objs), 1024))
		return NULL;
	memset(&t->objs[t->nr_objs], 0, sizeof(*t->objs));
	return &t->objs[t->nr_objs++];
}

/* The first live object starting above @addr (binary search). */
static size_t live_upper(const struct cp_truth *t, __u64 addr)
{
	size_t lo = 0, hi = t->nr_live;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->objs[t->live[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void cp_truth__alloc(struct cp_truth *t, __u32 tid, __u64 ip, __u64 addr, __u64 size)
{
	struct t_obj *o = obj_new(t);
	size_t at;

	if (!o || cp_grow((void **)&t->live, &t->cap_live, t->nr_live, sizeof(*t->live), 1024))
		return;
	*o = (struct t_obj){ .heap = true, .start = addr, .size = size ? size : 1, .ip = ip,
			     .tid = tid };
	at = live_upper(t, addr);
	memmove(&t->live[at + 1], &t->live[at], (t->nr_live - at) * sizeof(*t->live));
	t->live[at] = (__u32)(t->nr_objs - 1);
	t->nr_live++;
}

void cp_truth__free_obj(struct cp_truth *t, __u64 addr)
{
	size_t at = live_upper(t, addr);

	if (!at || t->objs[t->live[at - 1]].start != addr)
		return;
	at--;
	memmove(&t->live[at], &t->live[at + 1], (t->nr_live - at - 1) * sizeof(*t->live));
	t->nr_live--;
}

/* The object holding @addr: a live heap object, else a global; NO_OBJ if neither. */
static __u32 object_at(struct cp_truth *t, __u64 addr)
{
	size_t at = live_upper(t, addr);
	const struct cp_symbol *sym;
	struct t_obj *o;
	bool added;
	__u32 id;

	if (at && addr < t->objs[t->live[at - 1]].start + t->objs[t->live[at - 1]].size)
		return t->live[at - 1];
	sym = t->syms ? cp_elf_syms__find(t->syms, addr) : NULL;
	if (!sym)
		return NO_OBJ;
	id = index_get(&t->glob_ix, sym->value, (__u32)t->nr_objs, &added);
	if (!added)
		return id;
	o = obj_new(t);
	if (!o)
		return NO_OBJ;
	*o = (struct t_obj){ .start = sym->value, .size = sym->size, .name = sym->name };
	return id;
}

static struct t_insn *insn_of(struct cp_truth *t, __u64 ip)
{
	bool added;
	__u32 i = index_get(&t->ip_ix, ip, (__u32)t->nr_insns, &added);

	if (i == NO_OBJ)
		return NULL;
	if (added) {
		if (cp_grow((void **)&t->insns, &t->cap_insns, t->nr_insns, sizeof(*t->insns), 256))
			return NULL;
		t->insns[t->nr_insns++] = (struct t_insn){ .ip = ip,
			.conflict_objs = { NO_OBJ, NO_OBJ } };
	}
	return &t->insns[i];
}

static struct t_line *line_of(struct cp_truth *t, __u64 line)
{
	bool added;
	__u32 i = index_get(&t->line_ix, line, (__u32)t->nr_lines, &added);

	if (i == NO_OBJ)
		return NULL;
	if (added) {
		if (cp_grow((void **)&t->lines, &t->cap_lines, t->nr_lines, sizeof(*t->lines), 1024))
			return NULL;
		t->lines[t->nr_lines++] = (struct t_line){ .line = line,
			.objs = { NO_OBJ, NO_OBJ, NO_OBJ, NO_OBJ } };
	}
	return &t->lines[i];
}

/* Adds @id to a small set of distinct ids; full sets keep what they have. */
static void note_obj(__u32 *set, int n, __u32 id)
{
	for (int i = 0; i < n; i++) {
		if (set[i] == id)
			return;
		if (set[i] == NO_OBJ) {
			set[i] = id;
			return;
		}
	}
}

void cp_truth__access(struct cp_truth *t, __u32 tid, __u64 ip, __u64 addr, bool write,
		      const struct cp_sim_result *r)
{
	struct t_insn *in = insn_of(t, ip);
	struct t_line *l;
	__u32 obj;

	(void)tid;
	if (write)
		t->stores++;
	else
		t->loads++;
	if (in)
		*(write ? &in->stores : &in->loads) += 1;
	if (r->cls == CP_MISS_HIT)
		return;
	t->miss[r->cls]++;
	if (r->cls != CP_MISS_COMPULSORY)
		*(write ? &t->store_miss : &t->load_miss) += 1;
	obj = object_at(t, addr);
	if (obj != NO_OBJ)
		t->objs[obj].miss[r->cls]++;
	if (!in)
		return;
	in->miss[r->cls]++;
	if (r->cls == CP_MISS_CONFLICT && obj != NO_OBJ && t->objs[obj].heap)
		note_obj(in->conflict_objs, 2, obj);
	if (r->cls != CP_MISS_TRUE_SHARING && r->cls != CP_MISS_FALSE_SHARING)
		return;
	l = line_of(t, addr / t->line_bytes);
	if (!l)
		return;
	l->miss[r->cls]++;
	if (obj != NO_OBJ && t->objs[obj].heap)
		note_obj(l->objs, LINE_OBJS, obj);
}

/* ---- the report of the truth ---- */

static const char *where(struct cp_symbolizer *sym, const char *exe, __u64 ip, char *buf,
			 size_t sz)
{
	struct cp_symbol_info si;
	const char *base;

	if (!sym || cp_symbolizer__resolve_file(sym, exe, ip, &si) || !si.file || !si.line) {
		snprintf(buf, sz, "0x%llx", (unsigned long long)ip);
		return buf;
	}
	base = strrchr(si.file, '/');
	snprintf(buf, sz, "%s:%u", base ? base + 1 : si.file, si.line);
	return buf;
}

static __u64 not_compulsory(const __u64 *miss)
{
	__u64 n = 0;

	for (int c = CP_MISS_CAPACITY; c < CP_MISS_CLASS_NR; c++)
		n += miss[c];
	return n;
}

static void print_obj(const struct cp_truth *t, __u32 id, struct cp_symbolizer *sym,
		      const char *exe, FILE *f)
{
	const struct t_obj *o = &t->objs[id];
	char buf[256];

	if (o->heap)
		fprintf(f, "heap:%s", where(sym, exe, o->ip, buf, sizeof(buf)));
	else
		fprintf(f, "global:%s", o->name);
}

/* The item of @n (@stride bytes apart) whose __u64 at @off is largest and > 0; -1 if none. */
static long argmax(const void *base, size_t n, size_t stride, size_t off)
{
	__u64 best = 0;
	long b = -1;

	for (size_t i = 0; i < n; i++) {
		__u64 v;

		memcpy(&v, (const char *)base + i * stride + off, sizeof(v));
		if (v > best) {
			best = v;
			b = (long)i;
		}
	}
	return b;
}

/* Heap objects by call site, then globals by name: the groups the report makes. */
static __u64 group_key(const struct t_obj *o)
{
	return o->heap ? o->ip : (__u64)(uintptr_t)o->name | 1ull << 63;
}

static const struct cp_truth *sort_truth;

static int by_group(const void *a, const void *b)
{
	__u64 ka = group_key(&sort_truth->objs[*(const __u32 *)a]);
	__u64 kb = group_key(&sort_truth->objs[*(const __u32 *)b]);

	return ka < kb ? -1 : ka > kb;
}

/*
 * The object with the most misses of class @cls, counting heap objects by
 * their allocation call site (as the report groups them: 24 nodes from one
 * malloc are one issue object) and globals by name; -1 if none.
 */
static long best_object_group(const struct cp_truth *t, int cls)
{
	__u32 *ix = malloc(t->nr_objs * sizeof(*ix) + 1);
	__u64 best = 0, sum = 0;
	long b = -1;

	if (!ix)
		return -1;
	for (size_t i = 0; i < t->nr_objs; i++)
		ix[i] = (__u32)i;
	sort_truth = t;
	qsort(ix, t->nr_objs, sizeof(*ix), by_group);
	for (size_t i = 0; i < t->nr_objs; i++) {
		sum += t->objs[ix[i]].miss[cls];
		if (i + 1 < t->nr_objs &&
		    group_key(&t->objs[ix[i + 1]]) == group_key(&t->objs[ix[i]]))
			continue;
		if (sum > best) {
			best = sum;
			b = ix[i];
		}
		sum = 0;
	}
	free(ix);
	return b;
}

static bool allocator_line(const struct cp_truth *t, const struct t_line *l)
{
	__u32 heaps = 0, tid0 = 0;
	bool two_tids = false;

	for (int i = 0; i < LINE_OBJS && l->objs[i] != NO_OBJ; i++) {
		const struct t_obj *o = &t->objs[l->objs[i]];

		if (!heaps++)
			tid0 = o->tid;
		else if (o->tid != tid0)
			two_tids = true;
	}
	return heaps >= 2 && two_tids;
}

void cp_truth__print(const struct cp_truth *t, const char *exe, FILE *f)
{
	static const char *const issue_names[CP_MISS_CLASS_NR] = {
		[CP_MISS_CAPACITY] = "capacity", [CP_MISS_CONFLICT] = "conflict",
		[CP_MISS_TRUE_SHARING] = "true_sharing", [CP_MISS_FALSE_SHARING] = "false_sharing",
	};
	struct cp_symbolizer *sym = cp_symbolizer__new(4, 0);
	int cls = 0;
	long bi, bo, bl = -1;
	char buf[256];
	__u64 nc = not_compulsory(t->miss);
	/* a ratio over fewer than 1000 accesses says nothing */
	bool serious = (t->loads >= 1000 && t->load_miss * 100 >= 3 * t->loads) ||
		       (t->stores >= 1000 && t->store_miss * 100 >= 1 * t->stores);

	fprintf(f, "accesses: %llu loads, %llu stores\n", (unsigned long long)t->loads,
		(unsigned long long)t->stores);
	fprintf(f, "l1 misses:");
	for (int c = CP_MISS_COMPULSORY; c < CP_MISS_CLASS_NR; c++) {
		fprintf(f, " %s %llu", cp_miss_class_name(c), (unsigned long long)t->miss[c]);
		if (c >= CP_MISS_CAPACITY && t->miss[c] > (cls ? t->miss[cls] : 0))
			cls = c;
	}
	fprintf(f, "\nmiss ratio without compulsory: loads %.4f, stores %.4f\n",
		t->loads ? (double)t->load_miss / (double)t->loads : 0,
		t->stores ? (double)t->store_miss / (double)t->stores : 0);
	fprintf(f, "instructions (1 %% of the misses or more, not compulsory):\n");
	for (size_t i = 0; i < t->nr_insns; i++) {
		const struct t_insn *in = &t->insns[i];

		if (not_compulsory(in->miss) * 100 < nc || !nc)
			continue;	/* under 1 % of the misses */
		fprintf(f, "  %-22s loads %llu stores %llu", where(sym, exe, in->ip, buf, sizeof(buf)),
			(unsigned long long)in->loads, (unsigned long long)in->stores);
		for (int c = CP_MISS_CAPACITY; c < CP_MISS_CLASS_NR; c++)
			fprintf(f, " %s %llu", cp_miss_class_name(c), (unsigned long long)in->miss[c]);
		fputc('\n', f);
	}
	fprintf(f, "objects (1 %% of the misses or more):\n");
	for (size_t i = 0; i < t->nr_objs; i++) {
		if (!nc || not_compulsory(t->objs[i].miss) * 100 < nc)
			continue;
		fprintf(f, "  ");
		print_obj(t, (__u32)i, sym, exe, f);
		fprintf(f, " size %llu", (unsigned long long)t->objs[i].size);
		for (int c = CP_MISS_CAPACITY; c < CP_MISS_CLASS_NR; c++)
			fprintf(f, " %s %llu", cp_miss_class_name(c),
				(unsigned long long)t->objs[i].miss[c]);
		fputc('\n', f);
	}
	if (!serious || !cls) {
		fprintf(f, "truth: none (below the application thresholds)\n");
		cp_symbolizer__free(sym);
		return;
	}
	bi = argmax(t->insns, t->nr_insns, sizeof(*t->insns),
		    offsetof(struct t_insn, miss) + (size_t)cls * sizeof(__u64));
	bo = best_object_group(t, cls);
	if (cls == CP_MISS_TRUE_SHARING || cls == CP_MISS_FALSE_SHARING)
		bl = argmax(t->lines, t->nr_lines, sizeof(*t->lines),
			    offsetof(struct t_line, miss) + (size_t)cls * sizeof(__u64));
	fprintf(f, "truth: class=%s origin=%s line=%s object=", issue_names[cls],
		(cls == CP_MISS_FALSE_SHARING && bl >= 0 && allocator_line(t, &t->lines[bl])) ||
		(cls == CP_MISS_CONFLICT && bi >= 0 && t->insns[bi].conflict_objs[1] != NO_OBJ) ?
		"allocator" : "application",
		bi >= 0 ? where(sym, exe, t->insns[bi].ip, buf, sizeof(buf)) : "?");
	if (bo >= 0)
		print_obj(t, (__u32)bo, sym, exe, f);
	else
		fprintf(f, "none");
	fprintf(f, " misses=%llu share=%.3f\n", (unsigned long long)t->miss[cls],
		nc ? (double)t->miss[cls] / (double)nc : 0);
	cp_symbolizer__free(sym);
}
