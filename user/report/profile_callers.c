// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An issue line's callers from the stack store (see profile_callers.h). */
#include <stdlib.h>
#include <string.h>

#include "machine/source.h"
#include "report/profile_callers.h"
#include "report/profile_report.h"

/* A stack of the line's process near its instruction, as the store holds it. */
struct hit {
	const __u64 *pcs;
	__u32 nr;
	struct cp_stack_counts c;
};

struct gather {
	__u32 tgid;
	__u64 lo, hi; /* first frames in [lo, hi] */
	struct hit *v;
	size_t n, cap;
	bool oom;
};

static int gather_one(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
		      const struct cp_stack_counts *c)
{
	struct gather *g = ctx;
	struct hit *v;

	if (tgid != g->tgid || pcs[0] < g->lo || pcs[0] > g->hi)
		return 0;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;

		v = realloc(g->v, cap * sizeof(*v));
		if (!v) {
			g->oom = true;
			return 1;
		}
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = (struct hit){.pcs = pcs, .nr = nr, .c = *c};
	return 0;
}

/* Orders by the callers' frames (those after the first), shorter first on a common prefix. */
static int cmp_callers(const struct hit *x, const struct hit *y)
{
	for (__u32 i = 1; i < x->nr && i < y->nr; i++)
		if (x->pcs[i] != y->pcs[i])
			return x->pcs[i] < y->pcs[i] ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static int cmp_first(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->pcs[0] != y->pcs[0])
		return x->pcs[0] < y->pcs[0] ? -1 : 1;
	return 0;
}

static int cmp_hits_by_callers(const void *a, const void *b)
{
	return cmp_callers(a, b);
}

/* True when instruction @ip of @in's process is on @in's line. */
static bool on_line(struct cp_profile *p, const struct cp_issue_insn *in, __u64 ip)
{
	struct cp_symbol_info info;

	if (ip == in->ip)
		return true;
	if (!in->have_loc || !in->loc.line ||
	    cp_symbolizer__resolve(p->sym, (pid_t)in->tgid, ip, &info))
		return false;
	return cp_src_loc_at(&in->loc, info.file, info.line);
}

/* Keeps the hits on @in's line (in place); how many. */
static size_t keep_line(struct cp_profile *p, const struct cp_issue_insn *in, struct hit *v,
			size_t n)
{
	size_t kept = 0;
	bool yes = false;

	qsort(v, n, sizeof(*v), cmp_first);
	for (size_t i = 0; i < n; i++) {
		/* one lookup per distinct instruction */
		if (i == 0 || v[i].pcs[0] != v[i - 1].pcs[0])
			yes = on_line(p, in, v[i].pcs[0]);
		if (yes)
			v[kept++] = v[i];
	}
	return kept;
}

enum unit { U_TICKS, U_MISSES, U_SAMPLES, U_BP_HITS };

static __u64 weigh(const struct cp_stack_counts *c, enum unit u)
{
	return u == U_TICKS	? c->ticks
	       : u == U_MISSES	? c->misses
	       : u == U_SAMPLES ? c->samples
				: c->bp_hits;
}

static enum unit unit_of(const struct cp_profile *p, const struct hit *v, size_t n)
{
	struct cp_stack_counts sum = {0};

	for (size_t i = 0; i < n; i++) {
		sum.ticks += v[i].c.ticks;
		sum.misses += v[i].c.misses;
		sum.samples += v[i].c.samples;
	}
	if (cp_source_of(p->info.source)->by_time && sum.ticks)
		return U_TICKS;
	return sum.misses ? U_MISSES : sum.samples ? U_SAMPLES : U_BP_HITS;
}

static const char *const unit_names[] = {"ticks", "misses", "samples", "breakpoint hits"};

/* A merged path: the first of its hits (its frames) and what it weighs. */
struct path {
	const struct hit *h;
	__u64 count;
};

static int cmp_paths(const void *a, const void *b)
{
	const struct path *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_callers(x->h, y->h);
}

/* Merges the hits (sorted by callers) into @paths by equal callers; how many weigh anything. */
static size_t merge_paths(const struct hit *v, size_t n, enum unit u, struct path *paths,
			  __u64 *total)
{
	size_t np = 0;

	*total = 0;
	for (size_t i = 0; i < n; i++) {
		__u64 w = weigh(&v[i].c, u);

		*total += w;
		if (np && !cmp_callers(paths[np - 1].h, &v[i]))
			paths[np - 1].count += w;
		else
			paths[np++] = (struct path){.h = &v[i], .count = w};
	}
	for (size_t i = 0; i < np;) {
		if (!paths[i].count)
			paths[i] = paths[--np];
		else
			i++;
	}
	qsort(paths, np, sizeof(*paths), cmp_paths);
	return np;
}

static void fill_path(struct cp_profile *p, __u32 tgid, const struct path *in,
		      struct cp_caller_path *out)
{
	memset(out, 0, sizeof(*out));
	out->count = in->count;
	for (__u32 i = 1; i < in->h->nr && !out->more; i++)
		cp_profile_return_frames(p, tgid, in->h->pcs[i], out->frames, CP_CALLER_MAX_FRAMES,
					 &out->nr_frames, &out->more);
}

int cp_profile_insn_callers(void *ctx, const struct cp_issue_insn *in, unsigned int max,
			    struct cp_insn_callers *out)
{
	struct cp_profile *p = ctx;
	struct gather g = {
		.tgid = in->tgid,
		.lo = in->ip > CP_CALLERS_NEAR_BYTES ? in->ip - CP_CALLERS_NEAR_BYTES : 0,
		.hi = in->ip + CP_CALLERS_NEAR_BYTES,
	};
	struct path *paths = NULL;
	size_t n, np;
	enum unit u;
	int ret = -1;

	out->nr = out->nr_paths = 0;
	out->total = 0;
	out->unit = NULL;
	cp_profile__for_each_stack(p, gather_one, &g);
	n = g.oom ? 0 : keep_line(p, in, g.v, g.n);
	if (!n)
		goto out;
	u = unit_of(p, g.v, n);
	qsort(g.v, n, sizeof(*g.v), cmp_hits_by_callers);
	paths = malloc(n * sizeof(*paths));
	if (!paths)
		goto out;
	np = merge_paths(g.v, n, u, paths, &out->total);
	out->unit = unit_names[u];
	out->nr_paths = (__u32)np;
	for (size_t i = 0; i < np && i < max; i++)
		fill_path(p, in->tgid, &paths[i], &out->paths[out->nr++]);
	ret = np ? 0 : -1;
out:
	free(paths);
	free(g.v);
	return ret;
}
