// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The overhead budget's plan and estimates. */
#include <string.h>

#include "budget/budget.h"

/* Events per second whose cost @unit_ns each fills @ppm of a CPU. */
static __u64 rate_for(__u32 ppm, __u64 unit_ns)
{
	return (__u64)ppm * 1000u / unit_ns;
}

/* What @rate events per second of @unit_ns each cost a CPU, in ppm. */
static __u32 ppm_for(__u64 rate, __u64 unit_ns)
{
	__u64 ppm = rate * unit_ns / 1000u;

	return ppm > CP_PPM ? CP_PPM : (__u32)ppm;
}

void cp_budget_plan(__u32 budget_ppm, const struct cp_unit_costs *u, bool soft, __u32 freq_hz,
		    __u32 bp_rate, struct cp_budget_plan *out)
{
	__u32 spent;

	memset(out, 0, sizeof(*out));
	out->budget_ppm = budget_ppm;
	out->soft_freq_asked_hz = soft ? freq_hz : 0;
	out->soft_freq_hz = out->soft_freq_asked_hz;
	out->bp_rate_asked = bp_rate;
	out->bp_rate = bp_rate;
	if (!budget_ppm)
		return;
	if (soft && u->tick_ns) {
		__u64 max = rate_for(budget_ppm / CP_BUDGET_TICK_SHARE, u->tick_ns);

		if (max < CP_BUDGET_MIN_SOFT_HZ)
			max = CP_BUDGET_MIN_SOFT_HZ;
		if (out->soft_freq_hz > max)
			out->soft_freq_hz = (__u32)max;
		out->tick_ppm = ppm_for(out->soft_freq_hz, u->tick_ns);
	}
	if (bp_rate && u->bp_hit_ns) {
		__u64 max = rate_for(budget_ppm / CP_BUDGET_BP_SHARE, u->bp_hit_ns);

		if (out->bp_rate > max)
			out->bp_rate = (__u32)max;
		out->bp_ppm = ppm_for(out->bp_rate, u->bp_hit_ns);
	}
	spent = out->tick_ppm + out->bp_ppm;
	out->alloc_ppm = spent < budget_ppm ? budget_ppm - spent : 0;
}

void cp_budget_estimate(const struct cp_unit_costs *u, struct cp_budget_spent *s)
{
	s->ticks_ns = s->ticks * u->tick_ns;
	s->bp_ns = s->bp_hits * u->bp_hit_ns;
	s->alloc_ns = s->alloc_calls * cp_unit_call_ns(u);
}

__u32 cp_budget_ppm_of(const struct cp_budget_spent *s, __u64 ns)
{
	unsigned __int128 ppm;

	if (!s->target_cpu_ns)
		return 0;
	ppm = (unsigned __int128)ns * CP_PPM / s->target_cpu_ns;
	return ppm > CP_PPM ? CP_PPM : (__u32)ppm;
}
