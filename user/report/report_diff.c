// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The diff of two runs' issues, text and JSON (see report_diff.h and docs/diff.md). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "machine/source.h"
#include "report/report_diff.h"
#include "report/report_json.h"
#include "util/printable.h"

#define NOTE_LEN  384
#define MAX_NOTES 6

static const char *const run_names[CP_DIFF_RUNS] = {"before", "after"};

/* What a source's impact is a share of: runs compare only within one class. */
static int impact_class(const char *source)
{
	return source ? (int)cp_source_named(source)->impact : -1;
}

static const char *measure(const char *source)
{
	return cp_source_named(source)->impact_text;
}

int cp_diff_comparable(const struct cp_diff *d, char *err, size_t err_sz)
{
	const struct cp_diff_run *b = &d->run[CP_DIFF_BEFORE], *a = &d->run[CP_DIFF_AFTER];

	if (impact_class(b->source) == impact_class(a->source))
		return 0;
	snprintf(err, err_sz,
		 "%s was recorded with --source %s (impact: %s), %s with --source %s (%s): the "
		 "impacts measure different things; record both runs with the same --source",
		 b->path, b->source ? b->source : "?", measure(b->source), a->path,
		 a->source ? a->source : "?", measure(a->source));
	return -EINVAL;
}

/* "48K:12:64": a cache level as --cache spells it. */
static void cache_text(const struct cp_cache_level *l, char *buf, size_t sz)
{
	unsigned long long s = (unsigned long long)l->size_bytes;

	if (s && !(s & ((1ull << 20) - 1)))
		snprintf(buf, sz, "%lluM:%u:%u", s >> 20, l->ways, l->line_bytes);
	else if (s && !(s & 1023))
		snprintf(buf, sz, "%lluK:%u:%u", s >> 10, l->ways, l->line_bytes);
	else
		snprintf(buf, sz, "%llu:%u:%u", s, l->ways, l->line_bytes);
}

/* "L1D=48K:12:64,L2=2M:16:64,LLC=32M:16:64" */
static void geometry_text(const struct cp_geometry *g, char *buf, size_t sz)
{
	static const char *const names[CP_CACHE_NR_SLOTS] = {"L1D", "L2", "LLC"};
	size_t n = 0;

	buf[0] = '\0';
	for (int s = 0; s < CP_CACHE_NR_SLOTS && n < sz; s++) {
		char one[64];

		cache_text(&g->slot[s], one, sizeof(one));
		n += (size_t)snprintf(buf + n, sz - n, "%s%s=%s", s ? "," : "", names[s], one);
	}
}

static bool geometry_differs(const struct cp_diff *d)
{
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
		const struct cp_cache_level *b = &d->run[CP_DIFF_BEFORE].geo.slot[s];
		const struct cp_cache_level *a = &d->run[CP_DIFF_AFTER].geo.slot[s];

		if (b->size_bytes != a->size_bytes || b->ways != a->ways ||
		    b->line_bytes != a->line_bytes)
			return true;
	}
	return false;
}

static bool sources_differ(const struct cp_diff *d)
{
	const char *b = d->run[CP_DIFF_BEFORE].source, *a = d->run[CP_DIFF_AFTER].source;

	return !b || !a || strcmp(b, a) != 0;
}

/* What the reader must know before trusting the comparison; returns how many. */
static size_t diff_warnings(const struct cp_diff *d, char (*w)[NOTE_LEN])
{
	size_t n = 0;
	char gb[128], ga[128];

	if (sources_differ(d))
		snprintf(w[n++], NOTE_LEN,
			 "before was sampled with %s, after with %s: both impacts are shares "
			 "of sampled misses, but the two PMUs count different events",
			 d->run[CP_DIFF_BEFORE].source, d->run[CP_DIFF_AFTER].source);
	if (geometry_differs(d)) {
		geometry_text(&d->run[CP_DIFF_BEFORE].geo, gb, sizeof(gb));
		geometry_text(&d->run[CP_DIFF_AFTER].geo, ga, sizeof(ga));
		snprintf(w[n++], NOTE_LEN,
			 "the machines' caches differ: before %s, after %s; a change may "
			 "be the machine's, not the program's",
			 gb, ga);
	}
	for (int i = 0; i < CP_DIFF_RUNS; i++) {
		const struct cp_classification *c = &d->run[i].issues;

		if (c->app_filter_applies && !c->app_filter_passed)
			snprintf(w[n++], NOTE_LEN,
				 "%s reports no issue at all: its miss ratios are below the "
				 "application filter (--app-load-miss, --app-store-miss)",
				 run_names[i]);
		if (c->beyond_top)
			snprintf(w[n++], NOTE_LEN,
				 "%s has %zu more serious issues than were compared", run_names[i],
				 c->beyond_top);
	}
	return n;
}

/* The change of @p's impact, after minus before (0..1 shares); 0 unless in both. */
static double change_of(const struct cp_diff *d, const struct cp_issue_pair *p)
{
	if (p->before < 0 || p->after < 0)
		return 0;
	return d->run[CP_DIFF_AFTER].issues.issues[p->after].score -
	       d->run[CP_DIFF_BEFORE].issues.issues[p->before].score;
}

/* "better", "worse" or "unchanged": whether the change reaches unchanged_ppm. */
static const char *verdict(const struct cp_diff *d, double change)
{
	if (fabs(change) * 1e6 < (double)d->unchanged_ppm)
		return "unchanged";
	return change < 0 ? "better" : "worse";
}

void cp_diff_count(const struct cp_diff *d, struct cp_diff_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < d->nr_pairs; i++) {
		const struct cp_issue_pair *p = &d->pairs[i];
		const char *v;

		if (p->kind == CP_MATCH_GONE) {
			c->gone++;
			continue;
		}
		if (p->kind == CP_MATCH_NEW) {
			c->added++;
			continue;
		}
		c->both++;
		c->moved += p->kind == CP_MATCH_MOVED;
		c->type_changed += p->kind == CP_MATCH_TYPE_CHANGED;
		v = verdict(d, change_of(d, p));
		if (!strcmp(v, "better"))
			c->better++;
		else if (!strcmp(v, "worse"))
			c->worse++;
		else
			c->unchanged++;
	}
}

/* ---- text ---- */

/* The columns of one issue as printed: the target's strings made printable. */
struct row {
	char type[64];
	char where[CP_ISSUE_WHERE_LEN + CP_LOC_FUNCTION_LEN + 4];
	char object[CP_ISSUE_OBJECT_LEN];
};

struct widths {
	int type, where, object;
};

/* "application's false sharing", "allocator's conflict" */
static void type_text(enum cp_issue_type t, enum cp_issue_origin o, char *buf, size_t sz)
{
	const char *name = cp_issue_type_name(t);
	size_t n = (size_t)snprintf(buf, sz, "%s's ", cp_issue_origin_name(o));

	for (size_t i = 0; name[i] && n + 1 < sz; i++)
		buf[n++] = name[i] == '_' ? ' ' : name[i];
	buf[n < sz ? n : sz - 1] = '\0';
}

static void make_row(const struct cp_issue *is, struct row *r)
{
	struct cp_issue_key k;
	char where[sizeof(k.where)], fn[sizeof(k.function)];

	cp_issue_key_of(is, &k);
	type_text(k.type, k.origin, r->type, sizeof(r->type));
	cp_printable(k.where, where, sizeof(where));
	cp_printable(k.function, fn, sizeof(fn));
	/* a line: its function too, as the report's "work.c: 94 (worker)" */
	if (fn[0] && strcmp(fn, where) != 0)
		snprintf(r->where, sizeof(r->where), "%s (%s)", where, fn);
	else
		snprintf(r->where, sizeof(r->where), "%s", where[0] ? where : "?");
	cp_printable(k.object[0] ? k.object : "-", r->object, sizeof(r->object));
}

static void widen(struct widths *w, const struct row *r)
{
	int t = (int)strlen(r->type), l = (int)strlen(r->where), o = (int)strlen(r->object);

	w->type = t > w->type ? t : w->type;
	w->where = l > w->where ? l : w->where;
	w->object = o > w->object ? o : w->object;
}

static const struct cp_issue *issue_of(const struct cp_diff *d, int run, int idx)
{
	return idx < 0 ? NULL : &d->run[run].issues.issues[idx];
}

/* The row of @p as shown: AFTER's issue when there is one, else BEFORE's. */
static void pair_row(const struct cp_diff *d, const struct cp_issue_pair *p, struct row *r)
{
	const struct cp_issue *a = issue_of(d, CP_DIFF_AFTER, p->after);

	make_row(a ? a : issue_of(d, CP_DIFF_BEFORE, p->before), r);
}

static void print_cols(const struct widths *w, const struct row *r, FILE *f)
{
	fprintf(f, "  %-*s  %-*s  %-*s", w->type, r->type, w->where, r->where, w->object,
		r->object);
}

static bool soft_of(const struct cp_diff *d)
{
	return d->run[CP_DIFF_BEFORE].issues.soft;
}

/* "2658 samples", "1200 misses, ~1.2e+06 misses/s": an issue's counts behind its share. */
static void print_counts(const struct cp_diff *d, const struct cp_issue *b,
			 const struct cp_issue *a, FILE *f)
{
	const char *unit = soft_of(d) ? "samples" : "misses";

	if (b && a)
		fprintf(f, "  (%llu \u2192 %llu %s", (unsigned long long)b->misses,
			(unsigned long long)a->misses, unit);
	else
		fprintf(f, " (%llu %s", (unsigned long long)(b ? b : a)->misses, unit);
	/* estimated rates: the period over the run's length; soft has none */
	if (!soft_of(d) && b && a && b->misses_per_s > 0 && a->misses_per_s > 0)
		fprintf(f, ", ~%.3g \u2192 ~%.3g misses/s", b->misses_per_s, a->misses_per_s);
	else if (!soft_of(d) && !(b && a) && (b ? b : a)->misses_per_s > 0)
		fprintf(f, ", ~%.3g misses/s", (b ? b : a)->misses_per_s);
	fprintf(f, ")\n");
}

/* How a loose pair was made, under its row: never a silent mismatch. */
static void print_how(const struct cp_diff *d, const struct cp_issue_pair *p, FILE *f)
{
	struct row rb;

	if (p->kind == CP_MATCH_SAME)
		return;
	make_row(issue_of(d, CP_DIFF_BEFORE, p->before), &rb);
	if (p->kind == CP_MATCH_MOVED)
		fprintf(f, "      moved: before at %s, %s\n", rb.where, rb.object);
	else
		fprintf(f, "      type changed: before %s\n", rb.type);
}

static void print_both(const struct cp_diff *d, const struct widths *w, size_t nr, FILE *f)
{
	static const struct row head = {"type", "location", "object"};

	fprintf(f, "\nIn both runs (%zu)\n", nr);
	if (!nr) {
		fprintf(f, "  none\n");
		return;
	}
	print_cols(w, &head, f);
	fprintf(f, "  %7s \u2192 %7s  %8s\n", "before", "after", "change");
	for (size_t i = 0; i < d->nr_pairs; i++) {
		const struct cp_issue_pair *p = &d->pairs[i];
		const struct cp_issue *b = issue_of(d, CP_DIFF_BEFORE, p->before);
		const struct cp_issue *a = issue_of(d, CP_DIFF_AFTER, p->after);
		double change = change_of(d, p);
		struct row r;

		if (!a || !b)
			continue;
		pair_row(d, p, &r);
		print_cols(w, &r, f);
		/* -0.0 for a fall too small to show */
		fprintf(f, "  %5.1f %% \u2192 %5.1f %%  %+5.1f pp %s", 100.0 * b->score,
			100.0 * a->score, 100.0 * change + 0.0, verdict(d, change));
		print_counts(d, b, a, f);
		print_how(d, p, f);
	}
}

/* The gone or the new: BEFORE's or AFTER's issues with no pair. */
static void print_single(const struct cp_diff *d, const struct widths *w,
			 enum cp_issue_match_kind kind, size_t nr, FILE *f)
{
	bool gone = kind == CP_MATCH_GONE;

	if (gone)
		fprintf(f,
			"\nGone (%zu): reported before, not after (fixed, or now below the "
			"filters)\n",
			nr);
	else
		fprintf(f, "\nNew (%zu): reported after, not before\n", nr);
	if (!nr)
		fprintf(f, "  none\n");
	for (size_t i = 0; i < d->nr_pairs; i++) {
		const struct cp_issue_pair *p = &d->pairs[i];
		const struct cp_issue *is;
		struct row r;

		if (p->kind != kind)
			continue;
		is = gone ? issue_of(d, CP_DIFF_BEFORE, p->before)
			  : issue_of(d, CP_DIFF_AFTER, p->after);
		make_row(is, &r);
		print_cols(w, &r, f);
		fprintf(f, "  %s %.1f %%", gone ? "was" : "now", 100.0 * is->score);
		print_counts(d, gone ? is : NULL, gone ? NULL : is, f);
	}
}

static void print_run(const struct cp_diff_run *run, const char *name, FILE *f)
{
	const struct cp_classification *c = &run->issues;
	char path[512];

	fprintf(f, "  %-9s %s\n", name, cp_printable(run->path, path, sizeof(path)));
	fprintf(f, "            %s, %.1f s, %llu %s, %zu issue%s\n", run->source, run->duration_s,
		(unsigned long long)(c->soft ? c->time_samples : c->sampled_misses),
		c->soft ? "time samples" : "sampled misses", c->nr_issues,
		c->nr_issues == 1 ? "" : "s");
}

void cp_diff_print(const struct cp_diff *d, FILE *f)
{
	char w[MAX_NOTES][NOTE_LEN];
	struct cp_diff_counts c;
	struct widths wd = {4, 8, 6};
	size_t nw = diff_warnings(d, w);

	cp_diff_count(d, &c);
	for (size_t i = 0; i < d->nr_pairs; i++) {
		struct row r;

		pair_row(d, &d->pairs[i], &r);
		widen(&wd, &r);
	}
	fprintf(f, "cacheperf-bpf diff\n");
	print_run(&d->run[CP_DIFF_BEFORE], "before:", f);
	print_run(&d->run[CP_DIFF_AFTER], "after:", f);
	fprintf(f, "  impact:   %s; a change under %.2f pp counts as none\n",
		measure(d->run[CP_DIFF_BEFORE].source), d->unchanged_ppm / 1e4);
	if (soft_of(d))
		fprintf(f, "  note:     %s\n", CP_SOFT_NOTE);
	for (size_t i = 0; i < nw; i++)
		fprintf(f, "  warning:  %s\n", w[i]);
	print_both(d, &wd, c.both, f);
	print_single(d, &wd, CP_MATCH_GONE, c.gone, f);
	print_single(d, &wd, CP_MATCH_NEW, c.added, f);
	fprintf(f,
		"\nSummary: %zu gone, %zu new, %zu in both (%zu better, %zu worse, %zu "
		"unchanged",
		c.gone, c.added, c.both, c.better, c.worse, c.unchanged);
	if (c.moved || c.type_changed)
		fprintf(f, "; %zu moved, %zu of another type", c.moved, c.type_changed);
	fprintf(f, ")\n");
}

/* ---- JSON ---- */

static void put_issue(struct cp_json *j, const char *key, const struct cp_issue *is, int rank)
{
	const struct cp_issue_insn *in = &is->insns[0];
	bool loc = is->nr_insns && in->have_loc;
	struct cp_issue_key k;

	cp_issue_key_of(is, &k);
	cp_json_object(j, key);
	cp_json_u64(j, "rank", (__u64)rank + 1);
	cp_json_str(j, "type", cp_issue_type_name(is->type));
	cp_json_str(j, "origin", cp_issue_origin_name(is->origin));
	cp_json_u64(j, "pid", is->tgid);
	cp_json_str(j, "location", k.where[0] ? k.where : NULL);
	cp_json_str(j, "function", loc && in->loc.function[0] ? in->loc.function : NULL);
	cp_json_str(j, "file", loc && in->loc.file[0] ? in->loc.file : NULL);
	if (loc && in->loc.line)
		cp_json_u64(j, "line", in->loc.line);
	else
		cp_json_null(j, "line");
	cp_json_str(j, "object", k.object[0] ? k.object : NULL);
	cp_json_str(j, "object_kind",
		    is->nr_objects ? cp_object_kind_name(is->objects[0].kind) : NULL);
	cp_json_double(j, "score", is->score, 4);
	cp_json_u64(j, "samples", is->samples);
	cp_json_u64(j, "misses", is->misses);
	cp_json_double(j, "misses_per_s", is->misses_per_s, 0);
	cp_json_end(j);
}

static void put_run(struct cp_json *j, const struct cp_diff_run *run, const char *key)
{
	const struct cp_classification *c = &run->issues;

	cp_json_object(j, key);
	cp_json_str(j, "file", run->path);
	cp_json_str(j, "source", run->source);
	cp_json_double(j, "duration_s", run->duration_s, 3);
	cp_json_u64(j, "shares_of", c->soft ? c->time_samples : c->sampled_misses);
	cp_json_u64(j, "issues", c->nr_issues);
	cp_json_u64(j, "suppressed", c->suppressed);
	cp_report_geometry_json(j, &run->geo);
	cp_json_end(j);
}

/* "both": the pairs, each with its match, change and both issues. */
static void put_both(struct cp_json *j, const struct cp_diff *d)
{
	cp_json_array(j, "both");
	for (size_t i = 0; i < d->nr_pairs; i++) {
		const struct cp_issue_pair *p = &d->pairs[i];

		if (p->before < 0 || p->after < 0)
			continue;
		cp_json_object(j, NULL);
		cp_json_str(j, "match", cp_issue_match_name(p->kind));
		cp_json_double(j, "change", change_of(d, p), 4);
		cp_json_str(j, "verdict", verdict(d, change_of(d, p)));
		put_issue(j, "before", issue_of(d, CP_DIFF_BEFORE, p->before), p->before);
		put_issue(j, "after", issue_of(d, CP_DIFF_AFTER, p->after), p->after);
		cp_json_end(j);
	}
	cp_json_end(j);
}

/* "gone" (BEFORE's issues) or "new" (AFTER's). */
static void put_single(struct cp_json *j, const struct cp_diff *d, enum cp_issue_match_kind kind)
{
	bool gone = kind == CP_MATCH_GONE;

	cp_json_array(j, cp_issue_match_name(kind));
	for (size_t i = 0; i < d->nr_pairs; i++) {
		const struct cp_issue_pair *p = &d->pairs[i];
		int idx = gone ? p->before : p->after;

		if (p->kind == kind)
			put_issue(j, NULL, issue_of(d, gone ? CP_DIFF_BEFORE : CP_DIFF_AFTER, idx),
				  idx);
	}
	cp_json_end(j);
}

int cp_diff_json(const struct cp_diff *d, FILE *f)
{
	char w[MAX_NOTES][NOTE_LEN];
	size_t nw = diff_warnings(d, w);
	struct cp_diff_counts c;
	struct cp_json j;

	cp_diff_count(d, &c);
	cp_json_init(&j, f);
	cp_json_object(&j, NULL);
	cp_json_u64(&j, "version", CP_DIFF_JSON_VERSION);
	cp_json_str(&j, "impact", soft_of(d) ? "time_share" : "miss_share");
	cp_json_str(&j, "note", soft_of(d) ? CP_SOFT_NOTE : NULL);
	cp_json_double(&j, "unchanged_below", d->unchanged_ppm / 1e6, 4);
	put_run(&j, &d->run[CP_DIFF_BEFORE], "before");
	put_run(&j, &d->run[CP_DIFF_AFTER], "after");
	cp_json_bool(&j, "sources_differ", sources_differ(d));
	cp_json_bool(&j, "geometry_differs", geometry_differs(d));
	cp_json_array(&j, "warnings");
	for (size_t i = 0; i < nw; i++)
		cp_json_str(&j, NULL, w[i]);
	cp_json_end(&j);
	put_both(&j, d);
	put_single(&j, d, CP_MATCH_GONE);
	put_single(&j, d, CP_MATCH_NEW);
	cp_json_object(&j, "summary");
	cp_json_u64(&j, "both", c.both);
	cp_json_u64(&j, "better", c.better);
	cp_json_u64(&j, "worse", c.worse);
	cp_json_u64(&j, "unchanged", c.unchanged);
	cp_json_u64(&j, "moved", c.moved);
	cp_json_u64(&j, "type_changed", c.type_changed);
	cp_json_u64(&j, "gone", c.gone);
	cp_json_u64(&j, "new", c.added);
	cp_json_end(&j);
	cp_json_end(&j);
	if (cp_json_finish(&j))
		return -1;
	return fflush(f) ? -1 : 0;
}
