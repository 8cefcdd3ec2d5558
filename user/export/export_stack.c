// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolized, labelled stacks for the exporters (see export_stack.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_stack.h"
#include "report/prom_metrics.h"
#include "symbols/build_id.h"

#define CP_EXPORT_ARENA (128u << 10) /* bytes of strings one stack keeps */

/* An instruction of an issue, found by ip or by source line. */
struct issue_insn {
	__u32 tgid;
	__u32 line;
	__u64 ip;
	const struct cp_src_loc *loc; /* NULL: the instruction has no source line */
	size_t rank;		      /* the issue's place: the first issue wins */
	const struct cp_issue *issue;
};

struct walk {
	struct cp_profile *p;
	cp_export_fn fn;
	void *ctx;
	struct issue_insn *by_ip, *by_line;
	size_t nr_insns;
	const struct cp_proc_summary **procs; /* by pid */
	size_t nr_procs;
	struct cp_export_stack st;
	struct cp_pprof_line lines[CP_EXPORT_MAX_FRAMES][CP_EXPORT_MAX_LINES];
	struct cp_pprof_mapping maps[CP_EXPORT_MAX_FRAMES];
	size_t used;
	char arena[CP_EXPORT_ARENA];
};

static int profile_stacks(const void *src, cp_stack_fn fn, void *ctx)
{
	const struct cp_profile *p = src;

	return cp_profile__for_each_sample_stack(p, fn, ctx);
}

static int interval_stacks(const void *src, cp_stack_fn fn, void *ctx)
{
	const struct cp_interval_stacks *is = src;

	return cp_sample_stacks(is->stacks, is->epoch, fn, ctx);
}

struct cp_stack_walk cp_stack_walk_of_profile(const struct cp_profile *p)
{
	return (struct cp_stack_walk){profile_stacks, p};
}

struct cp_stack_walk cp_stack_walk_of_interval(const struct cp_interval_stacks *is)
{
	return (struct cp_stack_walk){interval_stacks, is};
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int by_ip(const void *a, const void *b)
{
	const struct issue_insn *x = a, *y = b;

	return cmp_u64(x->tgid, y->tgid) ?: cmp_u64(x->ip, y->ip) ?: cmp_u64(x->rank, y->rank);
}

static int by_line(const void *a, const void *b)
{
	const struct issue_insn *x = a, *y = b;

	return cmp_u64(x->tgid, y->tgid) ?: cmp_u64(x->line, y->line) ?: cmp_u64(x->rank, y->rank);
}

/* Every listed instruction of @c, twice: sorted by ip and by source line. */
static int index_issues(struct walk *w, const struct cp_classification *c)
{
	size_t n = 0;

	for (size_t i = 0; c && i < c->nr_issues; i++)
		n += c->issues[i].nr_insns;
	w->by_ip = calloc(n ? n : 1, sizeof(*w->by_ip));
	w->by_line = calloc(n ? n : 1, sizeof(*w->by_line));
	if (!w->by_ip || !w->by_line)
		return -ENOMEM;
	for (size_t i = 0; c && i < c->nr_issues; i++) {
		const struct cp_issue *is = &c->issues[i];

		for (__u32 k = 0; k < is->nr_insns; k++) {
			const struct cp_issue_insn *in = &is->insns[k];

			w->by_ip[w->nr_insns++] = (struct issue_insn){
				.tgid = in->tgid,
				.line = in->have_loc ? in->loc.line : 0,
				.ip = in->ip,
				.loc = in->have_loc ? &in->loc : NULL,
				.rank = i,
				.issue = is,
			};
		}
	}
	memcpy(w->by_line, w->by_ip, w->nr_insns * sizeof(*w->by_ip));
	qsort(w->by_ip, w->nr_insns, sizeof(*w->by_ip), by_ip);
	qsort(w->by_line, w->nr_insns, sizeof(*w->by_line), by_line);
	return 0;
}

/* The first of @n entries sorted by @cmp not below @key. */
static size_t lower_bound(const struct issue_insn *v, size_t n, const struct issue_insn *key,
			  int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(&v[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The issue of the instruction at @ip whose innermost line is @l: the issue
 * listing that ip, else one listing its source line (an issue lists one ip
 * per line, the one with the most misses).
 */
static const struct cp_issue *issue_of(const struct walk *w, __u32 tgid, __u64 ip,
				       const struct cp_pprof_line *l)
{
	struct issue_insn key = {.tgid = tgid, .ip = ip};
	size_t i = lower_bound(w->by_ip, w->nr_insns, &key, by_ip);

	if (i < w->nr_insns && w->by_ip[i].tgid == tgid && w->by_ip[i].ip == ip)
		return w->by_ip[i].issue;
	if (!l || !l->line || !l->function)
		return NULL;
	key.line = (__u32)l->line;
	for (i = lower_bound(w->by_line, w->nr_insns, &key, by_line);
	     i < w->nr_insns && w->by_line[i].tgid == tgid && w->by_line[i].line == key.line; i++)
		if (w->by_line[i].loc && !strcmp(w->by_line[i].loc->function, l->function) &&
		    cp_src_loc_at(w->by_line[i].loc, l->file, key.line))
			return w->by_line[i].issue;
	return NULL;
}

static int by_pid(const void *a, const void *b)
{
	const struct cp_proc_summary *const *x = a, *const *y = b;

	return cmp_u64((__u64)(*x)->pid, (__u64)(*y)->pid) ?: cmp_u64((__u64)*x, (__u64)*y);
}

static int index_procs(struct walk *w)
{
	size_t n = cp_proc_summaries__count(w->p->procs);

	w->procs = calloc(n ? n : 1, sizeof(*w->procs));
	if (!w->procs)
		return -ENOMEM;
	w->nr_procs = cp_proc_summaries__top(w->p->procs, w->procs, n);
	qsort(w->procs, w->nr_procs, sizeof(*w->procs), by_pid);
	return 0;
}

/* The comm and container of @tgid: its summary's, else the comm it had as a target. */
static void proc_labels(struct walk *w, __u32 tgid)
{
	const struct cp_run_info *in = &w->p->info;

	w->st.comm = "";
	w->st.container = "";
	for (size_t lo = 0, hi = w->nr_procs; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cp_proc_summary *s = w->procs[mid];

		if ((__u32)s->pid == tgid) {
			/* a reused pid: the summary with the most samples (top's order) */
			while (mid && (__u32)w->procs[mid - 1]->pid == tgid)
				mid--;
			w->st.comm = w->procs[mid]->comm;
			w->st.container = w->procs[mid]->cg.container_id;
			break;
		}
		if ((__u32)s->pid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (__u32 i = 0; !w->st.comm[0] && i < in->nr_targets; i++)
		if ((__u32)in->targets[i].pid == tgid)
			w->st.comm = in->targets[i].comm;
}

/* A copy of @s for this stack; NULL for NULL, or when the stack's strings are full. */
static const char *keep(struct walk *w, const char *s)
{
	size_t len = s ? strlen(s) + 1 : 0;
	char *copy;

	if (!s || w->used + len > sizeof(w->arena))
		return NULL;
	copy = memcpy(w->arena + w->used, s, len);
	w->used += len;
	return copy;
}

/* The inline chain of @info into @f's lines: the innermost function first. */
static void keep_lines(struct walk *w, const struct cp_symbol_info *info, struct cp_pprof_frame *f,
		       struct cp_pprof_line *lines)
{
	f->lines = lines;
	if (!info->function)
		return;
	lines[f->nr_lines++] = (struct cp_pprof_line){
		.function = keep(w, info->function),
		.file = keep(w, info->file),
		.line = info->line,
	};
	/* each caller at the line of its call of the one before */
	for (__u32 i = 0; i < info->nr_inlined && f->nr_lines < CP_EXPORT_MAX_LINES; i++)
		lines[f->nr_lines++] = (struct cp_pprof_line){
			.function = keep(w, info->inlined[i].function ?: "??"),
			.file = keep(w, info->inlined[i].file),
			.line = info->inlined[i].line,
		};
}

/* @m as pprof's mapping: its strings @m's, or @hex (its build-id as text). */
static struct cp_pprof_mapping pprof_mapping(const struct cp_sym_mapping *m, char *hex,
					     size_t hex_sz)
{
	return (struct cp_pprof_mapping){
		.start = m->start,
		.limit = m->end,
		.offset = m->offset,
		.file = m->path,
		.build_id = m->build_id_len
				    ? cp_build_id_hex(m->build_id, m->build_id_len, hex, hex_sz)
				    : NULL,
	};
}

/* Frame @i: @pc of process @tgid, a return address unless it is the leaf. */
static void symbolize(struct walk *w, __u32 tgid, __u64 pc, __u32 i)
{
	struct cp_pprof_frame *f = &w->st.frames[i];
	struct cp_symbol_info info;
	struct cp_sym_mapping m;
	char hex[2 * CP_SYM_BUILD_ID_MAX + 1];

	memset(f, 0, sizeof(*f));
	f->address = pc;
	f->space = tgid;
	f->lines = w->lines[i];
	/* a return address: the call is the instruction before it */
	if (!cp_symbolizer__resolve(w->p->sym, (pid_t)tgid, i ? pc - 1 : pc, &info))
		keep_lines(w, &info, f, w->lines[i]);
	if (cp_symbolizer__mapping(w->p->sym, (pid_t)tgid, pc, &m))
		return;
	w->maps[i] = pprof_mapping(&m, hex, sizeof(hex));
	w->maps[i].file = keep(w, w->maps[i].file);
	w->maps[i].build_id = keep(w, w->maps[i].build_id);
	f->mapping = &w->maps[i];
}

int cp_export_main_mapping(struct cp_profile *p, struct cp_pprof_mapping *out, char *hex,
			   size_t hex_sz)
{
	const struct cp_proc_summary *top;
	struct cp_sym_mapping m;
	pid_t pid = p->info.nr_targets ? (pid_t)p->info.targets[0].pid : 0;
	int ret;

	/* -a: the process with the most samples */
	if (!pid && cp_proc_summaries__top(p->procs, &top, 1))
		pid = top->pid;
	if (!pid)
		return -ENOENT;
	ret = cp_symbolizer__main_mapping(p->sym, pid, &m);
	if (!ret)
		*out = pprof_mapping(&m, hex, hex_sz);
	return ret;
}

static int on_stack(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
		    const struct cp_stack_counts *c)
{
	struct walk *w = ctx;
	struct cp_export_stack *st = &w->st;

	if (!nr)
		return 0;
	w->used = 0;
	st->tgid = tgid;
	st->counts = c;
	st->nr_frames = nr < CP_EXPORT_MAX_FRAMES ? nr : CP_EXPORT_MAX_FRAMES;
	st->dropped_frames = nr - st->nr_frames;
	for (__u32 i = 0; i < st->nr_frames; i++)
		symbolize(w, tgid, pcs[i], i);
	st->issue =
		issue_of(w, tgid, pcs[0], st->frames[0].nr_lines ? &st->frames[0].lines[0] : NULL);
	st->object[0] = '\0';
	if (st->issue)
		cp_prom_object(st->issue, st->object, sizeof(st->object));
	proc_labels(w, tgid);
	return w->fn(w->ctx, st);
}

int cp_export_stacks(struct cp_profile *p, const struct cp_classification *issues,
		     struct cp_stack_walk sw, cp_export_fn fn, void *ctx)
{
	struct walk *w = calloc(1, sizeof(*w));
	int ret = -ENOMEM;

	if (!w)
		return -ENOMEM;
	w->p = p;
	w->fn = fn;
	w->ctx = ctx;
	if (!index_issues(w, issues) && !index_procs(w))
		ret = sw.each(sw.src, on_stack, w);
	free(w->by_ip);
	free(w->by_line);
	free(w->procs);
	free(w);
	return ret;
}
