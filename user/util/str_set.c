// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Interned strings (str_set.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/str_set.h"

static __u64 hash_str(const char *s)
{
	__u64 h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static char *carve(struct cp_str_set *t, size_t len)
{
	size_t cap = len > CP_STR_SET_CHUNK ? len : CP_STR_SET_CHUNK;
	char **chunks;

	if (t->nr_chunks && t->chunk_used + len <= CP_STR_SET_CHUNK) {
		t->chunk_used += len;
		return t->chunks[t->nr_chunks - 1] + t->chunk_used - len;
	}
	chunks = realloc(t->chunks, (t->nr_chunks + 1) * sizeof(*chunks));
	if (!chunks)
		return NULL;
	t->chunks = chunks;
	chunks[t->nr_chunks] = malloc(cap);
	if (!chunks[t->nr_chunks])
		return NULL;
	t->chunk_used = len;
	return chunks[t->nr_chunks++];
}

static int grow(struct cp_str_set *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	const char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = cp_hash_slot(hash_str(t->slots[i]), 0, cap - 1); slots[j];
		     j = cp_probe_next(j, cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *cp_str_set_intern(struct cp_str_set *t, const char *str, int *err)
{
	size_t i, len;
	char *copy;

	if (!str)
		return NULL;
	if (t->nr * 2 >= t->cap && grow(t)) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = cp_hash_slot(hash_str(str), 0, t->cap - 1); t->slots[i];
	     i = cp_probe_next(i, t->cap - 1))
		if (!strcmp(t->slots[i], str))
			return t->slots[i];
	len = strlen(str) + 1;
	copy = carve(t, len);
	if (!copy) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(copy, str, len);
	t->slots[i] = copy;
	t->nr++;
	t->bytes += len;
	return copy;
}

void cp_str_set_free(struct cp_str_set *t)
{
	for (size_t i = 0; i < t->nr_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
