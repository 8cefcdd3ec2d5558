// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF counters: deltas and levels. */
#include <stddef.h>
#include <stdio.h>

#include "profile/bpf_stats.h"

void cp_stats_delta(const struct cp_stats *now, const struct cp_stats *then, struct cp_stats *out)
{
	const __u64 *a = (const __u64 *)now, *b = (const __u64 *)then;
	__u64 *o = (__u64 *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(__u64); i++)
		o[i] = a[i] >= b[i] ? a[i] - b[i] : 0;
}

bool cp_stats_levels_unknown(const struct cp_stats *b)
{
	__u64 samples = b->samples[CP_ACCESS_LOAD] + b->samples[CP_ACCESS_STORE];
	__u64 na = b->na[CP_ACCESS_LOAD] + b->na[CP_ACCESS_STORE];

	return samples && na == samples;
}

bool cp_stats_pmu_blind(const struct cp_stats *b, bool ibs)
{
	__u64 samples = b->samples[CP_ACCESS_LOAD] + b->samples[CP_ACCESS_STORE];
	__u64 blind = b->na[CP_ACCESS_LOAD] + b->na[CP_ACCESS_STORE];

	if (!ibs) {
		samples += b->not_mem;
		blind += b->not_mem;
	}
	return samples >= CP_BLIND_MIN_SAMPLES && blind * 100 >= samples * CP_BLIND_PCT;
}

void cp_live_drops_add_prog(struct cp_live_drops *d, const char *name, __u64 misses)
{
	struct cp_prog_misses p = {.misses = misses};
	__u32 i;

	if (!misses)
		return;
	d->recursion_misses += misses;
	snprintf(p.name, sizeof(p.name), "%s", name ? name : "?");
	for (i = d->nr_progs; i > 0 && d->progs[i - 1].misses < misses; i--)
		if (i < CP_MAX_PROG_DROPS)
			d->progs[i] = d->progs[i - 1];
	if (i >= CP_MAX_PROG_DROPS)
		return;
	d->progs[i] = p;
	if (d->nr_progs < CP_MAX_PROG_DROPS)
		d->nr_progs++;
}
