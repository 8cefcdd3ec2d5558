// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The issues of two runs paired up (see issue_match.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/issue_match.h"
#include "util/path.h"

/* "work.c:94", the function, or the address: as much as is known of the main line. */
static void key_where(const struct cp_issue *is, struct cp_issue_key *k)
{
	const struct cp_issue_insn *in = &is->insns[0];

	if (!is->nr_insns)
		return;
	if (in->have_loc && in->loc.file[0] && in->loc.line) {
		snprintf(k->where, sizeof(k->where), "%s:%u", cp_base_name(in->loc.file),
			 in->loc.line);
		k->line = in->loc.line;
	} else if (in->have_loc && in->loc.function[0])
		snprintf(k->where, sizeof(k->where), "%s", in->loc.function);
	else
		snprintf(k->where, sizeof(k->where), "0x%llx", (unsigned long long)in->ip);
	if (in->have_loc)
		snprintf(k->function, sizeof(k->function), "%s", in->loc.function);
}

/*
 * A heap object by where it was allocated (its first user frame: sizes
 * change with a fix, addresses with every run); another object by its name.
 */
static void key_object(const struct cp_issue *is, struct cp_issue_key *k)
{
	const struct cp_issue_object *o = &is->objects[0];
	const struct cp_src_loc *site = &o->alloc_stack[0];

	if (!is->nr_objects)
		return;
	switch (o->kind) {
	case CP_OBJ_HEAP:
		if (!o->nr_frames) {
			snprintf(k->object_site, sizeof(k->object_site), "heap object%s",
				 o->flags & CP_OBJ_F_CHUNK ? " (glibc chunk)" : "");
			break;
		}
		snprintf(k->object_site, sizeof(k->object_site), "heap object from %s",
			 site->function[0] ? site->function : "??");
		if (site->file[0] && site->line) {
			snprintf(k->object, sizeof(k->object), "%s (%s:%u)", k->object_site,
				 cp_base_name(site->file), site->line);
			k->site_line = site->line;
		}
		return;
	case CP_OBJ_GLOBAL:
	case CP_OBJ_TLS:
		snprintf(k->object_site, sizeof(k->object_site), "%s variable %s",
			 o->kind == CP_OBJ_TLS ? "thread-local" : "global", o->name);
		break;
	case CP_OBJ_UNKNOWN:
		snprintf(k->object_site, sizeof(k->object_site),
			 "memory %s with no allocation seen", o->name[0] ? o->name : "?");
		break;
	default:
		/* a file's mapping by its base name: the rebuilt twin may live elsewhere */
		snprintf(k->object_site, sizeof(k->object_site), "%s %s",
			 cp_object_kind_name(o->kind), cp_base_name(o->name));
		break;
	}
	snprintf(k->object, sizeof(k->object), "%s", k->object_site);
}

void cp_issue_key_of(const struct cp_issue *is, struct cp_issue_key *k)
{
	memset(k, 0, sizeof(*k));
	k->type = is->type;
	k->origin = is->origin;
	key_where(is, k);
	key_object(is, k);
	if (!k->object[0])
		snprintf(k->object, sizeof(k->object), "%s", k->object_site);
}

static bool same_type(const struct cp_issue_key *b, const struct cp_issue_key *a)
{
	return b->type == a->type && b->origin == a->origin;
}

/* Whether pass @kind pairs @b with @a (issue_match.h says why each pass is so). */
static bool fits(enum cp_issue_match_kind kind, const struct cp_issue_key *b,
		 const struct cp_issue_key *a)
{
	switch (kind) {
	case CP_MATCH_SAME:
		return same_type(b, a) && !strcmp(b->where, a->where) &&
		       !strcmp(b->object, a->object);
	case CP_MATCH_MOVED:
		return same_type(b, a) && b->function[0] && !strcmp(b->function, a->function) &&
		       !strcmp(b->object_site, a->object_site);
	case CP_MATCH_TYPE_CHANGED:
		return !same_type(b, a) && b->where[0] && !strcmp(b->where, a->where) &&
		       !strcmp(b->object_site, a->object_site);
	default:
		return false;
	}
}

static __u32 distance(__u32 x, __u32 y)
{
	return x > y ? x - y : y - x;
}

/* A pair a pass may make, and how far apart its lines are. */
struct candidate {
	__u32 lines;
	int b, a;
};

/* Nearest lines first, then BEFORE's rank, then AFTER's. */
static int by_distance(const void *x, const void *y)
{
	const struct candidate *p = x, *q = y;

	if (p->lines != q->lines)
		return p->lines < q->lines ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return (p->a > q->a) - (p->a < q->a);
}

/*
 * One pass: the pairs it may make among the unpaired, nearest lines first
 * (a moved issue takes the access that moved least, not the first one of
 * its function), then in rank order. 0 or -ENOMEM.
 */
static int match_pass(enum cp_issue_match_kind kind, const struct cp_issue_key *kb, size_t nb,
		      const struct cp_issue_key *ka, size_t na, bool *taken,
		      struct cp_issue_pair *out)
{
	struct candidate *c = NULL, *grown;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < nb; i++) {
		for (size_t j = 0; out[i].after < 0 && j < na; j++) {
			if (taken[j] || !fits(kind, &kb[i], &ka[j]))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(c, cap * sizeof(*c));
				if (!grown) {
					free(c);
					return -ENOMEM;
				}
				c = grown;
			}
			c[n++] = (struct candidate){
				.lines = distance(kb[i].line, ka[j].line) +
					 distance(kb[i].site_line, ka[j].site_line),
				.b = (int)i,
				.a = (int)j,
			};
		}
	}
	if (n)
		qsort(c, n, sizeof(*c), by_distance);
	for (size_t k = 0; k < n; k++) {
		if (out[c[k].b].after >= 0 || taken[c[k].a])
			continue;
		taken[c[k].a] = true;
		out[c[k].b].kind = kind;
		out[c[k].b].after = c[k].a;
	}
	free(c);
	return 0;
}

int cp_issue_match(const struct cp_issue *before, size_t nb, const struct cp_issue *after,
		   size_t na, struct cp_issue_pair *out, size_t *nr_out)
{
	struct cp_issue_key *kb = calloc(nb + 1, sizeof(*kb)), *ka = calloc(na + 1, sizeof(*ka));
	bool *taken = calloc(na + 1, sizeof(*taken));
	size_t n = nb;
	int ret = -ENOMEM;

	*nr_out = 0;
	if (!kb || !ka || !taken)
		goto out;
	for (size_t i = 0; i < nb; i++) {
		cp_issue_key_of(&before[i], &kb[i]);
		out[i] = (struct cp_issue_pair){
			.kind = CP_MATCH_GONE, .before = (int)i, .after = -1};
	}
	for (size_t j = 0; j < na; j++)
		cp_issue_key_of(&after[j], &ka[j]);
	for (int pass = CP_MATCH_SAME; pass <= CP_MATCH_TYPE_CHANGED; pass++) {
		ret = match_pass((enum cp_issue_match_kind)pass, kb, nb, ka, na, taken, out);
		if (ret)
			goto out;
	}
	for (size_t j = 0; j < na; j++)
		if (!taken[j])
			out[n++] = (struct cp_issue_pair){
				.kind = CP_MATCH_NEW, .before = -1, .after = (int)j};
	*nr_out = n;
out:
	free(kb);
	free(ka);
	free(taken);
	return ret;
}

const char *cp_issue_match_name(enum cp_issue_match_kind k)
{
	static const char *const names[CP_MATCH_KIND_NR] = {
		"same", "moved", "type_changed", "gone", "new",
	};

	return (unsigned int)k < CP_MATCH_KIND_NR ? names[k] : "?";
}
