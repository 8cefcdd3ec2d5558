// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seen_objects.h"

#define CP_SEEN_PROBES	8	/* slots looked at from a line's home */

struct seen_line {
	__u64 line;		/* address / line size */
	__u32 tgid;
	__u8 used;
	__u8 nr;		/* objects in objs[], newest first */
	__u8 __pad[2];
	struct cp_seen_object objs[CP_SEEN_PER_LINE];
};

struct cp_seen_objects {
	struct seen_line *slots;
	size_t mask;
	struct cp_seen_stats st;
};

struct cp_seen_objects *cp_seen_objects__new(size_t max_lines)
{
	struct cp_seen_objects *s = calloc(1, sizeof(*s));
	size_t n = 1;

	if (!s)
		return NULL;
	if (!max_lines)
		max_lines = CP_SEEN_LINES_DEFAULT;
	while (n < max_lines && n < ((size_t)1 << 30))
		n <<= 1;
	if (n < CP_SEEN_PROBES)
		n = CP_SEEN_PROBES;
	s->slots = calloc(n, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	s->mask = n - 1;
	return s;
}

void cp_seen_objects__free(struct cp_seen_objects *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s);
}

static size_t home_of(const struct cp_seen_objects *s, __u32 tgid, __u64 line)
{
	__u64 h = line * 0x9e3779b97f4a7c15ull ^ (__u64)tgid * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ h >> 29) & s->mask;
}

/* The slot of (@tgid, @line), or NULL; *@free_slot: the first unused one seen. */
static struct seen_line *lookup(const struct cp_seen_objects *s, __u32 tgid, __u64 line,
				struct seen_line **free_slot)
{
	size_t home = home_of(s, tgid, line);

	if (free_slot)
		*free_slot = NULL;
	for (size_t i = 0; i < CP_SEEN_PROBES; i++) {
		struct seen_line *l = &s->slots[(home + i) & s->mask];

		if (!l->used) {
			if (free_slot && !*free_slot)
				*free_slot = l;
			continue;
		}
		if (l->tgid == tgid && l->line == line)
			return l;
	}
	return NULL;
}

void cp_seen_objects__prefetch(const struct cp_seen_objects *s, __u32 tgid, __u64 addr,
			       __u32 line_bytes)
{
	__builtin_prefetch(&s->slots[home_of(s, tgid, addr / (line_bytes ? line_bytes : 64))]);
}

void cp_seen_objects__note(struct cp_seen_objects *s, __u32 tgid, __u64 addr, __u32 line_bytes,
			   const struct cp_seen_object *obj)
{
	__u64 line = addr / (line_bytes ? line_bytes : 64);
	struct seen_line *l, *free_slot;
	__u8 i;

	l = lookup(s, tgid, line, &free_slot);
	if (!l) {
		l = free_slot;
		if (l) {
			s->st.lines++;
		} else {
			/* the table is full around here: the home slot makes room */
			l = &s->slots[home_of(s, tgid, line)];
			s->st.evicted_lines++;
		}
		memset(l, 0, sizeof(*l));
		l->used = 1;
		l->tgid = tgid;
		l->line = line;
	}
	for (i = 0; i < l->nr; i++)
		if (l->objs[i].start == obj->start && l->objs[i].callsite == obj->callsite &&
		    l->objs[i].size == obj->size)
			break;
	if (i == l->nr) {
		s->st.noted++;
		if (l->nr < CP_SEEN_PER_LINE)
			l->nr++;
		else
			s->st.evicted_objects++;
		i = l->nr - 1;		/* the oldest goes if the line is full */
	}
	/* newest first */
	memmove(&l->objs[1], &l->objs[0], i * sizeof(l->objs[0]));
	l->objs[0] = *obj;
}

int cp_seen_objects__find(const struct cp_seen_objects *s, __u32 tgid, __u64 addr,
			  __u32 line_bytes, struct cp_seen_object *out)
{
	const struct seen_line *l = lookup(s, tgid, addr / (line_bytes ? line_bytes : 64), NULL);

	if (!l)
		return -ENOENT;
	for (__u8 i = 0; i < l->nr; i++) {
		const struct cp_seen_object *o = &l->objs[i];

		if (addr >= o->start && addr - o->start < (o->size ? o->size : 1)) {
			*out = *o;
			return 0;
		}
	}
	return -ENOENT;
}

void cp_seen_objects__stats(const struct cp_seen_objects *s, struct cp_seen_stats *out)
{
	*out = s->st;
}
