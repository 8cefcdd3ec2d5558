// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "live/alloc_guard.h"

void cp_alloc_guard_cfg_init(struct cp_alloc_guard_cfg *cfg, __u64 max_rate)
{
	cfg->max_rate = max_rate;
	cfg->interval_ns = CP_GUARD_INTERVAL_NS;
	cfg->backoff_ns = CP_GUARD_BACKOFF_NS;
	cfg->max_backoff_ns = CP_GUARD_MAX_BACKOFF_NS;
}

void cp_alloc_guard_init(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			 __u64 now_ns)
{
	memset(g, 0, sizeof(*g));
	g->window_start_ns = now_ns;
	g->next_backoff_ns = cfg->backoff_ns;
}

enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 now_ns)
{
	__u64 elapsed;

	if (g->backed_off) {
		if (now_ns < g->until_ns)
			return CP_GUARD_NONE;
		g->backed_off = false;
		g->backoff_total_ns += now_ns - g->since_ns;
		g->window_start_ns = now_ns;
		g->window_calls = 0;
		return CP_GUARD_ATTACH;
	}
	if (!cfg->max_rate)
		return CP_GUARD_NONE;
	g->window_calls += calls;
	if (now_ns <= g->window_start_ns)
		return CP_GUARD_NONE;
	elapsed = now_ns - g->window_start_ns;
	if (elapsed < cfg->interval_ns)
		return CP_GUARD_NONE;
	/* 128 bits: a million calls times 1e9 already passes 2^64 / 1e4 */
	g->last_rate = (__u64)((unsigned __int128)g->window_calls * 1000000000u / elapsed);
	g->window_start_ns = now_ns;
	g->window_calls = 0;
	if (g->last_rate > cfg->max_rate) {
		g->backed_off = true;
		g->since_ns = now_ns;
		g->until_ns = now_ns + g->next_backoff_ns;
		g->backoffs++;
		g->next_backoff_ns *= 2;
		if (g->next_backoff_ns > cfg->max_backoff_ns)
			g->next_backoff_ns = cfg->max_backoff_ns;
		return CP_GUARD_DETACH;
	}
	if (g->last_rate < cfg->max_rate / 2) {
		g->next_backoff_ns /= 2;
		if (g->next_backoff_ns < cfg->backoff_ns)
			g->next_backoff_ns = cfg->backoff_ns;
	}
	return CP_GUARD_NONE;
}
