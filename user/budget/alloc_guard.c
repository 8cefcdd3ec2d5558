// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
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
	g->span_start_ns = now_ns;
	g->last_tick_ns = now_ns;
	g->cpu_ppm = 1000000u; /* one CPU until a span says */
	g->late_calls = CP_GUARD_LATE_CALLS;
	g->next_backoff_ns = cfg->backoff_ns;
}

/*
 * The CPUs' worth of time the target ran in a span of @elapsed ns in which
 * it used @cpu_ns, in ppm of one CPU; at least CP_GUARD_MIN_CPU_PPM, so that
 * a target that barely ran (or whose time could not be read) still gets
 * windows, short ones.
 */
static __u64 cpu_ppm_of(__u64 cpu_ns, __u64 elapsed)
{
	__u64 ppm = (__u64)((unsigned __int128)cpu_ns * 1000000u / elapsed);

	return ppm < CP_GUARD_MIN_CPU_PPM ? CP_GUARD_MIN_CPU_PPM : ppm;
}

/*
 * What @cpu_ns of the target's CPU time earns: the budget's share, less
 * what a full bank may add to an interval (CP_GUARD_BANK_NS in
 * CP_BUDGET_INTERVAL_NS + CP_GUARD_BANK_NS).
 */
static __u64 earned_by(const struct cp_alloc_guard_cfg *cfg, __u64 cpu_ns)
{
	return (__u64)((unsigned __int128)cpu_ns * cfg->budget_ppm * CP_BUDGET_INTERVAL_NS /
		       (CP_BUDGET_INTERVAL_NS + CP_GUARD_BANK_NS) / 1000000u);
}

/* Wall time in which a target running @cpu_ppm of a CPU earns @spent_ns (earned_by()). */
static __u64 span_for(const struct cp_alloc_guard_cfg *cfg, __u64 spent_ns, __u64 cpu_ppm)
{
	unsigned __int128 span = (unsigned __int128)spent_ns * 1000000u * 1000000u *
				 (CP_BUDGET_INTERVAL_NS + CP_GUARD_BANK_NS) /
				 CP_BUDGET_INTERVAL_NS / cfg->budget_ppm / cpu_ppm;

	return span > ~0ull ? ~0ull : (__u64)span;
}

static bool budget_on(const struct cp_alloc_guard_cfg *cfg)
{
	return cfg->budget_ppm && cfg->call_ns;
}

/* The account's credit at the start: the share of CP_GUARD_CREDIT_NS of one CPU. */
static __u64 credit_ns(const struct cp_alloc_guard_cfg *cfg)
{
	return (__u64)((unsigned __int128)CP_GUARD_CREDIT_NS * cfg->budget_ppm / 1000000u);
}

/*
 * What the account holds: the earnings (or the credit while it is more),
 * less the spending and what went past the bank's cap.
 */
static __s64 balance_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__u64 credit = credit_ns(cfg);
	__u64 have = g->earned_ns > credit ? g->earned_ns : credit;
	__u64 out = g->spent_ns + g->forfeit_ns;

	return have >= out ? (__s64)(have - out) : -(__s64)(out - have);
}

/* What the target earns in CP_GUARD_BANK_NS at its last measured CPU rate: a full bank. */
static __u64 full_bank_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	return earned_by(cfg, CP_GUARD_BANK_NS * g->cpu_ppm / 1000000u);
}

/*
 * The balance a window is opened with: a shortest window at the last rate
 * (CP_GUARD_MIN_CALLS at least) and the calls that may come late on top,
 * and once the earnings have passed the start-up credit, nine tenths of a
 * full bank when that is more. A window costs the profiler the same
 * whatever its length (attaching and detaching the probes and the
 * system-call programs, some 10 ms of CPU on our VM, where the kernel
 * patches its own text for each), so a storm's windows wait for the bank
 * and come every CP_GUARD_BANK_NS or so, each spending what it holds. The
 * credit's windows open as before: a short run's first windows are not
 * kept waiting.
 */
static __u64 open_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	unsigned __int128 calls = (unsigned __int128)g->last_rate * cfg->window_ns / 1000000000u;
	__u64 full = full_bank_ns(g, cfg) / 10 * 9;

	if (calls < CP_GUARD_MIN_CALLS)
		calls = CP_GUARD_MIN_CALLS;
	calls = (calls + g->late_calls) * cfg->call_ns;
	if (g->earned_ns > credit_ns(cfg) && full > calls)
		calls = full;
	return calls > (__u64)INT64_MAX ? (__u64)INT64_MAX : (__u64)calls;
}

/* How long the target, running @g->cpu_ppm of a CPU, takes to earn what a window is opened with. */
static __u64 earn_wait_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__s64 have = balance_ns(g, cfg);
	__u64 want = open_ns(g, cfg), wait;

	if (have >= (__s64)want)
		return 0;
	wait = span_for(cfg, (__u64)((__s64)want - have), g->cpu_ppm);
	if (wait < CP_GUARD_MIN_OFF_NS)
		wait = CP_GUARD_MIN_OFF_NS;
	return wait > cfg->max_backoff_ns ? cfg->max_backoff_ns : wait;
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

/* Ends the window being measured at @now_ns: its rate, the time attached. */
static void end_window(struct cp_alloc_guard *g, __u64 now_ns)
{
	__u64 elapsed = now_ns > g->window_start_ns ? now_ns - g->window_start_ns : 0;

	if (elapsed) /* 128 bits: a million calls times 1e9 already passes 2^64 / 1e4 */
		g->last_rate = (__u64)((unsigned __int128)g->window_calls * 1000000000u / elapsed);
	g->attached_ns += elapsed;
	g->window_start_ns = now_ns;
	g->window_calls = 0;
}

/*
 * The target's CPU rate, attached or not: @cpu_ns more of its time at
 * @now_ns, taken over spans of CP_GUARD_CPU_SPAN_NS at least.
 */
static void measure_cpu(struct cp_alloc_guard *g, __u64 cpu_ns, __u64 now_ns)
{
	__u64 elapsed = now_ns > g->span_start_ns ? now_ns - g->span_start_ns : 0;

	g->span_cpu_ns += cpu_ns;
	g->last_tick_ns = now_ns;
	if (elapsed < CP_GUARD_CPU_SPAN_NS)
		return;
	g->cpu_ppm = cpu_ppm_of(g->span_cpu_ns, elapsed);
	g->span_start_ns = now_ns;
	g->span_cpu_ns = 0;
}

/*
 * The most the account keeps: what the target earns in CP_GUARD_BANK_NS at
 * its last measured rate, or a window's opening balance when that is more
 * (else a window could never open). A full bank and the earnings of an
 * interval at that rate are the interval's share.
 */
static __u64 bank_cap_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__u64 cap = full_bank_ns(g, cfg);
	__u64 open = open_ns(g, cfg);

	return cap > open ? cap : open;
}

/*
 * The account's side of a tick: @calls spent, @cpu_ns of the target's time
 * earned at the share an interval may take beside a full bank; what the
 * bank cannot hold is forfeit.
 */
static void account(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg, __u64 calls,
		    __u64 cpu_ns)
{
	__s64 have;
	__u64 cap;

	if (!budget_on(cfg))
		return;
	g->earned_ns += earned_by(cfg, cpu_ns);
	g->spent_ns += calls * cfg->call_ns;
	have = balance_ns(g, cfg);
	cap = bank_cap_ns(g, cfg);
	if (have > 0 && (__u64)have > cap)
		g->forfeit_ns += (__u64)have - cap;
}

void cp_alloc_guard_charge(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg, __u64 ns)
{
	if (budget_on(cfg))
		g->spent_ns += ns;
}

enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 cpu_ns, __u64 now_ns)
{
	__u64 elapsed, rate_off = 0;

	account(g, cfg, calls, cpu_ns);
	measure_cpu(g, cpu_ns, now_ns);
	if (g->backed_off) {
		/* the calls that came while detaching were spent above */
		if (g->cut_ns) {
			/*
			 * Over the window and the detaching that followed, when
			 * the calls still came: the probes fired that long at most
			 */
			__u64 span = now_ns > g->cut_ns ? now_ns - g->cut_ns : 1;

			g->last_rate = (__u64)((unsigned __int128)(g->window_calls + calls) *
					       1000000000u / span);
			g->late_calls = calls > g->cut_allow ? calls - g->cut_allow : 0;
			g->cut_ns = 0;
			g->window_calls = 0;
		}
		/*
		 * The budget's time off ends once the account holds a window,
		 * whenever that is: until_ns is a forecast, at the rate the
		 * target ran so far, and the rate changes
		 */
		if (now_ns < g->rate_until_ns || (!budget_on(cfg) && now_ns < g->until_ns))
			return CP_GUARD_NONE;
		if (budget_on(cfg) && balance_ns(g, cfg) < (__s64)open_ns(g, cfg)) {
			g->until_ns = now_ns + earn_wait_ns(g, cfg);
			return CP_GUARD_NONE;
		}
		if (g->hold) {
			g->holds++;
			return CP_GUARD_NONE;
		}
		g->backed_off = false;
		g->backoff_total_ns += now_ns - g->since_ns;
		g->window_start_ns = now_ns;
		g->window_calls = 0;
		return CP_GUARD_ATTACH;
	}
	if (!cfg->max_rate && !cfg->budget_ppm)
		return CP_GUARD_NONE;
	g->window_calls += calls;
	if (budget_on(cfg) && balance_ns(g, cfg) <= 0) {
		end_window(g, now_ns);
		g->budget_offs++;
		return back_off(g, earn_wait_ns(g, cfg), now_ns);
	}
	if (now_ns <= g->window_start_ns)
		return CP_GUARD_NONE;
	elapsed = now_ns - g->window_start_ns;
	if (elapsed < (cfg->budget_ppm ? cfg->window_ns : cfg->interval_ns))
		return CP_GUARD_NONE;
	end_window(g, now_ns);
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
	if (rate_off) {
		g->rate_until_ns = now_ns + rate_off;
		return back_off(g, rate_off, now_ns);
	}
	return CP_GUARD_NONE;
}

__u64 cp_alloc_guard_allowance(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__s64 have;

	if (!budget_on(cfg) || g->backed_off)
		return ~0ull;
	have = balance_ns(g, cfg);
	if (have <= 0 || (__u64)have / cfg->call_ns <= g->late_calls)
		return 0;
	return (__u64)have / cfg->call_ns - g->late_calls;
}

void cp_alloc_guard_cut(struct cp_alloc_guard *g, __u64 allow, __u64 now_ns)
{
	if (g->backed_off)
		return;
	g->cut_allow = allow;
	/* the window's calls come with the next tick: its rate is measured then */
	g->cut_ns = g->window_start_ns ? g->window_start_ns : 1;
	g->attached_ns += now_ns > g->window_start_ns ? now_ns - g->window_start_ns : 0;
	g->window_start_ns = now_ns;
	g->budget_offs++;
	g->cuts++;
	back_off(g, CP_GUARD_MIN_OFF_NS, now_ns);
}

__u64 cp_alloc_guard_next_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg)
{
	__u64 next;

	if (g->backed_off) {
		if (g->hold)
			return g->last_tick_ns + CP_GUARD_MIN_OFF_NS;
		/* with a budget, each shortest interval looks at the account again */
		next = g->last_tick_ns + cfg->interval_ns;
		return budget_on(cfg) && g->rate_until_ns <= g->until_ns && next < g->until_ns
			       ? next
			       : g->until_ns;
	}
	if (!cfg->max_rate && !cfg->budget_ppm)
		return 0;
	return g->window_start_ns + (cfg->budget_ppm ? cfg->window_ns : cfg->interval_ns);
}
