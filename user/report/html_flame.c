// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Flame graphs of an issue's stacks (see html_flame.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_flame.h"
#include "report/html_out.h"

#define NO_NODE	  0xffffffffu
#define FL_WIDTH  960 /* pixels of the whole graph */
#define FL_ROW	  17
#define FL_CHAR_W 7   /* of the label font, to fit a name in its frame */
#define FL_MIN_W  0.5 /* pixels: narrower frames are not drawn (their value is in the parent) */

struct flame_node {
	char *name;
	__u64 value;
	__u32 child;   /* first child, NO_NODE: none */
	__u32 sibling; /* next sibling in name order */
};

struct cp_flame {
	struct flame_node *nodes; /* [0]: the root */
	__u32 nr;
	__u64 dropped;
};

struct cp_flame *cp_flame__new(void)
{
	struct cp_flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->nodes = calloc(CP_FLAME_MAX_NODES, sizeof(*f->nodes));
	f->nodes[0].name = f->nodes ? strdup("all") : NULL;
	if (!f->nodes || !f->nodes[0].name) {
		cp_flame__free(f);
		return NULL;
	}
	f->nodes[0].child = NO_NODE;
	f->nodes[0].sibling = NO_NODE;
	f->nr = 1;
	return f;
}

void cp_flame__free(struct cp_flame *f)
{
	if (!f)
		return;
	for (__u32 i = 0; f->nodes && i < f->nr; i++)
		free(f->nodes[i].name);
	free(f->nodes);
	free(f);
}

/* The child @name of @parent, inserted in name order if new; NO_NODE when full. */
static __u32 child_of(struct cp_flame *f, __u32 parent, const char *name)
{
	__u32 *link = &f->nodes[parent].child, n;
	int cmp = 1;

	while (*link != NO_NODE && (cmp = strcmp(f->nodes[*link].name, name)) < 0)
		link = &f->nodes[*link].sibling;
	if (*link != NO_NODE && cmp == 0)
		return *link;
	if (f->nr == CP_FLAME_MAX_NODES)
		return NO_NODE;
	n = f->nr;
	f->nodes[n].name = strdup(name);
	if (!f->nodes[n].name)
		return NO_NODE;
	f->nr++;
	f->nodes[n].child = NO_NODE;
	f->nodes[n].sibling = *link;
	*link = n;
	return n;
}

int cp_flame__add(struct cp_flame *f, const char *const *frames, __u32 nr, __u64 value)
{
	__u32 at = 0;

	f->nodes[0].value += value;
	for (__u32 i = 0; i < nr; i++) {
		__u32 c = child_of(f, at, frames[i] && frames[i][0] ? frames[i] : "??");

		if (c == NO_NODE) {
			f->dropped += value;
			return -ENOSPC;
		}
		f->nodes[c].value += value;
		at = c;
	}
	return 0;
}

int cp_flame__add_stack(struct cp_flame *f, __u32 tgid, const __u64 *pcs, __u32 nr, __u64 value,
			cp_frame_name_fn name, void *ctx)
{
	char(*names)[CP_FLAME_NAME_LEN];
	const char *frames[CP_FLAME_MAX_DEPTH];
	int ret;

	if (nr > CP_FLAME_MAX_DEPTH)
		nr = CP_FLAME_MAX_DEPTH;
	names = calloc(nr ? nr : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	/* outermost first: the last caller is the root's child */
	for (__u32 i = 0; i < nr; i++) {
		__u64 pc = i ? pcs[i] - 1 : pcs[i];
		char *buf = names[nr - 1 - i];

		if (!name || name(ctx, tgid, pc, i == 0, buf, CP_FLAME_NAME_LEN) < 0)
			snprintf(buf, CP_FLAME_NAME_LEN, "0x%llx", (unsigned long long)pcs[i]);
		frames[nr - 1 - i] = buf;
	}
	ret = cp_flame__add(f, frames, nr, value);
	free(names);
	return ret;
}

__u64 cp_flame__total(const struct cp_flame *f)
{
	return f->nodes[0].value;
}

__u64 cp_flame__dropped(const struct cp_flame *f)
{
	return f->dropped;
}

/* Depth first from the root; siblings follow their name order. */
size_t cp_flame__layout(const struct cp_flame *f, struct cp_flame_rect *out, size_t max)
{
	size_t at = 0;
	/* an explicit stack: a deep tree must not exhaust ours */
	struct {
		__u32 node, depth;
		__u64 start;
	} *todo = malloc(CP_FLAME_MAX_NODES * sizeof(*todo));
	size_t top = 0;

	if (!todo)
		return at;
	todo[top++] = (typeof(*todo)){0, 0, 0};
	while (top) {
		typeof(*todo) cur = todo[--top];
		const struct flame_node *node = &f->nodes[cur.node];
		__u64 s = cur.start;
		size_t first = top;

		if (at < max)
			out[at] = (struct cp_flame_rect){node->name, cur.depth, cur.start,
							 node->value};
		at++;
		/* children pushed last to first, so the first in name order comes out next */
		for (__u32 c = node->child; c != NO_NODE; c = f->nodes[c].sibling) {
			todo[top++] = (typeof(*todo)){c, cur.depth + 1, s};
			s += f->nodes[c].value;
		}
		for (size_t a = first, b = top; b > a + 1; a++, b--) {
			typeof(*todo) t = todo[a];

			todo[a] = todo[b - 1];
			todo[b - 1] = t;
		}
	}
	free(todo);
	return at;
}

/* A warm tint from the name (the same function, the same colour, in every graph). */
static unsigned int tint(const char *name)
{
	static const unsigned int tints[] = {0xfdd49e, 0xfdbb84, 0xfc8d59, 0xfee8c8, 0xf6c38b};
	unsigned int h = 5381;

	for (; *name; name++)
		h = h * 33 + (unsigned char)*name;
	return tints[h % (sizeof(tints) / sizeof(tints[0]))];
}

void cp_flame_svg(FILE *out, const char *id, const struct cp_flame *f, const char *unit)
{
	size_t n = cp_flame__layout(f, NULL, 0), shown;
	struct cp_flame_rect *r = calloc(n ? n : 1, sizeof(*r));
	__u64 total = cp_flame__total(f);
	__u32 depth = 0;
	int h;

	if (!r)
		return;
	shown = cp_flame__layout(f, r, n);
	for (size_t i = 0; i < shown; i++)
		depth = r[i].depth > depth ? r[i].depth : depth;
	h = (int)(depth + 1) * FL_ROW + 4;
	fprintf(out,
		"<svg class=\"flame\" id=\"%s\" role=\"img\" aria-labelledby=\"%s-t %s-d\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n<title id=\"%s-t\">Flame graph</title>\n"
		"<desc id=\"%s-d\">",
		id, id, id, FL_WIDTH, h, FL_WIDTH, h, id, id);
	cp_html_escf(out,
		     "%llu %s in %zu frames; each frame is as wide as its share, its callers "
		     "below it: ",
		     (unsigned long long)total, unit, shown);
	/* the text alternative: every frame with its share, as a reader would list them */
	for (size_t i = 1; i < shown && i < 64; i++)
		cp_html_escf(out, "%s%s %.1f %%", i > 1 ? "; " : "", r[i].name,
			     total ? 100.0 * (double)r[i].value / (double)total : 0.0);
	if (shown > 64)
		cp_html_escf(out, "; and %zu more", shown - 64);
	if (f->dropped)
		cp_html_escf(out, "; %llu %s in frames beyond %d not drawn",
			     (unsigned long long)f->dropped, unit, CP_FLAME_MAX_NODES);
	fprintf(out, ".</desc>\n");
	for (size_t i = 0; i < shown; i++) {
		double x = total ? (double)FL_WIDTH * (double)r[i].start / (double)total : 0;
		double w = total ? (double)FL_WIDTH * (double)r[i].value / (double)total : 0;
		int y = h - 4 - (int)(r[i].depth + 1) * FL_ROW;
		size_t fit = w > 2 * FL_CHAR_W ? (size_t)(w / FL_CHAR_W) - 1 : 0;

		if (w < FL_MIN_W)
			continue;
		/* parents come before their children: a frame followed by a deeper one has some */
		bool leaf = !(i + 1 < shown && r[i + 1].depth > r[i].depth);

		fprintf(out, "<g class=\"frame%s\" data-depth=\"%u\" data-value=\"%llu\"><title>",
			!r[i].depth ? " root"
			: leaf	    ? " leaf"
				    : "",
			r[i].depth, (unsigned long long)r[i].value);
		cp_html_escf(out, "%s: %llu %s, %.1f %%", r[i].name, (unsigned long long)r[i].value,
			     unit, total ? 100.0 * (double)r[i].value / (double)total : 0.0);
		fprintf(out,
			"</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			"fill=\"#%06x\"/>",
			x, y, w, FL_ROW - 1, tint(r[i].name));
		if (fit >= 3) {
			char label[CP_FLAME_NAME_LEN];
			size_t len = strlen(r[i].name);

			snprintf(label, sizeof(label), "%s", r[i].name);
			if (len > fit && fit < sizeof(label))
				snprintf(label + fit - 2, sizeof(label) - (fit - 2), "..");
			fprintf(out, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + FL_ROW - 5);
			cp_html_esc(out, label);
			fprintf(out, "</text>");
		}
		fprintf(out, "</g>\n");
	}
	fprintf(out, "</svg>\n");
	free(r);
}
