// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LRU models by stack distance: an LRU cache of C lines hits an access
 * exactly when fewer than C distinct other lines were used since the
 * previous access to its line; per set with C = ways for the
 * set-associative cache, over all lines with C = sets x ways for the
 * fully-associative one. Exact, and O(n x lines) for n accesses: histories
 * are 64 long.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "classify/lru_model.h"

int cp_lru_simulate(const struct cp_lru_geom *g, const __u64 *addrs, size_t n,
		    struct cp_lru_result *out)
{
	__u64 line[CP_LRU_MAX_ACCESSES];
	size_t last[CP_LRU_MAX_ACCESSES];
	__u64 capacity;
	size_t nr = 0;

	memset(out, 0, sizeof(*out));
	if (!g->line_bytes || !g->sets || !g->ways)
		return -EINVAL;
	if (n > CP_LRU_MAX_ACCESSES)
		return -E2BIG;
	capacity = (__u64)g->sets * g->ways;
	for (size_t i = 0; i < n; i++) {
		__u64 l = addrs[i] / g->line_bytes;
		__u64 newer = 0, newer_in_set = 0;
		size_t k = 0;
		bool sa_miss, fa_miss;

		while (k < nr && line[k] != l)
			k++;
		out->accesses++;
		if (k == nr) {
			line[nr] = l;
			last[nr++] = i;
			out->compulsory++;
			out->sa_misses++;
			out->fa_misses++;
			continue;
		}
		for (size_t j = 0; j < nr; j++) {
			if (last[j] <= last[k])
				continue;
			newer++;
			newer_in_set += line[j] % g->sets == l % g->sets;
		}
		sa_miss = newer_in_set >= g->ways;
		fa_miss = newer >= capacity;
		out->sa_misses += sa_miss;
		out->fa_misses += fa_miss;
		out->conflict += sa_miss && !fa_miss;
		last[k] = i;
	}
	out->lines = (__u32)nr;
	return 0;
}

double cp_lru_conflict_share(const struct cp_lru_result *r)
{
	return r->sa_misses ? (double)r->conflict / (double)r->sa_misses : 0.0;
}

double cp_lru_reuse_conflict_share(const struct cp_lru_result *r)
{
	__u32 reuse = r->sa_misses - r->compulsory;

	return reuse ? (double)r->conflict / (double)reuse : -1.0;
}
