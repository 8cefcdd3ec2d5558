// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The HTML report: the page around the figures (see html_report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "machine/source.h"
#include "report/html_out.h"
#include "report/html_report.h"
#include "report/report_agent.h"
#include "report/report_issues.h"

/*
 * Okabe and Ito's palette (blue, orange, bluish green, reddish purple,
 * vermillion), told apart under the common colour blindnesses; the heatmap
 * is one hue whose lightness carries the value. On paper, writes keep their
 * hatching and the padding its dashes.
 */
static const char css[] =
	"body{font:14px/1.4 sans-serif;color:#222;margin:1.5em auto;max-width:1100px;"
	"padding:0 1em}\n"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-top:1px solid #bbb;padding-top:.6em}\n"
	"dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\n"
	"dl.facts dt{font-weight:bold}dl.facts dd{margin:0}\n"
	"pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap}\n"
	"figure{margin:1em 0;break-inside:avoid}figcaption{font-size:.9em;color:#444}\n"
	"svg text{font:10px sans-serif;fill:#222}svg .end{text-anchor:end}\n"
	".row{fill:#f4f4f4;stroke:#bbb;stroke-width:.5}\n"
	".rd{fill:#0072b2}.wr{fill:url(#cp-hatch)}.swatch{display:inline-block;width:1.6em;"
	"height:.9em;vertical-align:middle;border:1px solid #555}\n"
	".obj{fill:#009e73}.objedge{stroke:#000;stroke-width:2}\n"
	".pad line{stroke:#cc79a7;stroke-width:2;stroke-dasharray:4 3}.pad text{fill:#a0457d}\n"
	".grid{fill:#deebf7}.set.hot{stroke:#d55e00;stroke-width:2}"
	".callout{stroke:#d55e00;stroke-width:1}\n"
	".hbar{fill:#56b4e9}.hbar.hot{fill:#d55e00}.ways{stroke:#000;stroke-dasharray:3 2}\n"
	".level{fill:#999}.foot{fill:#d55e00}.tl{fill:#0072b2}.axis{stroke:#555}\n"
	".flame rect{stroke:#fff;stroke-width:.5}.flame .leaf rect{stroke:#d55e00;stroke-width:1}\n"
	".flame text{font-size:11px}\n"
	"@media print{body{max-width:none}details>pre{display:block}a{color:inherit}}\n";

/* The hatch of written bytes, defined once for every figure. */
static void defs(FILE *f)
{
	fputs("<svg width=\"0\" height=\"0\" aria-hidden=\"true\" style=\"position:absolute\">"
	      "<defs><pattern id=\"cp-hatch\" patternUnits=\"userSpaceOnUse\" width=\"4\" "
	      "height=\"4\"><rect width=\"4\" height=\"4\" fill=\"#e69f00\"/><path d=\"M0,4 L4,0\" "
	      "stroke=\"#000\" stroke-width=\"0.7\"/></pattern></defs></svg>\n",
	      f);
}

/* What @print wrote, escaped in a <pre>; nothing when it wrote nothing. */
static void pre_of(FILE *f, const char *cls, void (*print)(const void *arg, FILE *f),
		   const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	print(arg, m);
	fclose(m);
	if (len) {
		fprintf(f, "<pre class=\"%s\">", cls);
		/* a section begins with a blank line in the text report */
		cp_html_esc_lines(f, buf[0] == '\n' ? buf + 1 : buf);
		fputs("</pre>\n", f);
	}
	free(buf);
}

static void print_budget(const void *r, FILE *f)
{
	cp_report_budget_print(&((const struct cp_report *)r)->budget, f);
}

static void print_drops(const void *r, FILE *f)
{
	cp_report_drops_print(r, f);
}

static void print_limits(const void *r, FILE *f)
{
	cp_report_limits_print(&((const struct cp_report *)r)->limits, f);
}

static void print_text(const void *r, FILE *f)
{
	cp_report_print(r, f);
}

static bool soft_of(const struct cp_report *r)
{
	return cp_source_named(r->source)->by_time;
}

static void header(const struct cp_report *r, FILE *f)
{
	fputs("<header><h1>cacheperf-bpf report</h1>\n<dl class=\"facts\">\n<dt>Source</dt><dd>",
	      f);
	cp_html_esc(f, r->source_reason ? r->source_reason : r->source);
	fputs("</dd>\n", f);
	if (soft_of(r))
		fprintf(f, "<dt>Note</dt><dd class=\"note\">%s</dd>\n", CP_SOFT_NOTE);
	fprintf(f, "<dt>Duration</dt><dd>%.1f s (", r->duration_s);
	cp_html_esc(f, r->end_reason);
	fputs(")</dd>\n<dt>Targets</dt><dd>", f);
	if (!r->nr_targets)
		fputs("every process (-a)", f);
	for (int i = 0; i < r->nr_targets; i++)
		cp_html_escf(f, "%s%d (%s)", i ? ", " : "", (int)r->targets[i].pid,
			     r->targets[i].comm[0] ? r->targets[i].comm : "?");
	if (r->bpf.followed)
		fprintf(f, "; and %llu processes they started",
			(unsigned long long)r->bpf.followed);
	if (r->execs || r->exits)
		fprintf(f, "; %llu exec'd, %llu exited", (unsigned long long)r->execs,
			(unsigned long long)r->exits);
	fputs("</dd>\n", f);
	if (r->agent.known) {
		char line[320];

		cp_report_agent_format(&r->agent, line, sizeof(line));
		fputs("<dt>Profiler</dt><dd>", f);
		cp_html_esc(f, line);
		fputs("</dd>\n", f);
	}
	for (int s = 0; r->geo && s < CP_CACHE_NR_SLOTS; s++) {
		char line[160];

		cp_geometry_format(r->geo, (enum cp_cache_slot)s, line, sizeof(line));
		fprintf(f, "<dt>%s</dt><dd>", s ? "" : "Caches");
		cp_html_esc(f, line);
		fputs("</dd>\n", f);
	}
	fputs("</dl>\n", f);
	pre_of(f, "budget", print_budget, r);
	pre_of(f, "drops", print_drops, r);
	pre_of(f, "limits", print_limits, r);
	fputs("</header>\n", f);
}

static void issue_nav(const struct cp_classification *c, FILE *f)
{
	fprintf(f, "<nav><h2>Issues (%zu)</h2>\n", c->nr_issues);
	if (c->soft)
		fprintf(f, "<p class=\"note\">source: soft, %s</p>\n", CP_SOFT_NOTE);
	if (!c->nr_issues)
		fputs("<p>None: the text report below says why.</p>\n", f);
	else
		fputs("<ol>\n", f);
	for (size_t i = 0; i < c->nr_issues; i++) {
		const struct cp_issue *is = &c->issues[i];

		fprintf(f, "<li><a href=\"#issue-%zu\">%s's %s</a>: %.1f %%</li>\n", i + 1,
			is->origin == CP_ORIGIN_ALLOCATOR ? "Allocator" : "Application",
			cp_issue_type_text(is->type), 100.0 * is->score);
	}
	if (c->nr_issues)
		fputs("</ol>\n", f);
	fputs("</nav>\n", f);
}

static void figure_open(FILE *f, const char *caption_id)
{
	fprintf(f, "<figure aria-describedby=\"%s\">\n", caption_id);
}

static void figure_close(FILE *f, const char *caption_id, const char *caption)
{
	fprintf(f, "<figcaption id=\"%s\">%s</figcaption>\n</figure>\n", caption_id, caption);
}

static void sharing_figure(const struct cp_issue *is, size_t n, bool soft, FILE *f)
{
	char id[32], cap[40];

	snprintf(id, sizeof(id), "i%zu-lm", n);
	snprintf(cap, sizeof(cap), "i%zu-lm-c", n);
	figure_open(f, cap);
	cp_svg_line_map(f, id, is, soft);
	figure_close(
		f, cap,
		"The line byte map: one row per thread, the bytes it read "
		"(<span class=\"swatch\" style=\"background:#0072b2\"></span> upper half) and "
		"wrote (<svg width=\"20\" height=\"10\" aria-hidden=\"true\"><rect width=\"20\" "
		"height=\"10\" class=\"wr\"/></svg> lower half, hatched); +N: the offset in the "
		"object; green: the object's part of the line; dashed: where the hint's "
		"padding goes.");
}

static void conflict_figures(const struct cp_html_input *in, const struct cp_issue *is,
			     const struct cp_html_issue *x, size_t n, FILE *f)
{
	bool soft = soft_of(in->r);
	char id[32], cap[40];

	if (in->l1_sets && in->nr_l1_sets) {
		snprintf(id, sizeof(id), "i%zu-l1", n);
		snprintf(cap, sizeof(cap), "i%zu-l1-c", n);
		figure_open(f, cap);
		cp_svg_set_heatmap(f, id, "L1D", in->l1_sets, in->nr_l1_sets, is->conflict.set,
				   soft);
		figure_close(f, cap,
			     "L1D sets of the whole run: darker for more; outlined: the hottest "
			     "sets and the one this issue's access history crowds.");
	}
	if (in->l2_sets && in->nr_l2_sets) {
		snprintf(id, sizeof(id), "i%zu-l2", n);
		snprintf(cap, sizeof(cap), "i%zu-l2-c", n);
		figure_open(f, cap);
		cp_svg_set_heatmap(f, id, "L2", in->l2_sets, in->nr_l2_sets, -1, soft);
		figure_close(f, cap, "L2 sets, from the lines the miss store tracks.");
	}
	if (x && x->hist) {
		snprintf(id, sizeof(id), "i%zu-hist", n);
		snprintf(cap, sizeof(cap), "i%zu-hist-c", n);
		figure_open(f, cap);
		cp_svg_history(f, id, x->hist, is->conflict.ways, is->conflict.set);
		figure_close(f, cap,
			     "The breakpoints' access history of its instruction: distinct lines "
			     "on each L1 set against the set's ways (dashed).");
	}
}

static void capacity_figure(const struct cp_html_input *in, const struct cp_issue *is, size_t n,
			    FILE *f)
{
	const struct cp_issue_capacity *c = &is->capacity;
	__u64 foot = 0;
	const char *what = NULL;
	char id[32], cap[40];

	if (c->stream) {
		foot = c->footprint;
		what = c->object_bytes ? "one pass over the object" : "distinct lines sampled";
	} else if (is->nr_objects && is->objects[0].size) {
		/* no stream evidence: the object is what one pass could touch at most */
		foot = is->objects[0].size *
		       (is->objects[0].nr_objects ? is->objects[0].nr_objects : 1);
		what = "the size of its objects, no access history";
	}
	snprintf(id, sizeof(id), "i%zu-fp", n);
	snprintf(cap, sizeof(cap), "i%zu-fp-c", n);
	figure_open(f, cap);
	cp_svg_footprint(f, id, foot, what, in->r->geo);
	figure_close(f, cap, "The footprint against each cache level's size (log scale).");
}

static void issue_section(const struct cp_html_input *in, size_t i, FILE *f)
{
	const struct cp_issue *is = &in->r->issues->issues[i];
	const struct cp_html_issue *x = in->issue ? &in->issue[i] : NULL;
	bool soft = soft_of(in->r);
	char *buf = NULL, id[32], cap[40];
	size_t len = 0, n = i + 1;
	FILE *m;

	fprintf(f,
		"<section class=\"issue\" id=\"issue-%zu\" data-type=\"%s\" data-origin=\"%s\">\n",
		n, cp_issue_type_name(is->type), cp_issue_origin_name(is->origin));
	fprintf(f, "<h2>#%zu %s's %s</h2>\n", n,
		is->origin == CP_ORIGIN_ALLOCATOR ? "Allocator" : "Application",
		cp_issue_type_text(is->type));
	m = open_memstream(&buf, &len);
	if (m) {
		cp_report_issue_print(n, is, soft, NULL, m);
		fclose(m);
		fputs("<pre class=\"issue-text\">", f);
		cp_html_esc_lines(f, len && buf[0] == '\n' ? buf + 1 : buf);
		fputs("</pre>\n", f);
		free(buf);
	}
	switch (is->type) {
	case CP_ISSUE_FALSE_SHARING:
	case CP_ISSUE_TRUE_SHARING:
		if (is->sharing.nr_threads)
			sharing_figure(is, n, soft, f);
		break;
	case CP_ISSUE_CONFLICT:
		conflict_figures(in, is, x, n, f);
		break;
	default:
		capacity_figure(in, is, n, f);
		break;
	}
	if (x && x->share && in->nr_intervals) {
		snprintf(id, sizeof(id), "i%zu-tl", n);
		snprintf(cap, sizeof(cap), "i%zu-tl-c", n);
		figure_open(f, cap);
		cp_svg_timeline(f, id, x->share, in->end_s, in->nr_intervals, soft);
		figure_close(f, cap,
			     soft ? "Its share of each interval's time samples."
				  : "Its share of each interval's sampled misses.");
	}
	if (x && x->flame && cp_flame__total(x->flame)) {
		snprintf(id, sizeof(id), "i%zu-fg", n);
		snprintf(cap, sizeof(cap), "i%zu-fg-c", n);
		figure_open(f, cap);
		cp_flame_svg(f, id, x->flame, soft ? "samples" : "misses");
		figure_close(
			f, cap,
			in->leaf_only
				? "Flame graph of its samples: each instruction's function and "
				  "line (no call stacks were counted: a recording made before "
				  "them)."
				: "Flame graph of its samples with their callers.");
	}
	fputs("</section>\n", f);
}

int cp_html_report_write(const struct cp_html_input *in, FILE *f)
{
	const struct cp_report *r = in->r;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
	      f);
	fprintf(f,
		"<title>cacheperf-bpf report: %zu issue%s</title>\n<style>\n%s</style>\n"
		"</head>\n<body>\n",
		r->issues ? r->issues->nr_issues : 0,
		r->issues && r->issues->nr_issues == 1 ? "" : "s", css);
	defs(f);
	header(r, f);
	if (r->issues) {
		issue_nav(r->issues, f);
		for (size_t i = 0; i < r->issues->nr_issues; i++)
			issue_section(in, i, f);
	}
	fputs("<details><summary>The text report</summary>\n", f);
	pre_of(f, "text-report", print_text, r);
	fputs("</details>\n</body>\n</html>\n", f);
	return ferror(f) ? -EIO : 0;
}
