// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A profile's HTML report: the figures' data from the stores (see profile_html.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify/issue.h"
#include "machine/source.h"
#include "report/html_report.h"
#include "report/profile_html.h"
#include "util/out_file.h"
#include "util/path.h"

struct html_ctx {
	struct cp_profile *p;
	const struct cp_report *r;
	const struct cp_classification *c;
	const struct cp_miss_store *misses;
	bool soft, no_levels;
	struct cp_html_issue *issue;
	struct cp_flame **flames;
	double *shares; /* nr_issues x nr_intervals */
	double *end_s;
	__u32 nr_intervals;
	__u64 *l1, *l2;
	__u32 nr_l1, nr_l2;
	struct cp_svg_history *hists;
	__u32 *hist_lines;
};

/* Whether (@tgid, @ip) is one of @is's instructions: its own, its line's, or of its lines. */
static bool issue_has(struct html_ctx *x, const struct cp_issue *is, __u32 tgid, __u64 ip)
{
	struct cp_symbol_info info;
	__u32 pids[CP_ISSUE_MAX_PIDS];
	size_t nr_pids = cp_issue_pids(is, pids), k = 0;
	bool asked = false;

	/* sharing between processes: the instructions of each */
	while (k < nr_pids && pids[k] != tgid)
		k++;
	if (k == nr_pids)
		return false;
	for (__u32 i = 0; i < is->nr_insns; i++)
		if (is->insns[i].ip == ip && is->insns[i].tgid == tgid)
			return true;
	if (is->type == CP_ISSUE_FALSE_SHARING || is->type == CP_ISSUE_TRUE_SHARING) {
		/* the line's space: the issue's process, or a shared file */
		const struct cp_line *l = cp_miss_store__find(
			x->misses, is->sharing.line_space ? is->sharing.line_space : is->tgid,
			is->sharing.line_addr);

		for (__u32 i = 0; l && i < CP_LINE_MAX_IPS; i++)
			if (l->ips[i].misses && l->ips[i].ip == ip &&
			    cp_line_ip_tgid(l, i) == tgid && cp_issue_line_insn(is, l->ips[i].mask))
				return true;
	}
	/* a source line of several instructions names one: the others by their line */
	for (__u32 i = 0; i < is->nr_insns; i++) {
		const struct cp_issue_insn *in = &is->insns[i];

		if (in->nr_ips < 2 || !in->have_loc || !in->loc.line || in->tgid != tgid)
			continue;
		if (!asked && cp_symbolizer__resolve(x->p->sym, (pid_t)tgid, ip, &info))
			return false;
		asked = true;
		if (cp_src_loc_at(&in->loc, info.file, info.line))
			return true;
	}
	return false;
}

/* A frame's name: "function" for a call, "function (file.c:12)" for the sampled instruction. */
static int frame_name(void *ctx, __u32 tgid, __u64 pc, bool leaf, char *buf, size_t sz)
{
	struct cp_profile *p = ctx;
	struct cp_symbol_info info;

	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, pc, &info) || !info.function)
		return -1;
	if (leaf && info.file && info.line)
		snprintf(buf, sz, "%s (%s:%u)", info.function, cp_base_name(info.file), info.line);
	else
		snprintf(buf, sz, "%s", info.function);
	return 0;
}

/* What a stack or an interval weighs for the report's impact: time, misses or samples. */
static __u64 stack_value(const struct html_ctx *x, const struct cp_stack_counts *c)
{
	if (x->soft)
		return c->ticks ? c->ticks : c->samples;
	return x->no_levels ? c->samples : c->misses;
}

static int on_stack(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
		    const struct cp_stack_counts *c)
{
	struct html_ctx *x = ctx;
	__u64 v = stack_value(x, c);

	if (!nr || !v)
		return 0;
	for (size_t i = 0; i < x->c->nr_issues; i++)
		if (x->flames[i] && issue_has(x, &x->c->issues[i], tgid, pcs[0]))
			cp_flame__add_stack(x->flames[i], tgid, pcs, nr, v, frame_name, x->p);
	return 0;
}

static void flames(struct html_ctx *x)
{
	for (size_t i = 0; i < x->c->nr_issues; i++) {
		x->flames[i] = cp_flame__new();
		x->issue[i].flame = x->flames[i];
	}
	cp_profile__for_each_sample_stack(x->p, on_stack, x);
}

/* Each issue's share of each interval, by the weight the timeline ranked with. */
static void timeline(struct html_ctx *x)
{
	const struct cp_timeline *t = x->p->timeline;
	__u64 start = x->p->info.start_ns, last = start;

	for (__u32 k = 0; k < x->nr_intervals; k++) {
		const struct cp_tl_interval *iv = cp_timeline__get(t, k);
		__u64 total = cp_tl_weight(t, &iv->total);

		last = iv->end_ns > last ? iv->end_ns : last;
		x->end_s[k] = (double)(last - start) / 1e9;
		for (size_t i = 0; i < x->c->nr_issues; i++) {
			__u64 sum = 0;

			for (__u32 e = 0; e < iv->nr; e++)
				if (issue_has(x, &x->c->issues[i], iv->top[e].key.tgid,
					      iv->top[e].key.ip))
					sum += cp_tl_weight(t, &iv->top[e]);
			x->shares[i * x->nr_intervals + k] =
				total ? (double)sum / (double)total : -1;
		}
	}
	for (size_t i = 0; i < x->c->nr_issues; i++)
		x->issue[i].share = &x->shares[i * x->nr_intervals];
}

/* Misses per L1 set, and per L2 set from the lines the store holds. */
static int sets(struct html_ctx *x)
{
	const struct cp_cache_level *l2 = x->r->geo ? &x->r->geo->slot[CP_CACHE_L2] : NULL;
	struct cp_miss_store_stats st;
	const struct cp_line **lines;
	size_t n;

	x->nr_l1 = cp_miss_store__nr_sets(x->misses);
	x->l1 = calloc(x->nr_l1 ? x->nr_l1 : 1, sizeof(*x->l1));
	if (!x->l1)
		return -ENOMEM;
	for (__u32 s = 0; s < x->nr_l1; s++)
		x->l1[s] = cp_miss_store__set_misses(x->misses, s);
	if (!l2 || !l2->valid || !l2->sets || !l2->line_bytes)
		return 0;
	cp_miss_store__stats(x->misses, &st);
	lines = calloc(st.lines ? st.lines : 1, sizeof(*lines));
	x->l2 = calloc(l2->sets, sizeof(*x->l2));
	if (!lines || !x->l2) {
		free(lines);
		return -ENOMEM;
	}
	x->nr_l2 = l2->sets;
	n = cp_miss_store__top(x->misses, lines, st.lines);
	for (size_t i = 0; i < n; i++)
		x->l2[lines[i]->line * x->p->l1.line_bytes / l2->line_bytes % l2->sets] +=
			lines[i]->misses;
	free(lines);
	return 0;
}

/* A conflict issue's access history: of its first instruction that has one. */
static void histories(struct html_ctx *x, const struct cp_insn_store *insns)
{
	for (size_t i = 0; i < x->c->nr_issues; i++) {
		const struct cp_issue *is = &x->c->issues[i];

		if (is->type != CP_ISSUE_CONFLICT)
			continue;
		for (__u32 k = 0; k < is->nr_insns; k++) {
			struct cp_ip_key key = {.tgid = is->tgid, .ip = is->insns[k].ip};
			const struct cp_insn *in = cp_insn_store__find(insns, &key);
			const struct cp_insn_history *h =
				in ? cp_insn_store__history(insns, in) : NULL;
			__u64 addrs[CP_INSN_HISTORY];

			if (!h || !h->len)
				continue;
			/* oldest first: once full, the oldest is the one next overwritten */
			for (__u32 a = 0; a < h->len; a++)
				addrs[a] = h->addrs[(h->len == CP_INSN_HISTORY ? h->next + a : a) %
						    CP_INSN_HISTORY];
			x->hists[i].nr_sets = x->nr_l1;
			x->hists[i].lines = &x->hist_lines[i * x->nr_l1];
			cp_svg_history_of(addrs, h->len, x->p->l1.line_bytes, &x->hists[i]);
			x->issue[i].hist = &x->hists[i];
			break;
		}
	}
}

static int write_page(void *ctx, FILE *f)
{
	return cp_html_report_write(ctx, f);
}

static void html_ctx_free(struct html_ctx *x)
{
	for (size_t i = 0; x->flames && i < x->c->nr_issues; i++)
		cp_flame__free(x->flames[i]);
	free(x->flames);
	free(x->issue);
	free(x->shares);
	free(x->end_s);
	free(x->l1);
	free(x->l2);
	free(x->hists);
	free(x->hist_lines);
}

int cp_profile__html(struct cp_profile *p, const struct cp_report *r,
		     const struct cp_insn_store *insns, const struct cp_miss_store *misses,
		     const char *path, char *err, size_t err_sz)
{
	static const struct cp_classification none;
	struct html_ctx x = {
		.p = p,
		.r = r,
		.c = r->issues ? r->issues : &none,
		.misses = misses,
		.soft = cp_source_of(p->info.source)->by_time,
		.no_levels = cp_stats_levels_unknown(&r->bpf),
		.nr_intervals = cp_timeline__count(p->timeline),
	};
	size_t n = x.c->nr_issues ? x.c->nr_issues : 1;
	struct cp_html_input in;
	int ret = -ENOMEM;

	x.issue = calloc(n, sizeof(*x.issue));
	x.flames = calloc(n, sizeof(*x.flames));
	x.shares = calloc(n * (x.nr_intervals ? x.nr_intervals : 1), sizeof(*x.shares));
	x.end_s = calloc(x.nr_intervals ? x.nr_intervals : 1, sizeof(*x.end_s));
	x.hists = calloc(n, sizeof(*x.hists));
	if (!x.issue || !x.flames || !x.shares || !x.end_s || !x.hists || sets(&x))
		goto out;
	x.hist_lines = calloc(n * (x.nr_l1 ? x.nr_l1 : 1), sizeof(*x.hist_lines));
	if (!x.hist_lines)
		goto out;
	timeline(&x);
	histories(&x, insns);
	flames(&x);
	in = (struct cp_html_input){
		.r = r,
		.l1_sets = x.l1,
		.nr_l1_sets = x.nr_l1,
		.l2_sets = x.l2,
		.nr_l2_sets = x.nr_l2,
		.nr_intervals = x.nr_intervals,
		.end_s = x.end_s,
		.issue = x.issue,
		.leaf_only = !p->stacks || !cp_stack_store__held(p->stacks),
	};
	ret = cp_out_file_write(path, CP_OUT_PRIVATE, write_page, &in, err, err_sz);
out:
	if (ret == -ENOMEM)
		snprintf(err, err_sz, "%s: out of memory", path);
	html_ctx_free(&x);
	return ret;
}
