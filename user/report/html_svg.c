// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The HTML report's figures as inline SVG (see html_svg.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "classify/issue.h"
#include "report/html_out.h"
#include "report/html_svg.h"

#define LM_LABEL_W 112 /* the line map's thread names */
#define LM_CELL_W  10
#define LM_ROW_H   28 /* a row: its offset labels, then the byte cells */
#define LM_CELL_H  16
#define LM_TOP	   34

/* <svg role="img"> with its <title> and the opening of its <desc>; the caller ends desc. */
static void svg_open(FILE *f, const char *id, const char *cls, int w, int h, const char *title)
{
	fprintf(f,
		"<svg class=\"%s\" id=\"%s\" role=\"img\" aria-labelledby=\"%s-t %s-d\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n<title id=\"%s-t\">",
		cls, id, id, id, w, h, w, h, id);
	cp_html_esc(f, title);
	fprintf(f, "</title>\n<desc id=\"%s-d\">", id);
}

int cp_svg_pad_offsets(const struct cp_issue_sharing *sh, __u32 *out, int max)
{
	/* each thread's bytes, then the bytes of the line's other issue (a mixed line) */
	int threads =
		sh->nr_threads < CP_LINE_MAX_THREADS ? (int)sh->nr_threads : CP_LINE_MAX_THREADS;
	int n = 0, lowest = -1, last, groups = threads + 1;
	__u32 first[CP_LINE_MAX_THREADS + 1];

	for (int i = 0; i < groups; i++) {
		__u64 bytes =
			i < threads ? sh->thr[i].read_mask | sh->thr[i].write_mask : sh->other_part;
		int b = cp_byte_run(bytes, 0, &last);

		first[i] = b < 0 ? CP_LINE_MAX_BYTES : (__u32)b;
		if (b >= 0 && (lowest < 0 || first[i] < first[lowest]))
			lowest = i;
	}
	for (__u32 b = 1; b < CP_LINE_MAX_BYTES && n < max; b++)
		for (int i = 0; i < groups; i++)
			if (i != lowest && first[i] == b) {
				out[n++] = b;
				break;
			}
	return n;
}

/* The object's boundaries in line offsets, when the line holds one of its bytes. */
static bool object_span(const struct cp_issue_sharing *sh, __s64 *first, __s64 *end)
{
	/* a shared file starts at its offset 0: the size says whether one is known */
	if (!sh->object_size)
		return false;
	*first = (__s64)(sh->object_start - sh->line_addr);
	*end = *first + (__s64)sh->object_size;
	return *end > 0 && *first < (__s64)sh->line_bytes;
}

/* "thread 11: wrote 0-7, read 0-7 (4096 samples); ..." */
static void line_map_desc(FILE *f, const struct cp_issue *is, bool soft)
{
	const struct cp_issue_sharing *sh = &is->sharing;
	__u32 pids[CP_ISSUE_MAX_PIDS];
	bool procs = cp_issue_pids(is, pids) > 1;
	char w[160], r[160];
	__s64 first, end;

	cp_html_escf(f,
		     cp_space_is_file(sh->line_space)
			     ? "Bytes 0 to %u of the line at file offset 0x%llx (%s): "
			     : "Bytes 0 to %u of line 0x%llx (%s): ",
		     sh->line_bytes - 1, (unsigned long long)sh->line_addr,
		     is->type == CP_ISSUE_FALSE_SHARING ? "false sharing" : "true sharing");
	for (__u32 i = 0; i < sh->nr_threads && i < CP_LINE_MAX_THREADS; i++) {
		cp_byte_ranges(sh->thr[i].write_mask, 0, w, sizeof(w));
		cp_byte_ranges(sh->thr[i].read_mask, 0, r, sizeof(r));
		cp_html_escf(f, "thread %u", sh->thr[i].tid);
		if (procs)
			cp_html_escf(f, " of process %u", sh->thr[i].pid);
		cp_html_escf(f, " wrote %s, read %s (%u %s); ", w, r, sh->thr[i].accesses,
			     soft ? "samples" : "misses");
	}
	if (object_span(sh, &first, &end))
		cp_html_escf(f, "the object (%llu bytes) spans line bytes %lld to %lld. ",
			     (unsigned long long)sh->object_size,
			     (long long)(first < 0 ? 0 : first),
			     (long long)(end > sh->line_bytes ? sh->line_bytes : end) - 1);
}

static void line_map_row(FILE *f, const struct cp_issue_thread *t, __u32 line_bytes, int y,
			 bool have_obj, __s64 obj_first)
{
	int b, e;

	fprintf(f, "<g class=\"thread\" data-tid=\"%u\">\n", t->tid);
	fprintf(f, "<text class=\"lbl\" x=\"4\" y=\"%d\">thread %u</text>\n", y + 12, t->tid);
	fprintf(f, "<rect class=\"row\" x=\"%d\" y=\"%d\" width=\"%u\" height=\"%d\"/>\n",
		LM_LABEL_W, y, line_bytes * LM_CELL_W, LM_CELL_H);
	for (__u32 i = 0; i < line_bytes; i++) {
		int x = LM_LABEL_W + (int)i * LM_CELL_W;

		if (t->read_mask >> i & 1)
			fprintf(f,
				"<rect class=\"cell rd\" data-byte=\"%u\" x=\"%d\" y=\"%d\" "
				"width=\"%d\" height=\"%d\"/>\n",
				i, x, y, LM_CELL_W, LM_CELL_H / 2);
		if (t->write_mask >> i & 1)
			fprintf(f,
				"<rect class=\"cell wr\" data-byte=\"%u\" x=\"%d\" y=\"%d\" "
				"width=\"%d\" height=\"%d\"/>\n",
				i, x, y + LM_CELL_H / 2, LM_CELL_W, LM_CELL_H / 2);
	}
	/* where each run of its bytes starts: its offset in the object, else in the line */
	for (b = cp_byte_run(t->read_mask | t->write_mask, 0, &e); b >= 0;
	     b = cp_byte_run(t->read_mask | t->write_mask, e + 1, &e))
		fprintf(f, "<text class=\"off\" x=\"%d\" y=\"%d\">%s%lld</text>\n",
			LM_LABEL_W + b * LM_CELL_W, y - 2, have_obj ? "+" : "",
			(long long)(have_obj ? b - obj_first : b));
	fprintf(f, "</g>\n");
}

void cp_svg_line_map(FILE *f, const char *id, const struct cp_issue *is, bool soft)
{
	const struct cp_issue_sharing *sh = &is->sharing;
	__u32 line_bytes = sh->line_bytes && sh->line_bytes <= CP_LINE_MAX_BYTES
				   ? sh->line_bytes
				   : CP_LINE_MAX_BYTES;
	__u32 rows = sh->nr_threads < CP_LINE_MAX_THREADS ? sh->nr_threads : CP_LINE_MAX_THREADS;
	int grid_w = (int)line_bytes * LM_CELL_W, w = LM_LABEL_W + grid_w + 8;
	int obj_y = LM_TOP + (int)rows * LM_ROW_H + 4, h = obj_y + 44;
	const struct cp_issue_object *o = is->nr_objects ? &is->objects[0] : NULL;
	__s64 first = 0, end = 0;
	bool have_obj = object_span(sh, &first, &end);
	__u32 pads[CP_LINE_MAX_THREADS];
	int nr_pads = is->type == CP_ISSUE_FALSE_SHARING
			      ? cp_svg_pad_offsets(sh, pads, CP_LINE_MAX_THREADS)
			      : 0;
	char title[96];

	snprintf(title, sizeof(title),
		 cp_space_is_file(sh->line_space)
			 ? "Bytes of the line at file offset 0x%llx by thread"
			 : "Bytes of line 0x%llx by thread",
		 (unsigned long long)sh->line_addr);
	svg_open(f, id, "linemap", w, h, title);
	line_map_desc(f, is, soft);
	if (o && (o->kind == CP_OBJ_GLOBAL || o->kind == CP_OBJ_TLS))
		cp_html_escf(f, "The %s variable %s. ",
			     o->kind == CP_OBJ_TLS ? "thread-local" : "global", o->name);
	for (int i = 0; i < nr_pads; i++)
		cp_html_escf(f, "Padding before byte %u puts what follows on a line of its own. ",
			     pads[i]);
	fprintf(f, "</desc>\n");
	/* the byte scale: every 8th byte */
	for (__u32 b = 0; b < line_bytes; b += 8)
		fprintf(f, "<text class=\"scale\" x=\"%d\" y=\"12\">%u</text>\n",
			LM_LABEL_W + (int)b * LM_CELL_W, b);
	fprintf(f, "<text class=\"lbl\" x=\"4\" y=\"12\">byte</text>\n");
	for (__u32 i = 0; i < rows; i++)
		line_map_row(f, &sh->thr[i], line_bytes, LM_TOP + (int)i * LM_ROW_H, have_obj,
			     first);
	/* the object: its part of the line, its boundaries across the rows */
	if (have_obj) {
		__s64 a = first < 0 ? 0 : first, z = end > line_bytes ? line_bytes : end;

		fprintf(f,
			"<rect class=\"obj\" data-first=\"%lld\" data-end=\"%lld\" x=\"%lld\" "
			"y=\"%d\" width=\"%lld\" height=\"10\"/>\n",
			(long long)first, (long long)end, (long long)(LM_LABEL_W + a * LM_CELL_W),
			obj_y, (long long)((z - a) * LM_CELL_W));
		for (int k = 0; k < 2; k++) {
			__s64 at = k ? end : first;

			if (at <= 0 || at >= line_bytes)
				continue;
			fprintf(f,
				"<line class=\"objedge\" data-byte=\"%lld\" x1=\"%lld\" y1=\"%d\" "
				"x2=\"%lld\" y2=\"%d\"/>\n",
				(long long)at, (long long)(LM_LABEL_W + at * LM_CELL_W), LM_TOP - 4,
				(long long)(LM_LABEL_W + at * LM_CELL_W), obj_y + 10);
		}
	}
	fprintf(f, "<text class=\"lbl\" x=\"4\" y=\"%d\">object</text>\n", obj_y + 9);
	fprintf(f, "<text class=\"lbl objname\" x=\"%d\" y=\"%d\">", LM_LABEL_W, obj_y + 24);
	if (o && (o->kind == CP_OBJ_GLOBAL || o->kind == CP_OBJ_TLS))
		cp_html_escf(f, "%s %s (%llu bytes)",
			     o->kind == CP_OBJ_TLS ? "thread-local" : "global", o->name,
			     (unsigned long long)o->size);
	else if (have_obj)
		cp_html_escf(f, "%s (%llu bytes), from line byte %lld",
			     o ? cp_object_kind_name(o->kind) : "object",
			     (unsigned long long)sh->object_size, (long long)first);
	else
		fputs("object not known", f);
	fprintf(f, "</text>\n");
	for (int i = 0; i < nr_pads; i++) {
		int x = LM_LABEL_W + (int)pads[i] * LM_CELL_W;

		fprintf(f,
			"<g class=\"pad\" data-byte=\"%u\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
			"y2=\"%d\"/><text x=\"%d\" y=\"%d\">pad to %u B here</text></g>\n",
			pads[i], x, 18, x, obj_y + 12, x + 2, obj_y + 38, line_bytes);
	}
	fprintf(f, "</svg>\n");
}

int cp_svg_hot_sets(const __u64 *counts, __u32 nr_sets, __u32 *out, int max)
{
	int n = 0;

	for (__u32 s = 0; s < nr_sets; s++) {
		int at;

		if (!counts[s])
			continue;
		/* insertion into the sorted few: most first, the lower set on ties */
		for (at = n; at > 0 && counts[out[at - 1]] < counts[s]; at--)
			;
		if (at >= max)
			continue;
		if (n < max)
			n++;
		memmove(out + at + 1, out + at, (size_t)(n - 1 - at) * sizeof(*out));
		out[at] = s;
	}
	return n;
}

/* A sequential blue scale (light to dark): distinct in luminance for every reader and printer. */
static void heat_colour(double v, char *buf, size_t sz)
{
	static const int lo[3] = {0xde, 0xeb, 0xf7}, hi[3] = {0x08, 0x30, 0x6b};
	int c[3];

	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(lo[i] + (hi[i] - lo[i]) * v);
	snprintf(buf, sz, "#%02x%02x%02x", c[0], c[1], c[2]);
}

void cp_svg_set_heatmap(FILE *f, const char *id, const char *level, const __u64 *counts,
			__u32 nr_sets, long mark, bool soft)
{
	__u32 cols = nr_sets <= 64 ? 32 : 64, rows = (nr_sets + cols - 1) / cols;
	int cell = nr_sets <= 64 ? 16 : 8, top = 18, w, h, nr_hot;
	__u32 hot[CP_SVG_HOT_SETS + 1];
	__u64 max = 0, total = 0;
	char title[96], colour[8];

	for (__u32 s = 0; s < nr_sets; s++) {
		total += counts[s];
		max = counts[s] > max ? counts[s] : max;
	}
	nr_hot = cp_svg_hot_sets(counts, nr_sets, hot, CP_SVG_HOT_SETS);
	if (mark >= 0 && (__u32)mark < nr_sets) {
		bool in = false;

		for (int i = 0; i < nr_hot; i++)
			in |= hot[i] == (__u32)mark;
		if (!in)
			hot[nr_hot++] = (__u32)mark;
	}
	w = (int)cols * cell + 8;
	h = top + (int)rows * cell + 14 + 14 * nr_hot;
	snprintf(title, sizeof(title), "%s: %s per set", level,
		 soft ? "time samples" : "forwarded misses");
	svg_open(f, id, "heatmap", w, h, title);
	cp_html_escf(f, "%u sets of %s, %llu %s in all, %u per row, darker for more. ", nr_sets,
		     level, (unsigned long long)total, soft ? "samples" : "misses", cols);
	for (int i = 0; i < nr_hot; i++)
		cp_html_escf(f, "Set %u: %.1f %%%s. ", hot[i],
			     total ? 100.0 * (double)counts[hot[i]] / (double)total : 0.0,
			     mark >= 0 && hot[i] == (__u32)mark ? " (the issue's set)" : "");
	fprintf(f,
		"</desc>\n<text class=\"lbl\" x=\"4\" y=\"12\">%s sets 0 to %u, %u per "
		"row</text>\n",
		level, nr_sets ? nr_sets - 1 : 0, cols);
	fprintf(f, "<rect class=\"grid\" x=\"4\" y=\"%d\" width=\"%u\" height=\"%u\"/>\n", top,
		cols * (__u32)cell, rows * (__u32)cell);
	/* sets with nothing are the grid's background: a 2048-set L2 stays small */
	for (__u32 s = 0; s < nr_sets; s++) {
		bool is_hot = false;

		for (int i = 0; i < nr_hot; i++)
			is_hot |= hot[i] == s;
		if (!counts[s] && !is_hot)
			continue;
		heat_colour(max ? (double)counts[s] / (double)max : 0, colour, sizeof(colour));
		fprintf(f,
			"<rect class=\"set%s\" data-set=\"%u\" data-count=\"%llu\" x=\"%u\" "
			"y=\"%u\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
			is_hot ? " hot" : "", s, (unsigned long long)counts[s], 4 + s % cols * cell,
			top + s / cols * cell, cell, cell, colour);
	}
	for (int i = 0; i < nr_hot; i++) {
		__u32 s = hot[i];
		int y = top + (int)rows * cell + 12 + 14 * i;

		fprintf(f, "<line class=\"callout\" x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%d\"/>\n",
			4 + s % cols * cell + cell / 2, top + (s / cols + 1) * cell,
			4 + s % cols * cell + cell / 2, y - 9);
		/* right of the middle: the label ends at its set, so it stays in the figure */
		bool right = s % cols >= cols / 2;

		fprintf(f,
			"<text class=\"hotlbl%s\" data-set=\"%u\" x=\"%u\" y=\"%d\">set %u: %.1f "
			"%%%s</text>\n",
			right ? " end" : "", s, 4 + s % cols * cell + (right ? (__u32)cell : 0), y,
			s, total ? 100.0 * (double)counts[s] / (double)total : 0.0,
			mark >= 0 && s == (__u32)mark ? " (this issue)" : "");
	}
	fprintf(f, "</svg>\n");
}

void cp_svg_history_of(const __u64 *addrs, __u32 n, __u32 line_bytes, struct cp_svg_history *h)
{
	__u32 best_n = 0;

	memset(h->lines, 0, h->nr_sets * sizeof(*h->lines));
	h->len = n;
	h->stride = 0;
	h->stride_count = 0;
	h->top_set = 0;
	if (!line_bytes || !h->nr_sets)
		return;
	for (__u32 i = 0; i < n; i++) {
		__u64 line = addrs[i] / line_bytes;
		bool seen = false;

		for (__u32 k = 0; k < i && !seen; k++)
			seen = addrs[k] / line_bytes == line;
		if (!seen)
			h->lines[line % h->nr_sets]++;
	}
	for (__u32 s = 1; s < h->nr_sets; s++)
		if (h->lines[s] > h->lines[h->top_set])
			h->top_set = s;
	/* the commonest step; on ties the smaller one in magnitude, then the positive */
	for (__u32 i = 1; i < n; i++) {
		__s64 d = (__s64)(addrs[i] - addrs[i - 1]);
		__u32 c = 0;

		if (!d)
			continue;
		for (__u32 k = 1; k < n; k++)
			c += (__s64)(addrs[k] - addrs[k - 1]) == d;
		if (c > best_n || (c == best_n && (llabs(d) < llabs(h->stride) ||
						   (llabs(d) == llabs(h->stride) && d > 0)))) {
			best_n = c;
			h->stride = d;
		}
	}
	h->stride_count = best_n;
}

void cp_svg_history(FILE *f, const char *id, const struct cp_svg_history *h, __u32 ways, long set)
{
	__u32 max = ways, shown = 0;
	int bar_w, top = 18, plot_h = 80, w, hgt;
	char title[96];

	for (__u32 s = 0; s < h->nr_sets; s++) {
		max = h->lines[s] > max ? h->lines[s] : max;
		shown += h->lines[s] > 0;
	}
	bar_w = h->nr_sets <= 64 ? 10 : 4;
	w = 40 + (int)h->nr_sets * bar_w + 8;
	hgt = top + plot_h + 34;
	snprintf(title, sizeof(title), "Access history: distinct lines per L1 set");
	svg_open(f, id, "history", w, hgt, title);
	cp_html_escf(f,
		     "%u accesses recorded by breakpoints; the commonest stride is %lld bytes "
		     "(%u steps); %u sets used; set %u holds %u distinct lines for %u ways. ",
		     h->len, (long long)h->stride, h->stride_count, shown, h->top_set,
		     h->nr_sets ? h->lines[h->top_set] : 0, ways);
	fprintf(f, "</desc>\n");
	fprintf(f, "<text class=\"lbl\" x=\"4\" y=\"12\">stride %lld B, %u accesses</text>\n",
		(long long)h->stride, h->len);
	for (__u32 s = 0; s < h->nr_sets; s++) {
		int bh;

		if (!h->lines[s])
			continue;
		bh = (int)lround((double)plot_h * h->lines[s] / (max ? max : 1));
		fprintf(f,
			"<rect class=\"hbar%s\" data-set=\"%u\" data-lines=\"%u\" x=\"%d\" "
			"y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
			(long)s == set ? " hot" : "", s, h->lines[s], 40 + (int)s * bar_w,
			top + plot_h - bh, bar_w - 1, bh);
		if ((long)s == set || s == h->top_set)
			fprintf(f,
				"<text class=\"hotlbl\" x=\"%d\" y=\"%d\">set %u: %u "
				"lines</text>\n",
				40 + (int)s * bar_w, top + plot_h + 14, s, h->lines[s]);
	}
	if (ways) {
		int y = top + plot_h - (int)lround((double)plot_h * ways / (max ? max : 1));

		fprintf(f,
			"<line class=\"ways\" data-ways=\"%u\" x1=\"36\" y1=\"%d\" x2=\"%d\" "
			"y2=\"%d\"/><text class=\"lbl\" x=\"2\" y=\"%d\">%u ways</text>\n",
			ways, y, w - 4, y, y + 4, ways);
	}
	fprintf(f, "<text class=\"lbl\" x=\"40\" y=\"%d\">L1 set 0 to %u</text>\n", hgt - 4,
		h->nr_sets ? h->nr_sets - 1 : 0);
	fprintf(f, "</svg>\n");
}

/* "48 KiB", "2 MiB", "300 B" */
static void size_text(__u64 b, char *buf, size_t sz)
{
	if (b >= (1ull << 20) && !(b & ((1ull << 20) - 1)))
		snprintf(buf, sz, "%llu MiB", (unsigned long long)(b >> 20));
	else if (b >= 1024)
		snprintf(buf, sz, "%llu KiB", (unsigned long long)(b >> 10));
	else
		snprintf(buf, sz, "%llu B", (unsigned long long)b);
}

void cp_svg_footprint(FILE *f, const char *id, __u64 footprint, const char *what,
		      const struct cp_geometry *geo)
{
	struct {
		const char *name, *cls;
		__u64 bytes;
	} bars[CP_CACHE_NR_SLOTS + 1];
	int n = 0, w = 560, bar_x = 150, plot_w = 360, h;
	double lo = 10, hi = 10; /* log2 of the scale's ends: 1 KiB at least */
	char text[32], title[64];

	for (int s = 0; s < CP_CACHE_NR_SLOTS && geo; s++)
		bars[n++] = (typeof(bars[0])){cp_cache_slot_name((enum cp_cache_slot)s), "level",
					      geo->slot[s].size_bytes};
	if (footprint)
		bars[n++] = (typeof(bars[0])){"footprint", "foot", footprint};
	for (int i = 0; i < n; i++)
		if (bars[i].bytes && log2((double)bars[i].bytes) + 1 > hi)
			hi = ceil(log2((double)bars[i].bytes)) + 1;
	h = 22 + 22 * n + 8;
	snprintf(title, sizeof(title), "Footprint against the cache sizes");
	svg_open(f, id, "footprint", w, h, title);
	if (footprint) {
		size_text(footprint, text, sizeof(text));
		cp_html_escf(f, "Footprint %s (%s). ", text, what ? what : "");
	} else {
		fputs("Footprint not known. ", f);
	}
	for (int i = 0; i < n && bars[i].cls[0] == 'l'; i++) {
		size_text(bars[i].bytes, text, sizeof(text));
		cp_html_escf(f, "%s: %s%s. ", bars[i].name, text,
			     footprint && footprint > bars[i].bytes ? ", exceeded" : "");
	}
	fprintf(f, "Log scale.</desc>\n<text class=\"lbl\" x=\"4\" y=\"12\">bytes, log "
		   "scale</text>\n");
	for (int i = 0; i < n; i++) {
		double v = bars[i].bytes ? log2((double)bars[i].bytes) : lo;
		int bw = (int)lround(plot_w * (v - lo + 1) / (hi - lo + 1)), y = 22 + 22 * i;

		size_text(bars[i].bytes, text, sizeof(text));
		fprintf(f, "<text class=\"lbl\" x=\"4\" y=\"%d\">%s</text>\n", y + 12,
			bars[i].name);
		fprintf(f,
			"<rect class=\"%s\" data-bytes=\"%llu\" x=\"%d\" y=\"%d\" width=\"%d\" "
			"height=\"16\"/>\n",
			bars[i].cls, (unsigned long long)bars[i].bytes, bar_x, y, bw > 1 ? bw : 1);
		fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%s</text>\n", bar_x + bw + 4,
			y + 12, text);
	}
	fprintf(f, "</svg>\n");
}

void cp_svg_timeline(FILE *f, const char *id, const double *share, const double *end_s, __u32 n,
		     bool soft)
{
	int plot_h = 80, top = 18, left = 44, w, h, bw;
	double max = 0;

	for (__u32 i = 0; i < n; i++)
		max = share[i] > max ? share[i] : max;
	max = max > 0 ? max : 1;
	bw = n > 120 ? 3 : n > 60 ? 6 : 10;
	w = left + (int)n * bw + 16;
	w = w < 240 ? 240 : w;
	h = top + plot_h + 30;
	svg_open(f, id, "timeline", w, h, "Impact per interval");
	cp_html_escf(f,
		     "%u intervals; the share of %s of each that fell on the issue's "
		     "instructions: ",
		     n, soft ? "the time samples" : "the sampled misses");
	for (__u32 i = 0; i < n; i++)
		if (share[i] >= 0)
			cp_html_escf(f, "%s%.1f s: %.1f %%", i ? "; " : "", end_s[i],
				     100 * share[i]);
		else
			cp_html_escf(f, "%s%.1f s: no samples", i ? "; " : "", end_s[i]);
	fprintf(f, ".</desc>\n");
	fprintf(f, "<text class=\"lbl\" x=\"4\" y=\"12\">%.0f %%</text>\n", 100 * max);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", left,
		top + plot_h, left + (int)n * bw, top + plot_h);
	for (__u32 i = 0; i < n; i++) {
		int bh = share[i] > 0 ? (int)lround(plot_h * share[i] / max) : 0;

		fprintf(f,
			"<rect class=\"tl\" data-i=\"%u\" data-share=\"%.4f\" x=\"%d\" y=\"%d\" "
			"width=\"%d\" height=\"%d\"/>\n",
			i, share[i] < 0 ? 0 : share[i], left + (int)i * bw, top + plot_h - bh,
			bw - 1, bh);
	}
	fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%.1f s</text>\n", left, h - 6,
		n ? end_s[0] : 0);
	if (n > 1)
		fprintf(f, "<text class=\"lbl end\" x=\"%d\" y=\"%d\">%.1f s</text>\n",
			left + (int)n * bw, h - 6, end_s[n - 1]);
	fprintf(f, "</svg>\n");
}
