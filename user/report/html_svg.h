/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The figures of the HTML report, as inline SVG (pure: numbers in, SVG
 * text out; docs/html.md says what each one shows). Every figure is an
 * <svg role="img"> with a <title> and a <desc> that says in words what
 * it draws, for screen readers and for a reader of the printed page. The
 * colours are the document's CSS classes (html_report.c): read and write
 * also differ by shape (upper and lower half of a byte's cell) and writes
 * are hatched, so neither colour blindness nor a grey printer merges them.
 * @id makes the element ids of one figure unique in the document.
 */
#ifndef CP_HTML_SVG_H
#define CP_HTML_SVG_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "classify/classify.h"
#include "machine/geometry.h"

#define CP_SVG_HOT_SETS 3 /* sets labelled by their count, besides the issue's own */

/*
 * Pure: the byte offsets of the line where the fix of a false-sharing
 * @sh puts each thread's data on a line of its own: the first byte of
 * every thread, and of the bytes the line's other issue has (a mixed
 * line's shared part: sh->other_part), but the one whose bytes come
 * first. Ascending, distinct, at most @max. Returns how many.
 */
int cp_svg_pad_offsets(const struct cp_issue_sharing *sh, __u32 *out, int max);

/*
 * The line byte map of sharing issue @is: one row per thread, each byte it
 * read (upper half) and wrote (lower half, hatched), the object's
 * boundaries and the threads' offsets in it, a global's name, and for
 * false sharing the padding of the hint where it would go.
 */
void cp_svg_line_map(FILE *f, const char *id, const struct cp_issue *is, bool soft);

/* Pure: up to @max sets of @counts with the most, most first (ties: lower set); > 0 only. */
int cp_svg_hot_sets(const __u64 *counts, __u32 nr_sets, __u32 *out, int max);

/*
 * The heatmap of @nr_sets sets of cache @level ("L1D", "L2"): a cell per
 * set, darker for more; the CP_SVG_HOT_SETS hottest and @mark (the issue's
 * set; -1: none) outlined and labelled with their share.
 */
void cp_svg_set_heatmap(FILE *f, const char *id, const char *level, const __u64 *counts,
			__u32 nr_sets, long mark, bool soft);

/* What an access history says about L1 sets (breakpoints, CP_INSN_HISTORY addresses). */
struct cp_svg_history {
	__u32 len;	    /* addresses */
	__s64 stride;	    /* the commonest step between consecutive addresses; 0: none */
	__u32 stride_count; /* steps of that size */
	__u32 top_set;	    /* the set with the most distinct lines */
	__u32 nr_sets;
	__u32 *lines; /* distinct lines per set, @nr_sets (the caller's) */
};

/*
 * Pure: @h from @n addresses on a cache of @line_bytes lines and
 * h->nr_sets sets (h->lines zeroed and filled).
 */
void cp_svg_history_of(const __u64 *addrs, __u32 n, __u32 line_bytes, struct cp_svg_history *h);

/* Lines per set of @h as bars, the @ways of the set drawn across; @set the issue's. */
void cp_svg_history(FILE *f, const char *id, const struct cp_svg_history *h, __u32 ways, long set);

/*
 * The footprint of a capacity issue (@footprint bytes, @what it is: "one
 * pass over the object") against each cache level of @geo, on a log scale.
 * @footprint 0: unknown, the levels only.
 */
void cp_svg_footprint(FILE *f, const char *id, __u64 footprint, const char *what,
		      const struct cp_geometry *geo);

/*
 * The issue's impact in each of @n intervals: @share[i] (0..1) of the
 * interval ending @end_s[i] seconds into the run; a negative share: no
 * counts in that interval.
 */
void cp_svg_timeline(FILE *f, const char *id, const double *share, const double *end_s, __u32 n,
		     bool soft);

#endif /* CP_HTML_SVG_H */
