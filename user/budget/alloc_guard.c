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
	cfg->window_ns = CP_GUARD_MIN_WINDOW_NS;
	cfg->max_cpu_ppm = 1000000u;
}

static bool budgeted(const struct cp_alloc_guard_cfg *cfg)
{
	return cfg->budget_ppm && cfg->call_ns;
}

/* @ns at @ppm of a CPU: what a target spends or earns in @ns of wall time. */
static __u64 at_ppm(__u64 ns, __u64 ppm)
{
	unsigned __int128 v = (unsigned __int128)ns * ppm / 1000000u;

	return v > ~0ull ? ~0ull : (__u64)v;
}

/* Wall time in which @ns are spent or earned at @ppm of a CPU (at least 1 ns). */
static __u64 ns_at_ppm(__u64 ns, __u64 ppm)
{
	unsigned __int128 v = ppm ? (unsigned __int128)ns * 1000000u / ppm : ~0ull;

	return v > ~0ull ? ~0ull : v ? (__u64)v : 1;
}

/* The worst rate the target can spend at while attached, in ppm of a CPU. */
static __u64 worst_ppm(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__u64 cpus = cfg->max_cpu_ppm ? cfg->max_cpu_ppm : 1000000u;

	return g->spend_ppm > cpus ? g->spend_ppm : cpus;
}

/* What the account holds now (0 when overdrawn). */
static __u64 balance(const struct cp_alloc_guard *g)
{
	return g->earned_ns > g->spent_ns ? g->earned_ns - g->spent_ns : 0;
}

/* What a window must find in the account to open: the shortest window at the worst rate. */
static __u64 window_price(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	return at_ppm(cfg->window_ns, worst_ppm(g, cfg));
}

void cp_alloc_guard_init(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			 __u64 now_ns)
{
	memset(g, 0, sizeof(*g));
	g->window_start_ns = now_ns;
	g->cpu_ppm = 1000000u; /* one CPU until a window says */
	g->next_backoff_ns = cfg->backoff_ns;
	/* the initial credit: the shortest window, whatever the target does in it */
	if (budgeted(cfg))
		g->earned_ns = window_price(g, cfg);
}

/*
 * The CPUs' worth of time the target ran in a window of @elapsed ns in which
 * it used @cpu_ns, in ppm of one CPU; at least CP_GUARD_MIN_CPU_PPM, so that
 * a target that barely ran (or whose time could not be read) still gets
 * a guess of when it will have earned again.
 */
static __u64 cpu_ppm_of(__u64 cpu_ns, __u64 elapsed)
{
	__u64 ppm = (__u64)((unsigned __int128)cpu_ns * 1000000u / elapsed);

	return ppm < CP_GUARD_MIN_CPU_PPM ? CP_GUARD_MIN_CPU_PPM : ppm;
}

/* Pays @calls from the account and earns on @cpu_ns; the balance stays under its cap. */
static void account(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg, __u64 calls,
		    __u64 cpu_ns)
{
	__u64 cap = at_ppm(CP_GUARD_MAX_SAVED_NS, cfg->budget_ppm) + window_price(g, cfg);

	g->spent_ns += calls * cfg->call_ns;
	g->earned_ns += at_ppm(cpu_ns, cfg->budget_ppm);
	if (g->earned_ns > g->spent_ns + cap)
		g->earned_ns = g->spent_ns + cap;
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

/* Ends the window at @now_ns: its rates, and the --max-alloc-rate back-off it earns (0: none). */
static __u64 end_window(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			__u64 now_ns)
{
	__u64 elapsed = now_ns - g->window_start_ns, rate_off = 0;

	/* 128 bits: a million calls times 1e9 already passes 2^64 / 1e4 */
	g->last_rate = (__u64)((unsigned __int128)g->window_calls * 1000000000u / elapsed);
	g->cpu_ppm = cpu_ppm_of(g->window_cpu_ns, elapsed);
	if (budgeted(cfg))
		g->spend_ppm = (__u64)((unsigned __int128)g->window_calls * cfg->call_ns *
				       1000000u / elapsed);
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
	return rate_off;
}

/*
 * When the target, at its last CPU rate, will have earned the window's
 * price again, from @now_ns: a guess, the tick then checks what was earned.
 */
static void guess_until(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			__u64 now_ns)
{
	__u64 earn_ppm = at_ppm(g->cpu_ppm, cfg->budget_ppm), have = balance(g),
	      price = window_price(g, cfg);

	g->until_ns =
		now_ns + (have >= price ? 0 : ns_at_ppm(price - have, earn_ppm ? earn_ppm : 1));
}

/* While detached: attach again once the rate back-off is over and the account pays a window. */
static enum cp_guard_action detached_tick(struct cp_alloc_guard *g,
					  const struct cp_alloc_guard_cfg *cfg, __u64 now_ns)
{
	if (now_ns < g->rate_until_ns)
		return CP_GUARD_NONE;
	if (budgeted(cfg) && balance(g) < window_price(g, cfg)) {
		guess_until(g, cfg, now_ns);
		return CP_GUARD_NONE;
	}
	g->backed_off = false;
	g->backoff_total_ns += now_ns - g->since_ns;
	g->window_start_ns = now_ns;
	g->window_calls = 0;
	g->window_cpu_ns = 0;
	return CP_GUARD_ATTACH;
}

enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 cpu_ns, __u64 now_ns)
{
	__u64 rate_off;

	if (!cfg->max_rate && !budgeted(cfg))
		return CP_GUARD_NONE;
	/* every call is paid, those still arriving while the probes come off too */
	if (budgeted(cfg))
		account(g, cfg, calls, cpu_ns);
	g->last_tick_ns = now_ns;
	if (g->backed_off)
		return detached_tick(g, cfg, now_ns);
	g->window_calls += calls;
	g->window_cpu_ns += cpu_ns;
	if (now_ns <= g->window_start_ns)
		return CP_GUARD_NONE;
	if (budgeted(cfg) && balance(g) < window_price(g, cfg)) {
		/*
		 * what is left would not pay the worst rate until a tick some
		 * milliseconds away: cut, before it is overspent
		 */
		rate_off = end_window(g, cfg, now_ns);
		g->rate_until_ns = now_ns + rate_off;
		g->budget_offs += !rate_off;
		back_off(g, rate_off, now_ns);
		guess_until(g, cfg, now_ns);
		return CP_GUARD_DETACH;
	}
	if (!cfg->max_rate || now_ns - g->window_start_ns < cfg->interval_ns)
		return CP_GUARD_NONE;
	/* a measuring interval for --max-alloc-rate */
	rate_off = end_window(g, cfg, now_ns);
	if (!rate_off)
		return CP_GUARD_NONE;
	g->rate_until_ns = now_ns + rate_off;
	return back_off(g, rate_off, now_ns);
}

void cp_alloc_guard_charge(struct cp_alloc_guard *g, __u64 ns)
{
	g->spent_ns += ns;
}

__u64 cp_alloc_guard_next_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__u64 cut = 0;

	if (g->backed_off)
		return g->until_ns > g->rate_until_ns ? g->until_ns : g->rate_until_ns;
	if (!cfg->max_rate && !budgeted(cfg))
		return 0;
	/* what the window already spent is out of the balance: the rest, at the worst rate */
	if (budgeted(cfg))
		cut = (g->last_tick_ns > g->window_start_ns ? g->last_tick_ns
							    : g->window_start_ns) +
		      ns_at_ppm(balance(g), worst_ppm(g, cfg));
	if (budgeted(cfg) && !cfg->max_rate)
		return cut;
	if (cut && cut < g->window_start_ns + cfg->interval_ns)
		return cut;
	return g->window_start_ns + cfg->interval_ns;
}
