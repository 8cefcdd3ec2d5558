// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "budget/alloc_guard.h"

void cp_alloc_guard_cfg_init(struct cp_alloc_guard_cfg *cfg, __u64 max_rate)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_rate = max_rate;
	cfg->interval_ns = CP_GUARD_INTERVAL_NS;
	cfg->backoff_ns = CP_GUARD_BACKOFF_NS;
	cfg->max_backoff_ns = CP_GUARD_MAX_BACKOFF_NS;
	cfg->window_ns = CP_GUARD_BUDGET_WINDOW_NS;
}

void cp_alloc_guard_init(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			 __u64 now_ns)
{
	memset(g, 0, sizeof(*g));
	g->window_start_ns = now_ns;
	g->cpu_ppm = 1000000u; /* one CPU until a window says */
	g->next_backoff_ns = cfg->backoff_ns;
}

/*
 * The CPUs' worth of time the target ran in a window of @elapsed ns in which
 * it used @cpu_ns, in ppm of one CPU; at least CP_GUARD_MIN_CPU_PPM, so that
 * a target that barely ran (or whose time could not be read) still gets
 * windows, short ones.
 */
static __u64 cpu_ppm_of(__u64 cpu_ns, __u64 elapsed)
{
	__u64 ppm = (__u64)((unsigned __int128)cpu_ns * 1000000u / elapsed);

	return ppm < CP_GUARD_MIN_CPU_PPM ? CP_GUARD_MIN_CPU_PPM : ppm;
}

/* Wall time in which a target running @cpu_ppm of a CPU gives @spent_ns its budget share. */
static __u64 span_for(const struct cp_alloc_guard_cfg *cfg, __u64 spent_ns, __u64 cpu_ppm)
{
	unsigned __int128 span =
		(unsigned __int128)spent_ns * 1000000u * 1000000u / cfg->budget_ppm / cpu_ppm;

	return span > ~0ull ? ~0ull : (__u64)span;
}

/*
 * The time off after a window of @elapsed ns that spent @spent_ns of the
 * target's time: long enough that the window and the time off together
 * hold CPU time of which @spent_ns is budget_ppm, at the window's CPU rate.
 */
static __u64 budget_off_ns(const struct cp_alloc_guard_cfg *cfg, __u64 spent_ns, __u64 cpu_ppm,
			   __u64 elapsed)
{
	__u64 span = span_for(cfg, spent_ns, cpu_ppm);

	if (span <= elapsed)
		return 0;
	span -= elapsed;
	return span > cfg->max_backoff_ns ? cfg->max_backoff_ns : span;
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
		/*
		 * Detached probes go one by one (~60 ms each, live/link_reaper.h)
		 * and fire until then: what they cost meanwhile lengthens the time
		 * off, as if it had been spent in the window (on one CPU's time).
		 */
		if (cfg->budget_ppm && cfg->call_ns && calls)
			g->until_ns += span_for(cfg, calls * cfg->call_ns, g->cpu_ppm);
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
	if (elapsed < (cfg->budget_ppm ? cfg->window_ns : cfg->interval_ns))
		return CP_GUARD_NONE;
	/* 128 bits: a million calls times 1e9 already passes 2^64 / 1e4 */
	g->last_rate = (__u64)((unsigned __int128)g->window_calls * 1000000000u / elapsed);
	g->cpu_ppm = cpu_ppm_of(g->window_cpu_ns, elapsed);
	if (cfg->budget_ppm && cfg->call_ns)
		budget_off =
			budget_off_ns(cfg, g->window_calls * cfg->call_ns, g->cpu_ppm, elapsed);
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

__u64 cp_alloc_guard_next_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	if (g->backed_off)
		return g->until_ns;
	if (!cfg->max_rate && !cfg->budget_ppm)
		return 0;
	return g->window_start_ns + (cfg->budget_ppm ? cfg->window_ns : cfg->interval_ns);
}
