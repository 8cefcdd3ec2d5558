// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "objects/callsites.h"
#include "util/hash.h"

/*
 * Sites live in a dense array (id = index + 1); a hash of indices finds a
 * site by value, another a site with frames by its caller and frames. Open
 * addressing, linear probing, load factor <= 1/2; never deletes, so no
 * tombstones.
 */
struct cp_callsites {
	struct cp_callsite *sites;
	size_t nr, cap, max;
	__u32 *slots;		     /* index + 1, 0 = empty */
	size_t nr_slots;	     /* a power of two */
	__u32 *fslots;		     /* by caller and frames: index + 1 of a site with frames */
	size_t nr_fslots, nr_fsites; /* a power of two; sites in it */
	__u64 dropped;
	__u64 *frames; /* the sites' stacks, back to back, append-only */
	size_t nr_frames, cap_frames;
	__u64 frames_dropped;
};

static size_t hash_site(__u64 caller, __s64 stack_id)
{
	return (size_t)cp_hash_mix(cp_hash64(caller) ^ (__u64)stack_id, 31, 29);
}

struct cp_callsites *cp_callsites__new(size_t max)
{
	struct cp_callsites *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->max = max ? max : CP_MAX_CALLSITES;
	if (cs->max > UINT32_MAX - 1)
		cs->max = UINT32_MAX - 1;
	cs->nr_slots = 64;
	cs->slots = calloc(cs->nr_slots, sizeof(*cs->slots));
	if (!cs->slots) {
		free(cs);
		return NULL;
	}
	return cs;
}

void cp_callsites__free(struct cp_callsites *cs)
{
	if (!cs)
		return;
	free(cs->sites);
	free(cs->slots);
	free(cs->fslots);
	free(cs->frames);
	free(cs);
}

static size_t probe(const struct cp_callsites *cs, __u64 caller, __s64 stack_id)
{
	size_t mask = cs->nr_slots - 1, i = cp_hash_slot(hash_site(caller, stack_id), 0, mask);

	while (cs->slots[i]) {
		const struct cp_callsite *c = &cs->sites[cs->slots[i] - 1];

		if (c->caller == caller && c->stack_id == stack_id)
			break;
		i = cp_probe_next(i, mask);
	}
	return i;
}

static int grow(struct cp_callsites *cs)
{
	if (cs->nr == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 64;
		struct cp_callsite *s = realloc(cs->sites, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		cs->sites = s;
		cs->cap = cap;
	}
	if ((cs->nr + 1) * 2 > cs->nr_slots) {
		size_t n = cs->nr_slots * 2;
		__u32 *slots = calloc(n, sizeof(*slots)), *old = cs->slots;

		if (!slots)
			return -ENOMEM;
		cs->slots = slots;
		cs->nr_slots = n;
		for (size_t i = 0; i < cs->nr; i++)
			slots[probe(cs, cs->sites[i].caller, cs->sites[i].stack_id)] = i + 1;
		free(old);
	}
	return 0;
}

__u64 cp_callsites__find(const struct cp_callsites *cs, __u64 caller, __s64 stack_id)
{
	size_t i = probe(cs, caller, stack_id);
	const struct cp_callsite *c;

	if (!cs->slots[i])
		return 0;
	c = &cs->sites[cs->slots[i] - 1];
	return c->same_as ? c->same_as : cs->slots[i];
}

bool cp_callsites__has_room(const struct cp_callsites *cs)
{
	return cs->nr < cs->max;
}

__u64 cp_callsites__intern(struct cp_callsites *cs, __u64 caller, __s64 stack_id)
{
	__u64 id = cp_callsites__find(cs, caller, stack_id);
	size_t i;

	if (id)
		return id;
	if (cs->nr >= cs->max || grow(cs)) {
		cs->dropped++;
		return 0;
	}
	i = probe(cs, caller, stack_id); /* the table may have been rebuilt */
	cs->sites[cs->nr] = (struct cp_callsite){.caller = caller, .stack_id = stack_id};
	cs->slots[i] = ++cs->nr;
	return cs->nr;
}

const struct cp_callsite *cp_callsites__get(const struct cp_callsites *cs, __u64 id)
{
	const struct cp_callsite *c = id && id <= cs->nr ? &cs->sites[id - 1] : NULL;

	/* a site found the same as an earlier one after objects took its id */
	return c && c->same_as ? &cs->sites[c->same_as - 1] : c;
}

__u64 cp_callsites__canonical(const struct cp_callsites *cs, __u64 id)
{
	const struct cp_callsite *c = id && id <= cs->nr ? &cs->sites[id - 1] : NULL;

	return c && c->same_as ? c->same_as : id;
}

size_t cp_callsites__count(const struct cp_callsites *cs)
{
	return cs->nr;
}

__u64 cp_callsites__dropped(const struct cp_callsites *cs)
{
	return cs->dropped;
}

static int grow_frames(struct cp_callsites *cs, size_t n)
{
	size_t cap = cs->cap_frames ? cs->cap_frames : 256;
	__u64 *f;

	if (cs->nr_frames + n > CP_CALLSITE_FRAMES_CAP)
		return -ENOSPC;
	if (cs->nr_frames + n <= cs->cap_frames)
		return 0;
	while (cap < cs->nr_frames + n)
		cap *= 2;
	if (cap > CP_CALLSITE_FRAMES_CAP)
		cap = CP_CALLSITE_FRAMES_CAP;
	f = realloc(cs->frames, cap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	cs->frames = f;
	cs->cap_frames = cap;
	return 0;
}

int cp_callsites__set_frames(struct cp_callsites *cs, __u64 id, const __u64 *ips, size_t n)
{
	struct cp_callsite *c = id && id <= cs->nr ? &cs->sites[id - 1] : NULL;
	int err;

	if (!c)
		return -ENOENT;
	if (c->stack_read)
		return 0;
	c->stack_read = true;
	if (n > CP_CALLSITE_MAX_FRAMES)
		n = CP_CALLSITE_MAX_FRAMES;
	if (!n)
		return 0;
	err = grow_frames(cs, n);
	if (err) {
		cs->frames_dropped++;
		return err;
	}
	memcpy(cs->frames + cs->nr_frames, ips, n * sizeof(*ips));
	c->frames_at = (__u32)cs->nr_frames;
	c->nr_frames = (__u16)n;
	cs->nr_frames += n;
	return 0;
}

static size_t hash_frames(__u64 caller, const __u64 *ips, size_t n)
{
	__u64 h = cp_hash64(caller);

	for (size_t i = 0; i < n; i++)
		h = cp_hash64(h ^ ips[i]);
	return (size_t)cp_hash_mix(h, 31, 29);
}

/* The fslots slot of (@caller, @ips, @n): the site's with them, or an empty one. */
static size_t probe_frames(const struct cp_callsites *cs, __u64 caller, const __u64 *ips, size_t n)
{
	size_t mask = cs->nr_fslots - 1, i = cp_hash_slot(hash_frames(caller, ips, n), 0, mask);

	while (cs->fslots[i]) {
		const struct cp_callsite *c = &cs->sites[cs->fslots[i] - 1];

		if (c->caller == caller && c->nr_frames == n &&
		    !memcmp(cs->frames + c->frames_at, ips, n * sizeof(*ips)))
			break;
		i = cp_probe_next(i, mask);
	}
	return i;
}

/* Room in fslots for one more site; -ENOMEM if none. */
static int grow_fslots(struct cp_callsites *cs)
{
	size_t n = cs->nr_fslots ? cs->nr_fslots * 2 : 64;
	__u32 *slots, *old = cs->fslots;

	if ((cs->nr_fsites + 1) * 2 <= cs->nr_fslots)
		return 0;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	cs->fslots = slots;
	cs->nr_fslots = n;
	for (size_t i = 0; i < cs->nr; i++) {
		const struct cp_callsite *c = &cs->sites[i];

		if (c->nr_frames && !c->same_as)
			slots[probe_frames(cs, c->caller, cs->frames + c->frames_at,
					   c->nr_frames)] = (__u32)i + 1;
	}
	free(old);
	return 0;
}

__u64 cp_callsites__set_stack(struct cp_callsites *cs, __u64 id, const __u64 *ips, size_t n)
{
	struct cp_callsite *c = id && id <= cs->nr ? &cs->sites[id - 1] : NULL;
	size_t i;

	if (!c)
		return 0;
	if (c->same_as)
		return c->same_as;
	if (n > CP_CALLSITE_MAX_FRAMES)
		n = CP_CALLSITE_MAX_FRAMES;
	if (c->stack_read || !n || grow_fslots(cs)) {
		cp_callsites__set_frames(cs, id, ips, n);
		return id;
	}
	i = probe_frames(cs, c->caller, ips, n);
	if (cs->fslots[i] && cs->fslots[i] != id) {
		c->stack_read = true;
		c->same_as = cs->fslots[i];
		return c->same_as;
	}
	if (cp_callsites__set_frames(cs, id, ips, n) == 0 && c->nr_frames) {
		cs->fslots[i] = (__u32)id;
		cs->nr_fsites++;
	}
	return id;
}

const __u64 *cp_callsites__frames(const struct cp_callsites *cs, __u64 id, size_t *n)
{
	const struct cp_callsite *c = cp_callsites__get(cs, id);

	*n = c ? c->nr_frames : 0;
	return *n ? cs->frames + c->frames_at : NULL;
}

__u64 cp_callsites__frames_dropped(const struct cp_callsites *cs)
{
	return cs->frames_dropped;
}
