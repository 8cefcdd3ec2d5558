// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The overhead budget: which rates a plan chooses from a budget and unit
 * costs, the allocation probes' windows under a budget, the estimates, and
 * the /proc CPU-time parsers. Every expected value is worked out in the
 * comment next to it from the formulas of budget/budget.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "budget/alloc_guard.h"
#include "budget/budget.h"
#include "budget/prog_cost.h"
#include "machine/cpu_time.h"
#include "report/report_budget.h"

#define MS 1000000ull
#define S  1000000000ull

struct plan_case {
	const char *what;
	__u32 budget_ppm;
	struct cp_unit_costs unit;
	bool soft;
	__u32 freq, bp_rate;
	__u32 want_freq, want_bp, want_tick_ppm, want_bp_ppm, want_alloc_ppm;
};

static const struct plan_case plans[] = {
	/* ticks get 5000 ppm: 5000 * 1000 / 10000 ns = 500 Hz, costing 500 * 10 us = 0.5 %;
	 * hits get 2500 ppm: 2500 * 1000 / 10000 = 250/s; the rest, 2500, is the probes' */
	{ "1 % in a VM", 10000, { 10000, 800, 600, 10000, 0 }, true, 4999, 2000,
	  500, 250, 5000, 2500, 2500 },
	/* bare metal: 5000 * 1000 / 2000 = 2500 Hz is under 4999; 2500 * 1000 / 1000 = 2500 hits */
	{ "1 % on bare metal", 10000, { 2000, 300, 200, 1000, 0 }, true, 4999, 2000,
	  2500, 2000, 5000, 2000, 3000 },
	/* asked rates under the shares stay as asked: 997 * 2 us = 1994 ppm */
	{ "asked less than allowed", 50000, { 2000, 300, 200, 1000, 0 }, true, 997, 100,
	  997, 100, 1994, 100, 47906 },
	/* no budget: everything as asked, nothing for the probes' windows */
	{ "no budget", 0, { 10000, 800, 600, 10000, 0 }, true, 4999, 2000, 4999, 2000, 0, 0, 0 },
	/* a budget so small the floor (10 Hz) costs 10 * 20 us = 200 ppm, over the 100 */
	{ "the soft floor", 100, { 20000, 800, 600, 10000, 0 }, true, 4999, 0, 10, 0, 200, 0, 0 },
	/* not a soft run: no ticks; breakpoints off stay off */
	{ "PEBS, no breakpoints", 10000, { 0, 800, 600, 10000, 0 }, false, 4999, 0,
	  0, 0, 0, 0, 10000 },
	/* a cost not measured (0) is not throttled */
	{ "tick not measured", 10000, { 0, 800, 600, 0, 0 }, true, 4999, 2000,
	  4999, 2000, 0, 0, 10000 },
};

static void test_plans(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		const struct plan_case *c = &plans[i];
		struct cp_budget_plan p;

		cp_budget_plan(c->budget_ppm, &c->unit, c->soft, c->freq, c->bp_rate, &p);
		if (p.soft_freq_hz != c->want_freq || p.bp_rate != c->want_bp ||
		    p.tick_ppm != c->want_tick_ppm || p.bp_ppm != c->want_bp_ppm ||
		    p.alloc_ppm != c->want_alloc_ppm)
			fail_msg("%s: freq %u bp %u tick %u bp %u alloc %u ppm", c->what,
				 p.soft_freq_hz, p.bp_rate, p.tick_ppm, p.bp_ppm, p.alloc_ppm);
		assert_int_equal(p.soft_freq_asked_hz, c->soft ? c->freq : 0);
		assert_int_equal(p.bp_rate_asked, c->bp_rate);
	}
}

/* 1 % for the calls, 1 us a call, windows of >= 100 ms, time off at most 60 s. */
static void budget_cfg(struct cp_alloc_guard_cfg *cfg)
{
	cp_alloc_guard_cfg_init(cfg, 0);
	cfg->budget_ppm = 10000;
	cfg->call_ns = 1000;
	cfg->window_ns = 100 * MS;
}

static void test_windows(void **state)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;

	(void)state;
	budget_cfg(&cfg);
	cp_alloc_guard_init(&g, &cfg, 0);
	/* 50 ms: the window is not over yet */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 50000, 50 * MS, 50 * MS), CP_GUARD_NONE);
	/* the loop is to wake when the shortest window ends */
	assert_int_equal(cp_alloc_guard_next_ns(&g, &cfg), cfg.window_ns);
	/*
	 * 100 ms, 100000 calls on one busy CPU: 100 ms spent, which is 1 % of
	 * 10 s of CPU time: off for 10 s - 100 ms = 9.9 s
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 50000, 50 * MS, 100 * MS),
			 CP_GUARD_DETACH);
	assert_int_equal(g.until_ns, 100 * MS + 9900 * MS);
	assert_int_equal(g.attached_ns, 100 * MS);
	assert_int_equal(g.budget_offs, 1);
	assert_int_equal(cp_alloc_guard_next_ns(&g, &cfg), g.until_ns);	/* then when it ends */
	/* 1000 calls while detaching cost 1 ms: 100 ms more off (1 % of one CPU) */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 1000, 5 * S, 5 * S), CP_GUARD_NONE);
	assert_int_equal(g.until_ns, 100 * MS + 9900 * MS + 100 * MS);
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 5 * S, 10 * S), CP_GUARD_NONE);
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 100 * MS, 10 * S + 100 * MS),
			 CP_GUARD_ATTACH);
	assert_int_equal(g.backoff_total_ns, 10 * S);
	/*
	 * A quiet window: 100 calls in 100 ms are 100 us, 1 % of 10 ms of CPU
	 * time; the window itself spans 100 ms: stay attached
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 100, 100 * MS, 10 * S + 200 * MS),
			 CP_GUARD_NONE);
	assert_int_equal(g.attached_ns, 200 * MS);
	/*
	 * Two busy CPUs: 200000 calls are 200 ms spent, 1 % of 20 s of CPU time,
	 * which two CPUs run in 10 s: off for 10 s - 100 ms
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 200000, 200 * MS, 10 * S + 300 * MS),
			 CP_GUARD_DETACH);
	assert_int_equal(g.until_ns - g.since_ns, 9900 * MS);
}

static void test_window_caps(void **state)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;

	(void)state;
	budget_cfg(&cfg);
	cp_alloc_guard_init(&g, &cfg, 0);
	/* a target that barely ran is taken at 1 % of a CPU: 10^6 calls in 100 ms
	 * are 1 s, 1 % of 100 s of CPU time, 10000 s at 1 %: capped at 60 s */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 1000000, 0, 100 * MS), CP_GUARD_DETACH);
	assert_int_equal(g.until_ns - g.since_ns, CP_GUARD_MAX_BACKOFF_NS);
	/* --max-alloc-rate beside the budget: the longer time off wins */
	cp_alloc_guard_cfg_init(&cfg, 1000);
	cfg.budget_ppm = 10000;
	cfg.call_ns = 1000;
	cfg.window_ns = 100 * MS;
	cp_alloc_guard_init(&g, &cfg, 0);
	/* 200 calls in 100 ms: 2000/s over the cap (1 s off); the budget wants
	 * 200 us / 1 % / 1 CPU = 20 ms, less 100 ms: nothing */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 200, 100 * MS, 100 * MS), CP_GUARD_DETACH);
	assert_int_equal(g.until_ns - g.since_ns, CP_GUARD_BACKOFF_NS);
	assert_int_equal(g.budget_offs, 0);
}

static void test_estimate(void **state)
{
	struct cp_unit_costs u = { .tick_ns = 10000, .uprobe_ns = 800, .uretprobe_ns = 600,
				   .bp_hit_ns = 9000 };
	struct cp_report_budget b = { .unit = u };
	struct cp_budget_spent *s = &b.spent;

	(void)state;
	s->target_cpu_ns = 10 * S;
	s->ticks = 5000;	/* 50 ms */
	s->bp_hits = 1000;	/* 9 ms */
	s->alloc_calls = 25000;	/* 25000 * 1.4 us = 35 ms */
	cp_budget_estimate(&u, s);
	assert_int_equal(s->ticks_ns, 50 * MS);
	assert_int_equal(s->bp_ns, 9 * MS);
	assert_int_equal(s->alloc_ns, 35 * MS);
	assert_int_equal(cp_budget_ppm_of(s, s->ticks_ns), 5000);	/* 50 ms of 10 s */
	assert_int_equal(cp_report_budget_total_ppm(&b), 9400);	/* 94 ms of 10 s */
	s->target_cpu_ns = 0;
	assert_int_equal(cp_budget_ppm_of(s, s->ticks_ns), 0);
}

/*
 * The programs' cost per call: only once enough calls were made since the
 * stats went on (the first few include the cold paths: a new call site's
 * stack), and the return program's time counts toward the call.
 */
static void test_prog_cost(void **state)
{
	struct cp_prog_cost then = { .run_ns = 1000, .calls = 10 };
	struct cp_prog_cost now = { .run_ns = 1000 + 4096 * 950ull, .calls = 10 + 4096 };
	__u64 ns = 7;

	(void)state;
	assert_false(cp_prog_cost_per_call(&then, &then, 1, &ns));
	assert_int_equal(ns, 7);
	assert_false(cp_prog_cost_per_call(&now, &then, 4097, &ns));
	assert_true(cp_prog_cost_per_call(&now, &then, CP_PROG_COST_CALLS, &ns));
	assert_int_equal(ns, 950);
	/* runs that took no measurable time still cost 1 ns */
	now.run_ns = then.run_ns;
	assert_true(cp_prog_cost_per_call(&now, &then, 1, &ns));
	assert_int_equal(ns, 1);
}

static void test_proc_stat(void **state)
{
	int ok;

	(void)state;
	/* a comm with spaces and parentheses; utime 1234, stime 56 */
	assert_int_equal(cp_stat_cpu_ticks("4242 (a) (b c) R 1 4242 4242 0 -1 4194560 100 0 0 0 "
					   "1234 56 0 0 20 0 1 0 100 1000 10",
					   &ok),
			 1290);
	assert_true(ok);
	assert_int_equal(cp_stat_cpu_ticks("4242 no parenthesis", &ok), 0);
	assert_false(ok);
	assert_int_equal(cp_stat_cpu_ticks("4242 (x) R 1 2", &ok), 0);
	assert_false(ok);
	/* user nice system idle iowait irq softirq steal: busy is all but idle and iowait */
	assert_int_equal(cp_proc_stat_busy_ticks("cpu  10 20 30 400 50 6 7 8 0 0\ncpu0 1", &ok),
			 81);
	assert_true(ok);
	cp_proc_stat_busy_ticks("intr 1 2 3", &ok);
	assert_false(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plans),	     cmocka_unit_test(test_windows),
		cmocka_unit_test(test_window_caps), cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_proc_stat), cmocka_unit_test(test_prog_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
