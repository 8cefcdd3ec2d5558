// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kept copies of targets' files: the pure bookkeeping (copy_cache.h). */
#include <string.h>

#include "machine/copy_cache.h"

void cp_copy_cache_init(struct cp_copy_cache *c, size_t max_entries, __u64 max_bytes)
{
	memset(c, 0, sizeof(*c));
	c->max_entries = max_entries < CP_COPY_CACHE_ENTRIES ? max_entries : CP_COPY_CACHE_ENTRIES;
	c->max_bytes = max_bytes;
	for (size_t i = 0; i < CP_COPY_CACHE_ENTRIES; i++)
		c->e[i].handle = -1;
}

bool cp_copy_key_equal(const struct cp_copy_key *a, const struct cp_copy_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns && a->no_code == b->no_code;
}

/* Whether a copy of @have serves a reader of @want: the same content, the code too if asked. */
static bool serves(const struct cp_copy_key *have, const struct cp_copy_key *want)
{
	struct cp_copy_key h = *have;

	if (h.no_code && !want->no_code)
		return false;
	h.no_code = want->no_code;
	return cp_copy_key_equal(&h, want);
}

/* The handle kept for @key, made the most recently used and counted a hit; -1: none. */
static int hit(struct cp_copy_cache *c, const struct cp_copy_key *key)
{
	for (size_t i = 0; key->ino && i < c->max_entries; i++) {
		struct cp_copy_entry *e = &c->e[i];

		if (e->handle >= 0 && serves(&e->key, key)) {
			e->last_use = ++c->clock;
			c->stats.hits++;
			return e->handle;
		}
	}
	return -1;
}

int cp_copy_cache_find(struct cp_copy_cache *c, const struct cp_copy_key *key)
{
	int h = hit(c, key);

	if (h < 0)
		c->stats.misses++;
	return h;
}

int cp_copy_cache_probe(struct cp_copy_cache *c, const struct cp_copy_key *key)
{
	return hit(c, key);
}

/* Takes slot @i's copy out: its handle to @out_handles. */
static void take_out(struct cp_copy_cache *c, size_t i, int *out_handles, size_t *nr_out)
{
	struct cp_copy_entry *e = &c->e[i];

	out_handles[(*nr_out)++] = e->handle;
	c->stats.evictions++;
	c->stats.held--;
	c->stats.held_bytes -= e->bytes;
	memset(e, 0, sizeof(*e));
	e->handle = -1;
}

/* The least recently used kept copy's slot, or -1 when none is kept. */
static int oldest(const struct cp_copy_cache *c)
{
	int best = -1;

	for (size_t i = 0; i < c->max_entries; i++)
		if (c->e[i].handle >= 0 && (best < 0 || c->e[i].last_use < c->e[best].last_use))
			best = (int)i;
	return best;
}

int cp_copy_cache_make_room(struct cp_copy_cache *c, __u64 bytes, int *out_handles, size_t *nr_out)
{
	*nr_out = 0;
	if (!c->max_entries || bytes > c->max_bytes)
		return -1;
	while (c->stats.held_bytes + bytes > c->max_bytes || c->stats.held >= c->max_entries)
		take_out(c, (size_t)oldest(c), out_handles, nr_out);
	for (size_t i = 0; i < c->max_entries; i++)
		if (c->e[i].handle < 0)
			return (int)i;
	return -1; /* not reached: held < max_entries leaves a free slot */
}

void cp_copy_cache_put(struct cp_copy_cache *c, int slot, const struct cp_copy_key *key, int handle,
		       __u64 bytes)
{
	c->e[slot] = (struct cp_copy_entry){
		.key = *key,
		.handle = handle,
		.bytes = bytes,
		.last_use = ++c->clock,
	};
	c->stats.held++;
	c->stats.held_bytes += bytes;
}

size_t cp_copy_cache_drain(struct cp_copy_cache *c, int *out_handles)
{
	size_t n = 0;

	for (size_t i = 0; i < c->max_entries; i++)
		if (c->e[i].handle >= 0)
			take_out(c, i, out_handles, &n);
	return n;
}
