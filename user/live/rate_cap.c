// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sample-rate cap decision: pure arithmetic over one CPU's or thread's events. */
#include <stdbool.h>
#include <string.h>

#include "live/rate_cap.h"

#define NSEC_PER_SEC 1000000000ull

void cp_rate_cap_cfg_init(struct cp_rate_cap_cfg *cfg, __u64 max_rate)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_rate = max_rate;
	cfg->headroom_pct = CP_RATE_HEADROOM_PCT;
	cfg->lower_below_pct = CP_RATE_LOWER_BELOW_PCT;
}

__u64 cp_rate_cap_limit(__u64 user_max, __u64 kernel_max)
{
	__u64 k = kernel_max * CP_RATE_KERNEL_SHARE_PCT / 100;

	if (!kernel_max)
		return user_max;
	if (!k)
		k = 1;
	return user_max && user_max < k ? user_max : k;
}

__u64 cp_rate_samples(__u64 prev_count, __u64 count, __u64 period)
{
	if (!period || count < prev_count)
		return 0;
	return (count - prev_count) / period;
}

/* ceil(period * rate / target), aligned up, clamped to [base, max]. */
static __u64 scaled_period(const struct cp_rate_event *e, __u64 rate, __u64 target)
{
	unsigned __int128 p = ((unsigned __int128)e->period * rate + target - 1) / target;
	__u64 align = e->align ? e->align : 1, max = e->max_period ? e->max_period : ~0ull;

	if (p > max)
		p = max;
	if (p % align) {
		p += align - p % align;
		if (p > max)
			p -= align;
	}
	if (p < e->base_period)
		p = e->base_period;
	return (__u64)p;
}

int cp_rate_cap_decide(const struct cp_rate_cap_cfg *cfg, struct cp_rate_unit *u, __u64 elapsed_ns,
		       __u64 *rate_out)
{
	unsigned __int128 total = 0;
	__u64 rate, target;
	bool raise, lower = false;
	int changed = 0;

	for (int i = 0; i < u->nr; i++) {
		u->ev[i].new_period = u->ev[i].period;
		total += u->ev[i].samples;
	}
	if (!elapsed_ns) {
		if (rate_out)
			*rate_out = 0;
		return 0;
	}
	total = total * NSEC_PER_SEC / elapsed_ns;
	rate = total > ~0ull ? ~0ull : (__u64)total;
	if (rate_out)
		*rate_out = rate;
	if (!cfg->max_rate)
		return 0;

	target = cfg->max_rate * 100 / (100 + cfg->headroom_pct);
	if (!target)
		target = 1;
	raise = rate > cfg->max_rate;
	if (!raise && (unsigned __int128)rate * 100 <
			      (unsigned __int128)cfg->max_rate * cfg->lower_below_pct) {
		for (int i = 0; i < u->nr; i++)
			lower |= u->ev[i].period > u->ev[i].base_period;
	}
	if (!raise && !lower)
		return 0;

	for (int i = 0; i < u->nr; i++) {
		struct cp_rate_event *e = &u->ev[i];
		__u64 p = scaled_period(e, rate, target);

		/* a raise never lowers and a lowering never raises another event */
		if ((raise && p <= e->period) || (!raise && p >= e->period))
			continue;
		e->new_period = p;
		changed++;
	}
	return changed;
}
