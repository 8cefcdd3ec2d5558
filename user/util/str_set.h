/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A set of interned strings: one copy of each, carved from chunks of
 * CP_STR_SET_CHUNK bytes, found by an open-addressing table at most half
 * full. Pure; bounded by its user, who reads @bytes and frees the whole set
 * when it is too much (the symbolizer's --max-memory share). Zeroed is
 * empty.
 */
#ifndef CP_STR_SET_H
#define CP_STR_SET_H

#include <stddef.h>
#include <linux/types.h>

#define CP_STR_SET_CHUNK (64u << 10)

struct cp_str_set {
	const char **slots;
	size_t cap; /* power of two */
	size_t nr;
	char **chunks;
	size_t nr_chunks;
	size_t chunk_used; /* in the last chunk */
	__u64 bytes;	   /* of the strings held, their NULs counted */
};

/*
 * The set's one copy of @str, added when new (NULL stays NULL); NULL with
 * *@err = -ENOMEM when out of memory (*@err is left alone otherwise, so
 * that several calls report one failure). Valid until cp_str_set_free().
 */
const char *cp_str_set_intern(struct cp_str_set *t, const char *str, int *err);

/* Frees every string and leaves @t empty. */
void cp_str_set_free(struct cp_str_set *t);

#endif /* CP_STR_SET_H */
