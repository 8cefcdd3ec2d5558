// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Leaf-only stacks from an instruction store (see stack_source.h). */
#include <errno.h>
#include <stdlib.h>

#include "export/stack_source.h"

int cp_insn_stacks(const struct cp_insn_store *s, cp_stack_fn fn, void *ctx)
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

		ret = fn(ctx, v[i]->key.tgid, &v[i]->key.ip, 1, &sc);
	}
	free(v);
	return ret;
}
