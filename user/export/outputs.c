// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The table of every output (see outputs.h). */
#include <errno.h>
#include <string.h>

#include "export/export.h"
#include "export/outputs.h"
#include "report/prom_file.h"
#include "report/profile_html.h"
#include "report/report_emit.h"
#include "util/log.h"

#define AT(m) (1u << (m))

struct cp_out_row {
	const char *opt; /* its option; NULL: not a file (the status line) */
	size_t path;	 /* where struct cp_report_opts holds its path */
	/* NULL: cp_out_file_try(), skipping "-" (stdout) */
	int (*check)(const char *path, char *err, size_t err_sz);
	unsigned int moments; /* AT(CP_OUT_*) */
	bool summary_at_end;  /* made from the last window's summary at the end too */
	int (*write)(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
		     char *err, size_t err_sz);
};

#define PATH(field) offsetof(struct cp_report_opts, field)

static int write_text(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
		      char *err, size_t err_sz)
{
	(void)o;
	return cp_out_file_write(path, CP_OUT_PRIVATE, cp_report_text_out, (void *)f->r, err,
				 err_sz);
}

static int write_json(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
		      char *err, size_t err_sz)
{
	(void)o;
	return cp_out_file_write(path, CP_OUT_PRIVATE, cp_report_json_out, (void *)f->r, err,
				 err_sz);
}

static int write_html(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
		      char *err, size_t err_sz)
{
	(void)o;
	return cp_profile__html(f->p, f->r, f->r->insns, f->misses, path, err, err_sz);
}

static int write_prom(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
		      char *err, size_t err_sz)
{
	(void)path;
	return cp_summary_out_prom(&o->sum, f->sum, err, err_sz);
}

static int write_pprof(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
		       char *err, size_t err_sz)
{
	return cp_export_pprof_file(f->p, f->all, path, o->live, err, err_sz);
}

static int write_folded(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
			char *err, size_t err_sz)
{
	(void)o;
	return cp_export_folded_file(f->p, f->all, path, err, err_sz);
}

static int write_pprof_dir(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
			   char *err, size_t err_sz)
{
	(void)path;
	return cp_pprof_dir_interval(&o->pdir, f->p, f->all, err, err_sz);
}

static int write_status(struct cp_outputs *o, const struct cp_out_facts *f, const char *path,
			char *err, size_t err_sz)
{
	(void)path;
	(void)err;
	(void)err_sz;
	cp_summary_out_status(&o->sum, f->sum);
	return 0;
}

/* In the order they are written at a moment. */
static const struct cp_out_row rows[CP_OUT_ROWS] = {
	{"-o", PATH(output), NULL, AT(CP_OUT_END) | AT(CP_OUT_USR1), false, write_text},
	{"--json", PATH(json), NULL, AT(CP_OUT_END) | AT(CP_OUT_USR1), false, write_json},
	{"--html", PATH(html), NULL, AT(CP_OUT_END) | AT(CP_OUT_INTERVAL) | AT(CP_OUT_USR1), false,
	 write_html},
	/* gauges of the last window, also at the end: the scraper reads the same series */
	{"--prom-file", PATH(prom), cp_prom_file_check,
	 AT(CP_OUT_END) | AT(CP_OUT_INTERVAL) | AT(CP_OUT_HUP), true, write_prom},
	{"--pprof", PATH(pprof), NULL, AT(CP_OUT_END), false, write_pprof},
	{"--folded", PATH(folded), NULL, AT(CP_OUT_END), false, write_folded},
	{"--pprof-dir", PATH(pprof_dir), cp_pprof_dir_check, AT(CP_OUT_INTERVAL), false,
	 write_pprof_dir},
	{"--record", PATH(record), NULL, 0, false, NULL},
	{NULL, 0, NULL, AT(CP_OUT_INTERVAL), false, write_status},
};

/* Row @i's path in @ro (NULL: not asked, or the status line). */
static const char *opt_path(const struct cp_report_opts *ro, size_t i)
{
	const char *path;

	if (!rows[i].opt)
		return NULL;
	if (rows[i].path == PATH(output))
		return cp_emit_text_path(ro->output, ro->json);
	memcpy(&path, (const char *)ro + rows[i].path, sizeof(path));
	return path;
}

/* Row @i's path in @o: NULL when it is not written; the status line is on with its stream. */
static const char *row_path(const struct cp_outputs *o, size_t i)
{
	if (!rows[i].opt)
		return o->sum.status ? "stderr" : NULL;
	return opt_path(o->ro, i);
}

/* Whether row @i's output at moment @at is made from a summary. */
static bool from_summary(size_t i, enum cp_out_moment at)
{
	return at != CP_OUT_END || rows[i].summary_at_end;
}

void cp_outputs_init(struct cp_outputs *o, const struct cp_report_opts *ro,
		     const struct cp_geometry *geo, const char *pmu, bool live, FILE *status)
{
	memset(o, 0, sizeof(*o));
	o->ro = ro;
	o->geo = geo;
	o->live = live;
	cp_summary_out_init(&o->sum, ro, geo, pmu, live, live ? status : NULL);
	o->pdir = (struct cp_pprof_dir){.dir = ro->pprof_dir, .keep = ro->pprof_keep};
}

int cp_outputs_check(const struct cp_report_opts *ro, char *err, size_t err_sz)
{
	char why[512];
	int ret;

	for (size_t i = 0; i < CP_OUT_ROWS; i++) {
		const char *path = opt_path(ro, i);

		if (!path)
			continue;
		if (rows[i].check) {
			ret = rows[i].check(path, err, err_sz);
			if (ret)
				return ret;
			continue;
		}
		if (!strcmp(path, "-"))
			continue;
		ret = cp_out_file_try(path, why, sizeof(why));
		if (ret) {
			snprintf(err, err_sz, "%s: %s", rows[i].opt, why);
			return ret;
		}
	}
	return 0;
}

/*
 * One output's result into the moment's: the first failure's message stays
 * in @err, a later one is logged. A live interval's is said once when the
 * output starts failing, and when it is written again.
 */
static int account(struct cp_outputs *o, enum cp_out_moment at, size_t i, int ret, int first,
		   const char *msg, const char *path, char *err, size_t err_sz)
{
	/* SIGHUP rewrites what the intervals write: one failing state between them */
	if (at == CP_OUT_INTERVAL || at == CP_OUT_HUP) {
		if (ret && !o->failing[i])
			cp_warn("%s", msg);
		else if (!ret && o->failing[i])
			cp_notice("%s %s written again", rows[i].opt, path);
		o->failing[i] = ret != 0;
		return first;
	}
	if (!ret)
		return first;
	if (first) {
		cp_err("%s", msg);
		return first;
	}
	snprintf(err, err_sz, "%s", msg);
	return ret;
}

/* @s cut to --top issues as the report shows them, into @r with @shown. */
static void summary_report(const struct cp_outputs *o, const struct cp_summary *s,
			   struct cp_report *r, struct cp_classification *shown)
{
	const struct cp_classify_cfg *cfg = o->ro->classify;
	unsigned int top = cfg->top ? cfg->top : CP_ISSUES_TOP_DEFAULT;

	*shown = s->issues;
	if (shown->nr_issues > top) {
		shown->beyond_top += shown->nr_issues - top;
		shown->nr_issues = top;
	}
	*r = s->report;
	r->issues = shown;
	r->top = cfg->top;
	r->classify_cfg = cfg;
}

/* A summary and what its facts point into; cp_summary_free() its s. */
struct summary_now {
	struct cp_classify_cfg cfg;
	struct cp_summary s;
	struct cp_report r;
	struct cp_classification shown;
	struct cp_out_facts f;
};

/* The summary now, its facts in @n->f; 0 or < 0 with @err. */
static int summarize(struct cp_outputs *o, struct cp_profile *p, struct summary_now *n, char *err,
		     size_t err_sz)
{
	int ret;

	/* every serious issue: the Prometheus file sums those past --prom-top, labels name all */
	n->cfg = *o->ro->classify;
	n->cfg.top = CP_SUMMARY_ALL_ISSUES;
	ret = cp_profile__summary(p, o->geo, &n->cfg, &n->s);
	if (ret) {
		snprintf(err, err_sz, "cannot summarize: %s", strerror(-ret));
		return ret;
	}
	summary_report(o, &n->s, &n->r, &n->shown);
	n->f = (struct cp_out_facts){
		.p = p,
		.r = &n->r,
		.sum = &n->s,
		.all = &n->s.issues,
		.misses = n->s.win.misses ? n->s.win.misses : p->misses,
	};
	return 0;
}

/* Writes the rows of moment @at made (or not) from a summary, with @f. */
static int write_rows(struct cp_outputs *o, enum cp_out_moment at, bool summary,
		      const struct cp_out_facts *f, int first, char *err, size_t err_sz)
{
	for (size_t i = 0; i < CP_OUT_ROWS; i++) {
		char msg[512] = "";
		const char *path = row_path(o, i);
		int ret;

		if (!(rows[i].moments & AT(at)) || !path || from_summary(i, at) != summary)
			continue;
		ret = rows[i].write(o, f, path, msg, sizeof(msg));
		if (ret && !msg[0])
			snprintf(msg, sizeof(msg), "%s %s: %s", rows[i].opt, path, strerror(-ret));
		first = account(o, at, i, ret, first, msg, path, err, err_sz);
	}
	return first;
}

/* Whether a row of moment @at is made from a summary. */
static bool wants_summary(const struct cp_outputs *o, enum cp_out_moment at)
{
	for (size_t i = 0; i < CP_OUT_ROWS; i++)
		if ((rows[i].moments & AT(at)) && row_path(o, i) && from_summary(i, at))
			return true;
	return false;
}

/* The whole run's report, judged once, to every output of the end. */
static int write_end(struct cp_outputs *o, struct cp_profile *p, int first, char *err,
		     size_t err_sz)
{
	struct cp_classification issues;
	struct cp_geometry recorded;
	struct cp_report r;
	struct cp_out_facts f;
	int ret;

	ret = cp_profile__judge(p, o->geo, o->ro->classify, &r, &recorded, &issues);
	r.callers.top = o->ro->callers;
	if (ret)
		cp_err("cannot classify the misses: %s", strerror(-ret));
	f = (struct cp_out_facts){.p = p, .r = &r, .all = r.issues, .misses = p->misses};
	first = write_rows(o, CP_OUT_END, false, &f, first, err, err_sz);
	cp_classification_free(&issues);
	return first;
}

int cp_outputs_write(struct cp_outputs *o, enum cp_out_moment at, struct cp_profile *p, char *err,
		     size_t err_sz)
{
	struct summary_now n;
	int ret = 0;

	if (wants_summary(o, at)) {
		ret = summarize(o, p, &n, err, err_sz);
		if (ret && at == CP_OUT_INTERVAL)
			cp_warn("no summary this interval: %s", err);
		if (!ret) {
			ret = write_rows(o, at, true, &n.f, 0, err, err_sz);
			cp_summary_free(&n.s);
		}
	}
	if (at == CP_OUT_END)
		ret = write_end(o, p, ret, err, err_sz);
	return ret;
}

void cp_outputs_free(struct cp_outputs *o)
{
	cp_pprof_dir_free(&o->pdir);
}
