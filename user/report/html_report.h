/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HTML report (--html FILE, docs/html.md): one self-contained page, no
 * network (a Content-Security-Policy of default-src 'none' says so to the
 * browser too), inline SVG and CSS only. The header says what the text
 * report's does (source and why, the soft-mode note, duration, targets,
 * the overhead budget, drops); each issue has its text, then its pictures:
 * the line byte map (sharing), the L1 and L2 set heatmaps and the access
 * history (conflict), the footprint against the caches (capacity), its
 * impact per interval and the flame graph of its samples. The text report
 * in full closes it. Pure: struct in, HTML out; the same input gives the
 * same bytes (no time of writing, ordering stable).
 */
#ifndef CP_HTML_REPORT_H
#define CP_HTML_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "report/html_flame.h"
#include "report/html_svg.h"
#include "report/report.h"

/* What an issue's figures need beyond the issue. */
struct cp_html_issue {
	const double *share;		   /* per interval (cp_html_input's); NULL: no timeline */
	const struct cp_flame *flame;	   /* its samples' stacks; NULL: none */
	const struct cp_svg_history *hist; /* conflict: its access history; NULL: none */
};

struct cp_html_input {
	const struct cp_report *r; /* r->issues, r->geo, and the header's facts */
	const __u64 *l1_sets;	   /* forwarded misses per L1 set; NULL: none */
	__u32 nr_l1_sets;
	const __u64 *l2_sets; /* ... per L2 set, from the lines the miss store holds */
	__u32 nr_l2_sets;
	__u32 nr_intervals;
	const double *end_s;		   /* each interval's end, seconds into the run */
	const struct cp_html_issue *issue; /* r->issues->nr_issues of them; NULL: none */
	/* the flame graphs have each sample's instruction only (no call stacks yet) */
	bool leaf_only;
};

/* Writes the page to @f; 0, or -EIO when a write failed. */
int cp_html_report_write(const struct cp_html_input *in, FILE *f);

#endif /* CP_HTML_REPORT_H */
