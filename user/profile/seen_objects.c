// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/prefetch.h"
#include "profile/seen_objects.h"

#define CP_SEEN_PROBES 8 /* slots looked at from a line's home */

/*
 * A slot's key apart from its objects: a lookup walks up to CP_SEEN_PROBES
 * keys, 16 bytes each (two or three cache lines), and touches the objects
 * of one slot only (two cache lines); keys and objects in one 144-byte slot
 * made it walk eighteen lines for a line not held. Same 144 bytes a slot.
 */
struct seen_key {
	__u64 line; /* address / line size */
	__u32 tgid;
	__u8 used;
	__u8 nr; /* objects in its seen_objs, newest first */
	__u8 __pad[2];
};

struct seen_objs {
	struct cp_seen_object o[CP_SEEN_PER_LINE];
};

struct cp_seen_objects {
	struct seen_key *keys;
	struct seen_objs *objs; /* objs[i]: those of keys[i]; 64-byte aligned */
	void *objs_mem;		/* what objs lies in */
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
	s->keys = calloc(n, sizeof(*s->keys));
	s->objs_mem = calloc(n * sizeof(*s->objs) + 63, 1);
	if (!s->keys || !s->objs_mem) {
		cp_seen_objects__free(s);
		return NULL;
	}
	s->objs = (struct seen_objs *)(((uintptr_t)s->objs_mem + 63) & ~(uintptr_t)63);
	s->mask = n - 1;
	return s;
}

void cp_seen_objects__free(struct cp_seen_objects *s)
{
	if (!s)
		return;
	free(s->keys);
	free(s->objs_mem);
	free(s);
}

static size_t home_of(const struct cp_seen_objects *s, __u32 tgid, __u64 line)
{
	__u64 h = cp_hash64(line) ^ (__u64)tgid * 0xc2b2ae3d27d4eb4full;

	return cp_hash_slot(cp_hash_fold(h, 29), 0, s->mask);
}

/* The slot of (@tgid, @line), or -1; *@free_slot: the first unused one seen, or -1. */
static long lookup(const struct cp_seen_objects *s, __u32 tgid, __u64 line, long *free_slot)
{
	size_t home = home_of(s, tgid, line);

	if (free_slot)
		*free_slot = -1;
	for (size_t i = 0, at = home; i < CP_SEEN_PROBES; i++, at = cp_probe_next(at, s->mask)) {
		const struct seen_key *k = &s->keys[at];

		if (!k->used) {
			if (free_slot && *free_slot < 0)
				*free_slot = (long)at;
			continue;
		}
		if (k->tgid == tgid && k->line == line)
			return (long)at;
	}
	return -1;
}

void cp_seen_objects__prefetch(const struct cp_seen_objects *s, __u32 tgid, __u64 addr,
			       __u32 line_bytes)
{
	size_t home = home_of(s, tgid, addr / (line_bytes ? line_bytes : 64));
	size_t run = s->mask + 1 - home;

	/* the probe run's keys (one that wraps: up to the table's end) */
	cp_prefetch_range(&s->keys[home],
			  (run < CP_SEEN_PROBES ? run : CP_SEEN_PROBES) * sizeof(s->keys[0]));
	cp_prefetch_range(&s->objs[home], sizeof(s->objs[home]));
}

void cp_seen_objects__note(struct cp_seen_objects *s, __u32 tgid, __u64 addr, __u32 line_bytes,
			   const struct cp_seen_object *obj)
{
	__u64 line = addr / (line_bytes ? line_bytes : 64);
	long at, free_slot;
	struct cp_seen_object *objs;
	struct seen_key *k;
	__u8 i;

	at = lookup(s, tgid, line, &free_slot);
	if (at < 0) {
		at = free_slot;
		if (at >= 0) {
			s->st.lines++;
		} else {
			/* the table is full around here: the home slot makes room */
			at = (long)home_of(s, tgid, line);
			s->st.evicted_lines++;
		}
		s->keys[at] = (struct seen_key){.line = line, .tgid = tgid, .used = 1};
		memset(&s->objs[at], 0, sizeof(s->objs[at]));
	}
	k = &s->keys[at];
	objs = s->objs[at].o;
	for (i = 0; i < k->nr; i++)
		if (objs[i].start == obj->start && objs[i].callsite == obj->callsite &&
		    objs[i].size == obj->size)
			break;
	if (i == k->nr) {
		s->st.noted++;
		if (k->nr < CP_SEEN_PER_LINE)
			k->nr++;
		else
			s->st.evicted_objects++;
		i = k->nr - 1; /* the oldest goes if the line is full */
	}
	/* newest first */
	memmove(&objs[1], &objs[0], i * sizeof(objs[0]));
	objs[0] = *obj;
}

int cp_seen_objects__find(const struct cp_seen_objects *s, __u32 tgid, __u64 addr, __u32 line_bytes,
			  struct cp_seen_object *out)
{
	long at = lookup(s, tgid, addr / (line_bytes ? line_bytes : 64), NULL);

	if (at < 0)
		return -ENOENT;
	for (__u8 i = 0; i < s->keys[at].nr; i++) {
		const struct cp_seen_object *o = &s->objs[at].o[i];

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
