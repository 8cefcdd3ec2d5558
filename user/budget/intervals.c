// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The overhead budget's estimate per interval. */
#include <string.h>

#include "budget/intervals.h"

void cp_budget_intervals_init(struct cp_budget_intervals *iv, __u64 start_ns)
{
	memset(iv, 0, sizeof(*iv));
	iv->start_ns = start_ns;
	iv->next_ns = start_ns;
}

bool cp_budget_intervals_due(const struct cp_budget_intervals *iv, __u64 now_ns)
{
	return now_ns >= iv->next_ns;
}

/* @a less @b, count by count (a count that went back: 0). */
static void counts_between(const struct cp_budget_cpu_counts *a,
			   const struct cp_budget_cpu_counts *b, struct cp_budget_cpu_counts *out)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 *o = (__u64 *)out;

	_Static_assert(sizeof(*a) % sizeof(__u64) == 0, "cp_budget_cpu_counts is all __u64");
	for (size_t i = 0; i < sizeof(*a) / sizeof(__u64); i++)
		o[i] = x[i] > y[i] ? x[i] - y[i] : 0;
}

__u32 cp_budget_interval_ppm(const struct cp_unit_costs *u, const struct cp_budget_cpu_counts *c,
			     __u64 cpu_ns)
{
	__u64 ns = cp_budget_counts_ns(u, c);

	if (!cpu_ns)
		return ns ? CP_PPM : 0;
	return cp_budget_ppm_against(ns, cpu_ns);
}

/* The interval from reading @from to @to, priced with @u. */
static void interval_of(const struct cp_budget_intervals *iv, const struct cp_budget_reading *from,
			const struct cp_budget_reading *to, const struct cp_unit_costs *u,
			struct cp_budget_interval *out)
{
	out->from_ns = from->at_ns - iv->start_ns;
	out->to_ns = to->at_ns - iv->start_ns;
	out->cpu_ns = to->cpu_ns > from->cpu_ns ? to->cpu_ns - from->cpu_ns : 0;
	counts_between(&to->c, &from->c, &out->c);
	out->ppm = cp_budget_interval_ppm(u, &out->c, out->cpu_ns);
}

void cp_budget_intervals_add(struct cp_budget_intervals *iv, const struct cp_unit_costs *u,
			     __u32 budget_ppm, const struct cp_budget_reading *r)
{
	const __u32 cap = CP_BUDGET_STEPS + 1;
	struct cp_budget_reading from;
	bool ends = false;

	iv->next_ns = r->at_ns + CP_BUDGET_STEP_NS;
	/*
	 * The readings an interval or more before this one go, the latest of
	 * them starts the interval: readings a step apart, so the ring keeps
	 * at most the CP_BUDGET_STEPS of the last interval and this one
	 */
	while (iv->nr && r->at_ns - iv->ring[iv->head].at_ns >= CP_BUDGET_INTERVAL_NS) {
		from = iv->ring[iv->head];
		ends = true;
		iv->head = (iv->head + 1) % cap;
		iv->nr--;
	}
	if (ends) {
		struct cp_budget_interval in;

		interval_of(iv, &from, r, u, &in);
		iv->count++;
		if (budget_ppm && in.ppm > budget_ppm)
			iv->over++;
		if (iv->count == 1 || in.ppm > iv->worst.ppm)
			iv->worst = in;
	}
	if (iv->nr == cap) {
		iv->head = (iv->head + 1) % cap;
		iv->nr--;
	}
	iv->ring[(iv->head + iv->nr) % cap] = *r;
	iv->nr++;
}

bool cp_budget_intervals_worst(const struct cp_budget_intervals *iv, const struct cp_unit_costs *u,
			       struct cp_budget_interval *out)
{
	if (!iv->count)
		return false;
	*out = iv->worst;
	out->ppm = cp_budget_interval_ppm(u, &out->c, out->cpu_ns);
	return true;
}
