// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The miss classifier: Algorithm 1 with the ratio filters (paper §3.5). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/byte_mask.h"
#include "util/grow.h"
#include "classify/issue.h"
#include "classify/stream_evidence.h"

#include "classify/classify.h"

#define CP_FOUND_MAX	    64 /* objects looked up per line or history: one per byte at most */
#define CP_CAPACITY_LOOKUPS 8  /* addresses of a capacity issue looked up for its objects */

/* Growing list of candidate issues (at most ~100 lines and ~100 instructions pass 1 %). */
struct issue_list {
	struct cp_issue *v;
	size_t n, cap;
};

/* An instruction's forwarded misses on shared lines. */
struct explained {
	__u32 tgid;
	__u64 ip;
	__u64 misses;
};

struct explained_list {
	struct explained *v;
	size_t n, cap;
};

/* Distinct objects met while looking up addresses, with how often each. */
struct found {
	struct cp_issue_object obj;
	__u32 refs;
};

struct classify_ctx {
	const struct cp_classify_input *in;
	const struct cp_classify_cfg *cfg;
	struct cp_classification *out;
	struct issue_list issues;
	struct explained_list explained;
	struct found found[CP_FOUND_MAX];
	size_t nr_found;
};

void cp_classify_cfg_defaults(struct cp_classify_cfg *cfg)
{
	*cfg = (struct cp_classify_cfg){
		.app_load_miss_ppm = CP_APP_LOAD_MISS_PPM_DEFAULT,
		.app_store_miss_ppm = CP_APP_STORE_MISS_PPM_DEFAULT,
		.min_access_ppm = CP_MIN_ACCESS_PPM_DEFAULT,
		.min_miss_ppm = CP_MIN_MISS_PPM_DEFAULT,
		.min_line_miss_ppm = CP_MIN_LINE_MISS_PPM_DEFAULT,
		.conflict_min_accesses = CP_CONFLICT_MIN_ACCESSES,
		.top = CP_ISSUES_TOP_DEFAULT,
	};
}

/* Each type's name in JSON and its wording in the text report. */
static const struct {
	const char *name;
	const char *text;
} issue_types[CP_ISSUE_TYPE_NR] = {
	[CP_ISSUE_FALSE_SHARING] = {"false_sharing", "false sharing"},
	[CP_ISSUE_TRUE_SHARING] = {"true_sharing", "true sharing"},
	[CP_ISSUE_CONFLICT] = {"conflict", "conflict misses"},
	[CP_ISSUE_CAPACITY] = {"capacity", "capacity misses"},
	[CP_ISSUE_CAPACITY_OR_CONFLICT] = {"capacity_or_conflict",
					   "capacity or conflict misses (pending access pattern)"},
};

bool cp_src_loc_at(const struct cp_src_loc *loc, const char *file, __u32 line)
{
	return loc->line && line == loc->line && loc->file[0] && file &&
	       strncmp(file, loc->file, sizeof(loc->file) - 1) == 0;
}

const char *cp_issue_type_name(enum cp_issue_type t)
{
	return (unsigned int)t < CP_ISSUE_TYPE_NR ? issue_types[t].name : "?";
}

const char *cp_issue_type_text(enum cp_issue_type t)
{
	return (unsigned int)t < CP_ISSUE_TYPE_NR ? issue_types[t].text : "?";
}

const char *cp_issue_origin_name(enum cp_issue_origin o)
{
	return o == CP_ORIGIN_ALLOCATOR	    ? "allocator"
	       : o == CP_ORIGIN_APPLICATION ? "application"
					    : "?";
}

/* @part is at least @ppm parts per million of @whole (never for an empty whole). */
static bool share_at_least(__u64 part, __u64 whole, __u32 ppm)
{
	return whole && (double)part * 1e6 >= (double)ppm * (double)whole;
}

static struct cp_issue *issue_new(struct classify_ctx *c, enum cp_issue_type type, __u32 tgid)
{
	struct issue_list *l = &c->issues;
	struct cp_issue *is;

	if (cp_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v), 16))
		return NULL;
	is = &l->v[l->n++];
	memset(is, 0, sizeof(*is));
	is->type = type;
	is->tgid = tgid;
	return is;
}

/* Estimated misses per second: samples x period / duration; 0 when unknown. */
static double per_second(const struct cp_classify_input *in, __u64 load_samples,
			 __u64 store_samples)
{
	if (in->duration_s <= 0)
		return 0;
	return ((double)load_samples * (double)in->load_period +
		(double)store_samples * (double)in->store_period) /
	       in->duration_s;
}

/* Latency-weighted cost, cycles per second; weights stand for their samples' period. */
static void set_cost(struct cp_issue *is, const struct cp_classify_input *in, __u64 weights)
{
	double period = in->load_period ? (double)in->load_period : 1;

	is->have_cost = weights && in->duration_s > 0;
	if (is->have_cost)
		is->cost_cycles_per_s = (double)weights * period / in->duration_s;
}

static void add_insn(struct classify_ctx *c, struct cp_issue *is, __u32 tgid, __u64 ip,
		     __u64 samples, __u64 misses)
{
	struct cp_issue_insn e = {
		.tgid = tgid,
		.ip = ip,
		.nr_ips = 1,
		.samples = samples,
		.misses = misses,
	};

	if (c->in->locate)
		e.have_loc = c->in->locate(c->in->locate_ctx, tgid, ip, &e.loc, &e.callers) == 0;
	cp_issue_add_insn(is, &e);
}

/* Looks up the object at @addr into the found set. Returns its end, or 0 if none. */
static __u64 find_object(struct classify_ctx *c, __u32 tgid, __u64 addr)
{
	struct cp_issue_object o;
	size_t i;

	if (!c->in->object_at)
		return 0;
	memset(&o, 0, sizeof(o));
	if (c->in->object_at(c->in->object_ctx, tgid, addr, &o) < 0)
		return 0;
	for (i = 0; i < c->nr_found; i++)
		if (c->found[i].obj.kind == o.kind && c->found[i].obj.start == o.start)
			break;
	if (i < c->nr_found)
		c->found[i].refs++;
	else if (c->nr_found < CP_FOUND_MAX)
		c->found[c->nr_found++] = (struct found){.obj = o, .refs = 1};
	return o.start + (o.size ? o.size : 1);
}

/*
 * An object the hints may name with its size: a heap object, a variable, a
 * region the program mapped itself. Not memory no allocation was seen for
 * (its size would be its mapping's), a stack, or a mapped file.
 */
static bool names_object(const struct cp_issue_object *o)
{
	switch (o->kind) {
	case CP_OBJ_HEAP:
	case CP_OBJ_GLOBAL:
	case CP_OBJ_TLS:
		return o->size;
	case CP_OBJ_MAPPING:
		return o->callsite && o->size;
	default:
		return false;
	}
}

/* Several distinct heap objects among those found, by @min_tids allocating threads. */
static bool several_heap_objects(const struct classify_ctx *c, __u32 min_tids)
{
	__u32 heaps = 0, tids[CP_FOUND_MAX], nr_tids = 0;

	for (size_t i = 0; i < c->nr_found; i++) {
		const struct cp_issue_object *o = &c->found[i].obj;
		__u32 t;

		if (o->kind != CP_OBJ_HEAP)
			continue;
		heaps++;
		if (!o->nr_tids)
			continue;
		for (t = 0; t < nr_tids && tids[t] != o->alloc_tids[0]; t++)
			;
		if (t == nr_tids)
			tids[nr_tids++] = o->alloc_tids[0];
	}
	return heaps >= 2 && nr_tids >= min_tids;
}

/* Whether every heap object found has its allocating thread (seen allocated). */
static bool allocating_threads_known(const struct classify_ctx *c)
{
	for (size_t i = 0; i < c->nr_found; i++)
		if (c->found[i].obj.kind == CP_OBJ_HEAP && !c->found[i].obj.nr_tids)
			return false;
	return true;
}

/* The bytes of @o in the line @sh, as a mask of the line's bytes. */
static __u64 line_mask_of(const struct cp_issue_object *o, const struct cp_issue_sharing *sh)
{
	__u64 end = o->start + (o->size ? o->size : 1);
	__u64 lo = o->start > sh->line_addr ? o->start - sh->line_addr : 0;

	if (lo >= sh->line_bytes || end <= sh->line_addr + lo)
		return 0;
	end -= sh->line_addr + lo;
	return cp_byte_mask((__u32)lo, end < sh->line_bytes ? (__u32)end : sh->line_bytes,
			    sh->line_bytes);
}

/*
 * Allocator origin without the allocating threads (objects allocated before
 * attach, or while the probes were backed off): two or more heap objects on
 * the line, each accessed by a thread that accesses no other of them. Those
 * threads are different, and the allocator placed their objects together.
 */
static bool objects_of_separate_threads(const struct classify_ctx *c,
					const struct cp_issue_sharing *sh)
{
	__u64 owned = 0; /* found[] indexes with a thread of their own */
	__u32 heaps = 0;

	for (__u32 t = 0; t < sh->nr_threads; t++) {
		__u64 touched = sh->thr[t].read_mask | sh->thr[t].write_mask;
		int only = -1, n = 0;

		for (size_t i = 0; i < c->nr_found && i < 64; i++) {
			const struct cp_issue_object *o = &c->found[i].obj;

			if (o->kind == CP_OBJ_HEAP && (touched & line_mask_of(o, sh))) {
				only = (int)i;
				n++;
			}
		}
		if (n == 1)
			owned |= 1ull << only;
	}
	for (; owned; owned &= owned - 1)
		heaps++;
	return heaps >= 2;
}

static void take_found(struct classify_ctx *c, struct cp_issue *is)
{
	for (size_t i = 0; i < c->nr_found; i++)
		cp_issue_add_object(is, &c->found[i].obj, c->found[i].refs);
	c->nr_found = 0;
}

static int note_explained(struct classify_ctx *c, const struct cp_line *l)
{
	struct explained_list *e = &c->explained;

	for (__u32 i = 0; i < CP_LINE_MAX_IPS && l->ips[i].misses; i++) {
		if (cp_grow((void **)&e->v, &e->cap, e->n, sizeof(*e->v), 64))
			return -ENOMEM;
		e->v[e->n++] =
			(struct explained){cp_line_ip_tgid(l, i), l->ips[i].ip, l->ips[i].misses};
	}
	return 0;
}

static int by_key(const void *pa, const void *pb)
{
	const struct explained *a = pa, *b = pb;

	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

/* Sorts the explained list and sums duplicates, so lookups can bisect. */
static void explained_finish(struct explained_list *e)
{
	size_t n = 0;

	if (!e->n)
		return;
	qsort(e->v, e->n, sizeof(*e->v), by_key);
	for (size_t i = 1; i < e->n; i++) {
		if (!by_key(&e->v[n], &e->v[i]))
			e->v[n].misses += e->v[i].misses;
		else
			e->v[++n] = e->v[i];
	}
	e->n = n + 1;
}

/*
 * Coherence explains @in when at least half of its forwarded misses fell
 * on shared lines: an instruction that also walks a large array keeps its
 * capacity misses (paper §3.5 marks the lines' instructions as checked).
 */
static bool explained(const struct explained_list *e, const struct cp_insn *in)
{
	struct explained key = {.tgid = in->key.tgid, .ip = in->key.ip};
	const struct explained *hit =
		e->n ? bsearch(&key, e->v, e->n, sizeof(*e->v), by_key) : NULL;

	return hit && hit->misses * 2 >= in->fwd_misses;
}

/*
 * Which of a line's samples an issue takes: the whole line, or one part of
 * a mixed one (cp_line_parts()): its bytes, samples, each thread's samples,
 * and the bytes the line's other issue takes (0: none); its instructions:
 * cp_issue_line_insn().
 */
struct line_part {
	__u64 bytes;
	__u64 misses;
	const __u32 *accesses; /* NULL: the threads' own counts */
	__u64 other_bytes;
};

/* Scales @v of the line's @l->misses samples to the part's @p->misses. */
static __u64 part_of(const struct cp_line *l, const struct line_part *p, __u64 v)
{
	if (p->misses == l->misses)
		return v; /* the whole line, exactly */
	return l->misses ? (__u64)((double)v * (double)p->misses / (double)l->misses) : 0;
}

/*
 * The process an issue of line @l (its part @p) is charged to: the line's
 * own, or for a shared file's line the process with the most of the part's
 * samples (its threads' together; the first listed of equals).
 */
static __u32 line_owner(const struct cp_line *l, const struct line_part *p)
{
	__u32 owner = 0, most = 0;

	if (!cp_space_is_file(l->tgid))
		return l->tgid;
	for (__u32 i = 0; i < l->nr_threads; i++) {
		__u32 n = 0;

		for (__u32 k = 0; k < l->nr_threads; k++)
			if (l->thr[k].pid == l->thr[i].pid)
				n += p->accesses ? p->accesses[k] : l->thr[k].accesses;
		if (!owner || n > most) {
			owner = l->thr[i].pid;
			most = n;
		}
	}
	return owner;
}

/* Algorithm 1, first loop: one shared line (or part of one) with enough misses. */
static int sharing_issue(struct classify_ctx *c, const struct cp_line *l, enum cp_sharing sh,
			 const struct line_part *p)
{
	const struct cp_classify_input *in = c->in;
	__u32 line_bytes = in->l1->line_bytes;
	__u64 line_addr = l->line * line_bytes, mask = 0, stores = part_of(l, p, l->stores);
	bool in_file = cp_space_is_file(l->tgid); /* a shared file's line */
	struct cp_issue *is;

	is = issue_new(c, sh == CP_SHARING_TRUE ? CP_ISSUE_TRUE_SHARING : CP_ISSUE_FALSE_SHARING,
		       line_owner(l, p));
	if (!is)
		return -ENOMEM;
	is->sharing.line_space = l->tgid;
	is->samples = is->misses = p->misses;
	/* soft: the line's samples are ticks on instructions accessing it */
	is->score = (double)p->misses /
		    (double)(c->out->soft ? c->out->time_samples : c->out->forwarded_misses);
	/* a part's stores and weights: the line's, in proportion to its samples */
	is->misses_per_s = per_second(in, p->misses - stores, stores);
	set_cost(is, in, part_of(l, p, l->weight_sum));
	is->sharing.line_addr = line_addr;
	is->sharing.line_bytes = line_bytes;
	is->sharing.nr_lines = 1;
	is->sharing.line_misses = p->misses;
	is->sharing.other_part = p->other_bytes;
	is->sharing.more_threads = l->more_threads;
	for (__u32 i = 0; i < l->nr_threads; i++) {
		const struct cp_line_thread *t = &l->thr[i];
		struct cp_issue_thread it = {
			.tid = t->tid,
			.pid = t->pid ? t->pid : l->tgid,
			.accesses = p->accesses ? p->accesses[i] : t->accesses,
			.read_mask = t->read_mask & p->bytes,
			.write_mask = t->write_mask & p->bytes,
		};

		if (!it.read_mask && !it.write_mask)
			continue;
		is->sharing.thr[is->sharing.nr_threads++] = it;
		mask |= it.read_mask | it.write_mask;
	}
	/* every object on the bytes the threads touched, each looked up once */
	c->nr_found = 0;
	for (__u32 b = 0; b < line_bytes;) {
		__u64 end;

		if (!(mask >> b & 1)) {
			b++;
			continue;
		}
		end = find_object(c, l->tgid, line_addr + b);
		b = end > line_addr + b
			    ? (end - line_addr > line_bytes ? line_bytes : (__u32)(end - line_addr))
			    : b + 1;
	}
	/*
	 * the hint pads "the object": one that is one, never the mapping
	 * around it, unless the line is a shared file's: the file is the
	 * layout the processes mapping it agree on
	 */
	for (size_t i = 0; i < c->nr_found; i++) {
		const struct cp_issue_object *o = &c->found[i].obj;

		if (!names_object(o) && !(in_file && o->kind == CP_OBJ_MAPPING && o->size))
			continue;
		is->sharing.object_start = o->start;
		is->sharing.object_size = o->size;
		break;
	}
	/*
	 * the paper: several objects on the line, allocated by different
	 * threads; without those threads, each accessed by a different thread
	 */
	if (sh == CP_SHARING_FALSE &&
	    (several_heap_objects(c, 2) ||
	     (!allocating_threads_known(c) && objects_of_separate_threads(c, &is->sharing))))
		is->origin = CP_ORIGIN_ALLOCATOR;
	take_found(c, is);
	for (__u32 i = 0; i < CP_LINE_MAX_IPS && l->ips[i].misses; i++)
		if (cp_issue_line_insn(is, l->ips[i].mask))
			add_insn(c, is, cp_line_ip_tgid(l, i), l->ips[i].ip, l->ips[i].misses,
				 l->ips[i].misses);
	return 0;
}

/* Whether @misses of a line (or of a part of one) are enough for an issue. */
static bool line_share(const struct classify_ctx *c, __u64 misses)
{
	return share_at_least(misses,
			      c->out->soft ? c->out->time_samples : c->out->forwarded_misses,
			      c->cfg->min_line_miss_ppm);
}

/*
 * The issues of shared line @l, which has its share of the samples: one of
 * its kind; two for a truly shared line with a false-sharing part
 * (cp_line_parts()) when each part has that share too, each with its own
 * bytes, samples and instructions.
 */
static int line_issues(struct classify_ctx *c, const struct cp_line *l, enum cp_sharing sh)
{
	struct line_part whole = {.bytes = ~0ull, .misses = l->misses};
	struct cp_line_parts parts;
	int err;

	if (sh != CP_SHARING_TRUE || !cp_line_parts(l, c->out->soft, &parts) ||
	    !line_share(c, parts.shared_misses) || !line_share(c, parts.rest_misses))
		return sharing_issue(c, l, sh, &whole);
	err = sharing_issue(c, l, CP_SHARING_TRUE,
			    &(struct line_part){.bytes = parts.shared,
						.misses = parts.shared_misses,
						.accesses = parts.shared_accesses,
						.other_bytes = parts.rest});
	if (err)
		return err;
	return sharing_issue(c, l, CP_SHARING_FALSE,
			     &(struct line_part){.bytes = parts.rest,
						 .misses = parts.rest_misses,
						 .accesses = parts.rest_accesses,
						 .other_bytes = parts.shared});
}

static int classify_lines(struct classify_ctx *c)
{
	const struct cp_miss_store *ms = c->in->misses;
	struct cp_miss_store_stats st;
	const struct cp_line **lines;
	size_t n;
	int err = 0;

	cp_miss_store__stats(ms, &st);
	if (!st.lines)
		return 0;
	lines = malloc(st.lines * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	n = cp_miss_store__top(ms, lines, st.lines);
	for (size_t i = 0; i < n && !err; i++) {
		enum cp_sharing sh = c->out->soft ? cp_line_sharing_concurrent(lines[i])
						  : cp_line_sharing(lines[i]);

		if (sh == CP_SHARING_NONE)
			continue;
		err = note_explained(c, lines[i]);
		if (err)
			break;
		if (!line_share(c, lines[i]->misses))
			c->out->suppressed++;
		else
			err = line_issues(c, lines[i], sh);
	}
	free(lines);
	explained_finish(&c->explained);
	return err;
}

static __u64 insn_misses(const struct classify_ctx *c, const struct cp_insn *in)
{
	if (c->in->no_levels || c->in->soft)
		return in->counts.loads + in->counts.stores;
	return in->counts.load_misses + in->counts.store_misses;
}

/*
 * The L1 set of @h holding the most accesses: how many, and how many
 * distinct lines. Returns the set.
 */
static __u32 crowded_set(const struct cp_cache_level *l1, const struct cp_insn_history *h,
			 __u32 *accesses, __u32 *distinct)
{
	__u32 best = 0, best_acc = 0, best_lines = 0;

	for (__u32 i = 0; i < h->len; i++) {
		__u32 set = cp_cache_set_of(l1, h->addrs[i]), acc = 0, lines = 0;

		for (__u32 j = 0; j < h->len; j++) {
			bool first = true;

			if (cp_cache_set_of(l1, h->addrs[j]) != set)
				continue;
			acc++;
			for (__u32 k = 0; k < j && first; k++)
				first = cp_cache_line_of(l1, h->addrs[k]) !=
					cp_cache_line_of(l1, h->addrs[j]);
			lines += first;
		}
		if (acc > best_acc || (acc == best_acc && lines > best_lines)) {
			best = set;
			best_acc = acc;
			best_lines = lines;
		}
	}
	*accesses = best_acc;
	*distinct = best_lines;
	return best;
}

/* Conflict evidence of @h, with the objects of the lines on the crowded set; false if none. */
static bool conflict_of(struct classify_ctx *c, const struct cp_insn *in,
			const struct cp_insn_history *h, struct cp_issue_conflict *out)
{
	const struct cp_cache_level *l1 = c->in->l1;
	__u32 acc, lines, set = crowded_set(l1, h, &acc, &lines);
	__u64 set_misses = cp_miss_store__set_misses(c->in->misses, set);

	if (acc < c->cfg->conflict_min_accesses || lines <= l1->ways)
		return false;
	/* a set must carry its share of the misses too; without forwarded misses, trust history */
	if (c->out->forwarded_misses &&
	    !share_at_least(set_misses, c->out->forwarded_misses, c->cfg->min_line_miss_ppm))
		return false;
	*out = (struct cp_issue_conflict){
		.set = set,
		.ways = l1->ways,
		.accesses = acc,
		.history = h->len,
		.distinct_lines = lines,
		.set_misses = set_misses,
	};
	c->nr_found = 0;
	for (__u32 i = 0; i < h->len; i++)
		if (cp_cache_set_of(l1, h->addrs[i]) == set)
			find_object(c, in->key.tgid, h->addrs[i]);
	return true;
}

/* Objects of @in's miss addresses and first history addresses, into the found set. */
static void find_insn_objects(struct classify_ctx *c, const struct cp_insn *in,
			      const struct cp_insn_history *h)
{
	for (__u32 i = 0; i < in->nr_miss_addrs; i++)
		find_object(c, in->key.tgid, in->miss_addrs[i]);
	for (__u32 i = 0; h && i < h->len && i < CP_CAPACITY_LOOKUPS; i++)
		find_object(c, in->key.tgid, h->addrs[i]);
}

/* Distinct lines of the miss store that @in's samples fell on. */
static __u64 sampled_lines(const struct classify_ctx *c, const struct cp_insn *in)
{
	struct cp_miss_store_stats st;
	const struct cp_line **lines;
	__u64 n = 0;
	size_t nr;

	cp_miss_store__stats(c->in->misses, &st);
	lines = st.lines ? malloc(st.lines * sizeof(*lines)) : NULL;
	if (!lines)
		return 0;
	nr = cp_miss_store__top(c->in->misses, lines, st.lines);
	for (size_t i = 0; i < nr; i++) {
		bool mine = false;

		for (__u32 k = 0; k < CP_LINE_MAX_IPS && lines[i]->ips[k].misses && !mine; k++)
			mine = lines[i]->ips[k].ip == in->key.ip &&
			       cp_line_ip_tgid(lines[i], k) == in->key.tgid;
		n += mine;
	}
	free(lines);
	return n;
}

/*
 * Soft mode's capacity evidence for @in (objects found already): a stream
 * in @h whose footprint exceeds L2. False when there is none.
 */
static bool stream_of(struct classify_ctx *c, const struct cp_insn *in,
		      const struct cp_insn_history *h, struct cp_issue_capacity *out)
{
	struct cp_issue_capacity e = {.stream = true};

	if (!cp_history_stream(h, &e.stride))
		return false;
	for (size_t i = 0; i < c->nr_found; i++) {
		const struct cp_issue_object *o = &c->found[i].obj;

		/* what a loop streams over: heap objects and variables, not whole mappings */
		if ((o->kind == CP_OBJ_HEAP || o->kind == CP_OBJ_GLOBAL || o->kind == CP_OBJ_TLS) &&
		    o->size > e.object_bytes)
			e.object_bytes = o->size;
	}
	if (!e.object_bytes)
		e.sampled_lines = sampled_lines(c, in);
	e.footprint = cp_stream_footprint(e.stride, e.object_bytes, e.sampled_lines,
					  c->in->l1->line_bytes);
	if (!cp_stream_level(c->in->geo, e.footprint, &e.level))
		return false;
	e.level_bytes = c->in->geo->slot[e.level].size_bytes;
	*out = e;
	return true;
}

/* Algorithm 1, second loop: one instruction that passed the filters. */
static int insn_issue(struct classify_ctx *c, const struct cp_insn *in)
{
	const struct cp_insn_history *h = cp_insn_store__history(c->in->insns, in);
	const struct cp_ip_counts *k = &in->counts;
	struct cp_issue_conflict conflict;
	struct cp_issue_capacity capacity = {0};
	enum cp_issue_type type = CP_ISSUE_CAPACITY_OR_CONFLICT;
	bool soft = c->out->soft;
	struct cp_issue *is;
	__u64 misses = insn_misses(c, in);

	c->nr_found = 0;
	if (h && h->len && conflict_of(c, in, h, &conflict)) {
		type = CP_ISSUE_CONFLICT;
	} else {
		c->nr_found = 0;
		find_insn_objects(c, in, h);
		if (h && h->len && !soft)
			type = CP_ISSUE_CAPACITY;
		else if (soft && stream_of(c, in, h, &capacity))
			type = CP_ISSUE_CAPACITY;
	}
	if (soft && type == CP_ISSUE_CAPACITY_OR_CONFLICT) {
		/* no misses to show for it, and no pattern: not an issue */
		c->out->unproven++;
		c->out->unproven_no_history += !(h && h->len);
		c->nr_found = 0;
		return 0;
	}
	is = issue_new(c, type, in->key.tgid);
	if (!is)
		return -ENOMEM;
	is->samples = k->loads + k->stores;
	is->misses = misses;
	is->score = soft ? (double)cp_insn_time_samples(in) / (double)c->out->time_samples
			 : (double)misses / (double)c->out->sampled_misses;
	is->misses_per_s = c->in->no_levels || soft
				   ? per_second(c->in, k->loads, k->stores)
				   : per_second(c->in, k->load_misses, k->store_misses);
	set_cost(is, c->in, k->lat_sum);
	if (type == CP_ISSUE_CONFLICT) {
		is->conflict = conflict;
		/* the paper: misses landing on several heap objects are the allocator's */
		if (several_heap_objects(c, 0))
			is->origin = CP_ORIGIN_ALLOCATOR;
	}
	is->capacity = capacity;
	take_found(c, is);
	add_insn(c, is, in->key.tgid, in->key.ip, is->samples, misses);
	return 0;
}

static int classify_insns(struct classify_ctx *c)
{
	const struct cp_classify_cfg *cfg = c->cfg;
	size_t count = cp_insn_store__count(c->in->insns), n;
	const struct cp_insn **list;
	int err = 0;

	if (!count)
		return 0;
	list = malloc(count * sizeof(*list));
	if (!list)
		return -ENOMEM;
	n = cp_insn_store__top(c->in->insns, list, count);
	for (size_t i = 0; i < n && !err; i++) {
		const struct cp_insn *in = list[i];
		__u64 misses = insn_misses(c, in);

		if (!misses)
			continue;
		if (explained(&c->explained, in)) {
			c->out->explained_insns++;
			continue;
		}
		if (!share_at_least(in->counts.loads + in->counts.stores, c->out->accesses,
				    cfg->min_access_ppm) ||
		    (c->out->soft ? !share_at_least(cp_insn_time_samples(in), c->out->time_samples,
						    cfg->min_miss_ppm)
				  : !share_at_least(misses, c->out->sampled_misses,
						    cfg->min_miss_ppm))) {
			c->out->suppressed++;
			continue;
		}
		err = insn_issue(c, in);
	}
	free(list);
	return err;
}

/* Merges related issues until none are left to merge (relations chain). */
static void merge_related(struct issue_list *l)
{
	bool merged = true;

	while (merged) {
		merged = false;
		for (size_t i = 0; i < l->n; i++) {
			for (size_t j = i + 1; j < l->n; j++) {
				if (!cp_issue_related(&l->v[i], &l->v[j]))
					continue;
				cp_issue_merge(&l->v[i], &l->v[j]);
				memmove(&l->v[j], &l->v[j + 1], (l->n - j - 1) * sizeof(*l->v));
				l->n--;
				j--;
				merged = true;
			}
		}
	}
}

static void app_filter(const struct cp_classify_input *in, const struct cp_classify_cfg *cfg,
		       struct cp_classification *out)
{
	out->accesses = in->loads + in->stores;
	out->soft = in->soft;
	if (in->soft)
		out->time_samples = in->time_samples ? in->time_samples : out->accesses;
	out->sampled_misses =
		in->no_levels || in->soft ? out->accesses : in->load_misses + in->store_misses;
	out->forwarded_misses = cp_miss_store__total(in->misses);
	if (in->loads)
		out->load_miss_ratio = (double)in->load_misses / (double)in->loads;
	if (in->stores)
		out->store_miss_ratio = (double)in->store_misses / (double)in->stores;
	out->app_filter_applies = !in->no_levels && !in->soft && out->accesses;
	out->app_filter_passed =
		!out->app_filter_applies ||
		share_at_least(in->load_misses, in->loads, cfg->app_load_miss_ppm) ||
		share_at_least(in->store_misses, in->stores, cfg->app_store_miss_ppm);
}

int cp_classify(const struct cp_classify_input *in, const struct cp_classify_cfg *cfg,
		struct cp_classification *out)
{
	struct classify_ctx c = {.in = in, .cfg = cfg, .out = out};
	unsigned int top;
	int err;

	memset(out, 0, sizeof(*out));
	if (!in || !cfg || !in->l1 || !in->insns || !in->misses || !in->l1->line_bytes ||
	    !in->l1->sets || in->l1->line_bytes > CP_LINE_MAX_BYTES)
		return -EINVAL;
	app_filter(in, cfg, out);
	err = classify_lines(&c);
	if (!err)
		err = classify_insns(&c);
	free(c.explained.v);
	if (err) {
		free(c.issues.v);
		return err;
	}
	merge_related(&c.issues);
	cp_issue_rank(c.issues.v, c.issues.n);
	/* below the application thresholds every issue is minor (paper §3.5, filter 1) */
	if (!out->app_filter_passed) {
		out->suppressed += c.issues.n;
		c.issues.n = 0;
	}
	top = cfg->top ? cfg->top : CP_ISSUES_TOP_DEFAULT;
	if (c.issues.n > top) {
		out->beyond_top = c.issues.n - top;
		c.issues.n = top;
	}
	for (size_t i = 0; i < c.issues.n; i++)
		cp_issue_hint(&c.issues.v[i], in->l1);
	out->issues = c.issues.v;
	out->nr_issues = c.issues.n;
	if (!out->nr_issues) {
		free(c.issues.v);
		out->issues = NULL;
	}
	return 0;
}

void cp_classification_free(struct cp_classification *c)
{
	if (!c)
		return;
	free(c->issues);
	c->issues = NULL;
	c->nr_issues = 0;
}
