// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "budget/alloc_guard.h"

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

/*
 * The time off after a window of @elapsed ns that spent @spent_ns of the
 * target's time while it used @cpu_ns: long enough that the window and the
 * time off together hold CPU time of which @spent_ns is budget_ppm.
 */
static __u64 budget_off_ns(const struct cp_alloc_guard_cfg *cfg, __u64 spent_ns, __u64 cpu_ns,
			   __u64 elapsed)
{
	unsigned __int128 span;

	/* an idle target is charged as one CPU: its calls still cost that */
	if (cpu_ns < elapsed)
		cpu_ns = elapsed;
	/* span = spent / budget / (cpu / elapsed): wall time the spending must spread over */
	span = (unsigned __int128)spent_ns * 1000000u * elapsed / cfg->budget_ppm / cpu_ns;
	if (span <= elapsed)
		return 0;
	span -= elapsed;
	return span > cfg->max_backoff_ns ? cfg->max_backoff_ns : (__u64)span;
}

/* Detaches for @off_ns from @now_ns. */
static enum cp_guard_action back_off(struct cp_alloc_guard *g, __u64 off_ns, __u64 now_ns)
{
	g->backed_off = true;
	g->since_ns = now_ns;
	g->until_ns = now_ns + off_ns;
	g->backoffs++;
	return CP_GUARD_DETACH;
}

enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 cpu_ns, __u64 now_ns)
{
	__u64 elapsed, rate_off = 0, budget_off = 0;

	if (g->backed_off) {
		if (now_ns < g->until_ns)
			return CP_GUARD_NONE;
		g->backed_off = false;
		g->backoff_total_ns += now_ns - g->since_ns;
		g->window_start_ns = now_ns;
		g->window_calls = 0;
		g->window_cpu_ns = 0;
		return CP_GUARD_ATTACH;
	}
	if (!cfg->max_rate && !cfg->budget_ppm)
		return CP_GUARD_NONE;
	g->window_calls += calls;
	g->window_cpu_ns += cpu_ns;
	if (now_ns <= g->window_start_ns)
		return CP_GUARD_NONE;
	elapsed = now_ns - g->window_start_ns;
	if (elapsed < cfg->interval_ns)
		return CP_GUARD_NONE;
	/* 128 bits: a million calls times 1e9 already passes 2^64 / 1e4 */
	g->last_rate = (__u64)((unsigned __int128)g->window_calls * 1000000000u / elapsed);
	if (cfg->budget_ppm && cfg->call_ns)
		budget_off = budget_off_ns(cfg, g->window_calls * cfg->call_ns, g->window_cpu_ns,
					   elapsed);
	g->attached_ns += elapsed;
	g->window_start_ns = now_ns;
	g->window_calls = 0;
	g->window_cpu_ns = 0;
	if (cfg->max_rate && g->last_rate > cfg->max_rate) {
		rate_off = g->next_backoff_ns;
		g->next_backoff_ns *= 2;
		if (g->next_backoff_ns > cfg->max_backoff_ns)
			g->next_backoff_ns = cfg->max_backoff_ns;
	} else if (cfg->max_rate && g->last_rate < cfg->max_rate / 2) {
		g->next_backoff_ns /= 2;
		if (g->next_backoff_ns < cfg->backoff_ns)
			g->next_backoff_ns = cfg->backoff_ns;
	}
	if (budget_off >= CP_GUARD_MIN_OFF_NS && budget_off > rate_off) {
		g->budget_offs++;
		return back_off(g, budget_off, now_ns);
	}
	if (rate_off)
		return back_off(g, rate_off, now_ns);
	return CP_GUARD_NONE;
}
