// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stacks the exports draw (cp_profile__for_each_sample_stack()): every
 * counted call stack, then each instruction no stack was counted for (a
 * recording made before stacks, a stack the BPF maps had no room for) as a
 * stack of itself with its instruction-store totals.
 */
#include <errno.h>
#include <stdlib.h>

#include "profile/profile.h"
#include "profile/sample_stacks.h"

struct leaf_keys {
	struct cp_ip_key *v;
	size_t nr, cap;
	cp_stack_fn fn;
	void *ctx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct cp_ip_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* Passes each stack on and notes its instruction. */
static int note_stack(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
		      const struct cp_stack_counts *c)
{
	struct leaf_keys *k = ctx;

	if (k->nr == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 256;
		struct cp_ip_key *v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	k->v[k->nr++] = (struct cp_ip_key){.tgid = tgid, .ip = pcs[0]};
	return k->fn(k->ctx, tgid, pcs, nr, c);
}

int cp_insn_leaf_stacks(const struct cp_insn_store *s, const struct cp_ip_key *skip, size_t nr_skip,
			cp_stack_fn fn, void *ctx)
{
	size_t n = cp_insn_store__count(s);
	const struct cp_insn **v = calloc(n ? n : 1, sizeof(*v));
	int ret = 0;

	if (!v)
		return -ENOMEM;
	/* most misses first, then samples, then ip: the same order every time */
	n = cp_insn_store__top(s, v, n);
	for (size_t i = 0; i < n && !ret; i++) {
		const struct cp_ip_counts *c = &v[i]->counts;
		struct cp_stack_counts sc = {
			.samples = c->loads + c->stores,
			.misses = c->load_misses + c->store_misses,
			.lat_sum = c->lat_sum,
			.ticks = cp_insn_time_samples(v[i]),
		};
		struct cp_ip_key key = {.tgid = v[i]->key.tgid, .ip = v[i]->key.ip};

		if (nr_skip && bsearch(&key, skip, nr_skip, sizeof(key), cmp_key))
			continue;
		ret = fn(ctx, key.tgid, &key.ip, 1, &sc);
	}
	free(v);
	return ret;
}

int cp_sample_stacks(const struct cp_stack_store *stacks, const struct cp_insn_store *insns,
		     cp_stack_fn fn, void *ctx)
{
	struct leaf_keys k = {.fn = fn, .ctx = ctx};
	int ret = cp_stack_store__for_each(stacks, note_stack, &k);

	if (!ret) {
		qsort(k.v, k.nr, sizeof(*k.v), cmp_key);
		ret = cp_insn_leaf_stacks(insns, k.v, k.nr, fn, ctx);
	}
	free(k.v);
	return ret;
}

int cp_profile__for_each_sample_stack(const struct cp_profile *p, cp_stack_fn fn, void *ctx)
{
	return cp_sample_stacks(p->stacks, p->insns, fn, ctx);
}
