// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>

#include "objects/object_treap.h"

struct cp_treap *cp_treap_merge(struct cp_treap *a, struct cp_treap *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->r = cp_treap_merge(a->r, b);
		return a;
	}
	b->l = cp_treap_merge(a, b->l);
	return b;
}

void cp_treap_split(struct cp_treap *t, __u64 key, struct cp_treap **l, struct cp_treap **r)
{
	if (!t) {
		*l = *r = NULL;
	} else if (t->start < key) {
		cp_treap_split(t->r, key, &t->r, r);
		*l = t;
	} else {
		cp_treap_split(t->l, key, l, &t->l);
		*r = t;
	}
}

struct cp_treap *cp_treap_floor(struct cp_treap *t, __u64 addr)
{
	struct cp_treap *best = NULL;

	while (t) {
		if (t->start <= addr) {
			best = t;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best;
}

struct cp_treap *cp_treap_after(struct cp_treap *t, __u64 key)
{
	struct cp_treap *best = NULL;

	while (t) {
		if (t->start > key) {
			best = t;
			t = t->l;
		} else {
			t = t->r;
		}
	}
	return best;
}

void cp_treap_free(struct cp_treap *t)
{
	/* down the right spine by iteration: recursion on the left only */
	while (t) {
		struct cp_treap *r = t->r;

		cp_treap_free(t->l);
		free(t);
		t = r;
	}
}
