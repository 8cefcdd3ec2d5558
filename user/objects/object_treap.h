/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The object store's huge level (object_store.c): objects that cross a
 * chunk boundary, few, in a treap ordered by start (random priorities
 * keep it balanced without rotations). The nodes belong to the caller,
 * which allocates them; merge and split relink them. Pure.
 */
#ifndef CP_OBJECT_TREAP_H
#define CP_OBJECT_TREAP_H

#include <linux/types.h>

struct cp_treap {
	__u64 start; /* first byte of the object */
	__u32 idx;   /* its node in the store's pool */
	__u32 prio;  /* heap order: a parent's is higher */
	struct cp_treap *l, *r;
};

/* One treap of @a's keys, all below @b's, and @b's. */
struct cp_treap *cp_treap_merge(struct cp_treap *a, struct cp_treap *b);

/* @l gets the keys below @key, @r the others. */
void cp_treap_split(struct cp_treap *t, __u64 key, struct cp_treap **l, struct cp_treap **r);

/* The node with the greatest start <= @addr, or NULL. */
struct cp_treap *cp_treap_floor(struct cp_treap *t, __u64 addr);

/* The node with the least start > @key, or NULL. */
struct cp_treap *cp_treap_after(struct cp_treap *t, __u64 key);

/* Frees every node of @t. */
void cp_treap_free(struct cp_treap *t);

#endif /* CP_OBJECT_TREAP_H */
