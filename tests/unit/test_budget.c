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

#define MS 1000000ull
#define S  1000000000ull

/* Unit costs in ns: a tick, a uprobe, a return probe, a breakpoint hit, a wakeup. */
#define UNIT(tick, up, ret, hit, wake)                                                         \
	{ .tick_ns = (tick), .uprobe_ns = (up), .uretprobe_ns = (ret), .bp_hit_ns = (hit),   \
	  .wakeup_ns = (wake) }

struct plan_case {
	const char *what;
	__u32 budget_ppm;
	struct cp_unit_costs unit; /* UNIT() */
	bool soft;
	__u32 freq, bp_rate;
	__u32 want_freq, want_bp, want_tick_ppm, want_bp_ppm, want_alloc_ppm;
	__u64 want_wakeup_min_ns;
	__u32 want_wakeup_ppm;
};

static const struct plan_case plans[] = {
	/* ticks get 5000 ppm: 5000 * 1000 / 10000 ns = 500 Hz, costing 500 * 10 us = 0.5 %;
	 * hits get 2500 ppm: 2500 * 1000 / 10000 = 250/s; the system-call programs keep
	 * 10000 / 16 = 625; the rest, 1875, is the probes' */
	{ "1 % in a VM", 10000, UNIT(10000, 800, 600, 10000, 0), true, 4999, 2000,
	  500, 250, 5000, 2500, 1875, 1 * MS, 0 },
	/* wakeups get 10000 / 16 = 625 ppm: 625 * 1000 / 5000 ns = 125/s, one per 8 ms,
	 * costing 125 * 5 us = 625 ppm; the probes keep 10000 - 5000 - 2500 - 625 - 625 */
	{ "1 % in a VM, wakeups", 10000, UNIT(10000, 800, 600, 10000, 5000), true, 4999, 2000,
	  500, 250, 5000, 2500, 1250, 8 * MS, 625 },
	/* bare metal: 5000 * 1000 / 2000 = 2500 Hz is under 4999; 2500 * 1000 / 1000 = 2500
	 * hits; a 1 us wakeup could come 625 times a second: one per 1.6 ms (625 ppm) */
	{ "1 % on bare metal", 10000, UNIT(2000, 300, 200, 1000, 1000), true, 4999, 2000,
	  2500, 2000, 5000, 2000, 1750, 1600000, 625 },
	/* a wakeup so cheap the budget would allow more than one per ms: one per ms, 300 ppm */
	{ "wakeups at the floor", 50000, UNIT(2000, 300, 200, 1000, 300), true, 997, 100,
	  997, 100, 1994, 100, 44481, 1 * MS, 300 },
	/* asked rates under the shares stay as asked: 997 * 2 us = 1994 ppm; the
	 * probes get 50000 - 1994 - 100 - 3125 (the system-call programs' 1/16) */
	{ "asked less than allowed", 50000, UNIT(2000, 300, 200, 1000, 0), true, 997, 100,
	  997, 100, 1994, 100, 44781, 1 * MS, 0 },
	/* no budget: everything as asked, nothing for the probes' windows */
	{ "no budget", 0, UNIT(10000, 800, 600, 10000, 5000), true, 4999, 2000, 4999, 2000, 0, 0, 0,
	  0, 0 },
	/* a budget so small the floor (10 Hz) costs 10 * 20 us = 200 ppm, over the 100 */
	{ "the soft floor", 100, UNIT(20000, 800, 600, 10000, 0), true, 4999, 0, 10, 0, 200, 0, 0,
	  1 * MS, 0 },
	/* not a soft run: no ticks; breakpoints off stay off */
	{ "PEBS, no breakpoints", 10000, UNIT(0, 800, 600, 10000, 0), false, 4999, 0,
	  0, 0, 0, 0, 9375, 1 * MS, 0 },
	/* a cost not measured (0) is not throttled */
	{ "tick not measured", 10000, UNIT(0, 800, 600, 0, 0), true, 4999, 2000,
	  4999, 2000, 0, 0, 9375, 1 * MS, 0 },
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
		    p.alloc_ppm != c->want_alloc_ppm || p.wakeup_min_ns != c->want_wakeup_min_ns ||
		    p.wakeup_ppm != c->want_wakeup_ppm)
			fail_msg("%s: freq %u bp %u tick %u bp %u alloc %u ppm, wakeups every %llu ns "
				 "(%u ppm)",
				 c->what, p.soft_freq_hz, p.bp_rate, p.tick_ppm, p.bp_ppm, p.alloc_ppm,
				 (unsigned long long)p.wakeup_min_ns, p.wakeup_ppm);
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
	/*
	 * The account starts with the share of half a second of one CPU: 1 %
	 * of 0.5 s is 5 ms, 5000 calls at 1 us. 100 calls in 50 ms leave
	 * 4.9 ms: the window stays open for 4900 more calls, less the 128 that
	 * may come late to the watcher, and the loop wakes when the shortest
	 * window ends, to measure the rate
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 100, 50 * MS, 50 * MS), CP_GUARD_NONE);
	assert_int_equal(cp_alloc_guard_allowance(&g, &cfg), 4900 - CP_GUARD_LATE_CALLS);
	assert_int_equal(cp_alloc_guard_next_ns(&g, &cfg), cfg.window_ns);
	/*
	 * A storm: 50000 calls more spend 50 ms where 1 % of 100 ms of CPU
	 * time earned 1 ms (the credit, 5 ms, is more): 45.1 ms overspent,
	 * detached at once. The window's rate, 50100 calls in 100 ms, and the
	 * 128 that may come late want 50.228 ms in the account to open again:
	 * 95.328 ms to earn at 1 % of the one CPU the target ran, 9.5328 s
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 50000, 50 * MS, 100 * MS),
			 CP_GUARD_DETACH);
	assert_int_equal(g.budget_offs, 1);
	assert_int_equal(g.attached_ns, 100 * MS);
	assert_int_equal(g.until_ns, 100 * MS + 9532800ull * 1000);
	/* a forecast: the loop looks at the account again each 100 ms meanwhile */
	assert_int_equal(cp_alloc_guard_next_ns(&g, &cfg), 200 * MS);
	assert_int_equal(cp_alloc_guard_allowance(&g, &cfg), ~0ull);	/* off: no window */
	/* 1000 calls while detaching are spent too; 5 s more of CPU earn 50 ms */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 1000, 5 * S, 5100 * MS), CP_GUARD_NONE);
	/*
	 * After the time set, 4.52 s more of CPU: 96.2 ms earned, 51.1 ms
	 * spent: 45.1 ms is short of 50.228 ms: 5.128 ms more to earn, at the
	 * rate of the last 4.54 s (4.52 s of CPU, 995594 ppm of one) 0.515069 s
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 4520 * MS, 9640 * MS), CP_GUARD_NONE);
	assert_int_equal(g.cpu_ppm, 995594);
	assert_int_equal(g.until_ns, 9640 * MS + 515069395ull);
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 580 * MS, 10200 * MS), CP_GUARD_ATTACH);
	assert_int_equal(g.backoff_total_ns, 10100 * MS);
	/* 102 ms earned, 51.1 ms spent: 50.9 ms, 50900 calls for this window, less 128 */
	assert_int_equal(cp_alloc_guard_allowance(&g, &cfg), 50772);
	/*
	 * The watcher cut it at 10.25 s; its calls come with the next tick,
	 * which measures its rate from them, over the window and the detaching
	 * (the probes may fire until then): 50900 in 100 ms. 128 of them came
	 * past the allowance: the next windows keep those back. So 51.028 ms
	 * must be in the account to open again, and 0.5 ms is: 50.528 ms to
	 * earn, at the rate of the last span (580 ms of CPU in the 560 ms
	 * from 9.64 s, 1035714 ppm of one CPU) 4.878566863 s
	 */
	cp_alloc_guard_cut(&g, 50772, 10250 * MS);
	assert_true(g.backed_off);
	assert_int_equal(g.cuts, 1);
	assert_int_equal(g.budget_offs, 2);
	assert_int_equal(g.attached_ns, 150 * MS);
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 50900, 50 * MS, 10300 * MS),
			 CP_GUARD_NONE);
	assert_int_equal(g.last_rate, 509000);
	assert_int_equal(g.late_calls, 128);
	assert_int_equal(g.until_ns, 10300 * MS + 4878566863ull);
	assert_int_equal(g.spent_ns, 102 * MS);
}

/*
 * A target on one CPU that would call its allocator a million times a
 * second (1 us a call: all of its time) for 60 s, the loop ticking every
 * 100 ms and a watcher cutting each window at its allowance: at every tick
 * the spending is at most the earnings (or the credit, early on) plus the
 * calls counted late, and the probes are attached about the budget's share
 * of the time.
 */
static void test_storm_account(void **state)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;
	__u64 now = 0, late = 64, attached = 0, open_since = 0;
	bool open = true;

	(void)state;
	budget_cfg(&cfg);
	cfg.window_ns = 5 * MS;
	cp_alloc_guard_init(&g, &cfg, 0);
	while (now < 60 * S) {
		__u64 allow = cp_alloc_guard_allowance(&g, &cfg), calls = 0;
		enum cp_guard_action act;

		if (open) {
			/* the storm runs into the allowance within the tick; the watcher cuts it there */
			calls = 100000;
			if (allow != ~0ull && calls > allow + late) {
				calls = allow + late;
				cp_alloc_guard_cut(&g, allow, now + calls * 1000);
				attached += calls * 1000;
				open = false;
			}
		}
		now += 100 * MS;
		act = cp_alloc_guard_tick(&g, &cfg, calls, 100 * MS, now);
		if (open && act == CP_GUARD_DETACH) {
			attached += now - open_since;
			open = false;
		} else if (act == CP_GUARD_ATTACH) {
			open = true;
			open_since = now;
		}
		assert_true(g.spent_ns <= (g.earned_ns > 5 * MS ? g.earned_ns : 5 * MS) +
						   late * cfg.call_ns);
	}
	/* 1 % of 60 s of CPU is 600 ms of calls: attached 0.9-1.1 % of the time */
	assert_in_range(g.spent_ns, 540 * MS, 610 * MS);
	assert_in_range(attached, 540 * MS, 660 * MS);
}

/*
 * A target's CPU time comes in clock ticks of 10 ms. Read every 5 ms, as
 * a storm's shortest windows are, it says 0 or 10 ms: the rate is taken
 * over 500 ms instead, and a back-off set on a rate too low (1 % of a CPU,
 * 60 s off) ends as soon as the account holds a window again, and the
 * last probes are off.
 */
static void test_coarse_cpu_time(void **state)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;
	__u64 now = 0;

	(void)state;
	budget_cfg(&cfg);
	cfg.window_ns = 5 * MS;
	cp_alloc_guard_init(&g, &cfg, 0);
	/* one CPU, read every 5 ms: 0, 10, 0, 10 ms...; no calls */
	for (int i = 1; i <= 200; i++) {
		now = i * 5 * MS;
		assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, i % 2 ? 0 : 10 * MS, now),
				 CP_GUARD_NONE);
		assert_int_equal(g.cpu_ppm, 1000000);
	}
	/* 1 s of CPU earned 10 ms; a burst of 20000 calls spends 20: off */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 20000, 0, now + 5 * MS), CP_GUARD_DETACH);
	now += 5 * MS;
	/* the next 500 ms read no CPU time at all (the last tick of 10 ms comes late) */
	for (int i = 1; i <= 100; i++)
		cp_alloc_guard_tick(&g, &cfg, 0, 0, now + i * 5 * MS);
	now += 500 * MS;
	assert_int_equal(g.cpu_ppm, CP_GUARD_MIN_CPU_PPM);
	assert_true(g.until_ns - now > 10 * S);
	/*
	 * then the target runs a whole CPU again. The account is 10 ms short
	 * and a window at the burst's rate (4 million calls/s: 20000 calls in
	 * 5 ms) and 128 late calls want 20.128 ms: 30.128 ms to earn, 3.0128 s
	 * of CPU at 1 %, so the window opens at the tick 3.1 s on, not 10 s on
	 */
	for (int i = 1; i < 31; i++)
		assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 100 * MS, now + i * 100 * MS),
				 CP_GUARD_NONE);
	/* while the last probes are still coming off, the window waits, looked at every 10 ms */
	now += 3100 * MS;
	g.hold = true;
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 100 * MS, now), CP_GUARD_NONE);
	assert_int_equal(g.holds, 1);
	assert_int_equal(cp_alloc_guard_next_ns(&g, &cfg), now + CP_GUARD_MIN_OFF_NS);
	g.hold = false;
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 10 * MS, now + 10 * MS), CP_GUARD_ATTACH);
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
				   .bp_hit_ns = 9000, .wakeup_ns = 5000, .syscall_ns = 500 };
	struct cp_budget_spent s = { 0 };

	(void)state;
	s.target_cpu_ns = 10 * S;
	s.ticks = 5000;		/* 50 ms */
	s.bp_hits = 1000;	/* 9 ms */
	s.wakeups = 400;	/* 2 ms */
	s.syscalls = 6000;	/* 3 ms */
	s.alloc_calls = 25000;	/* 25000 * 1.4 us = 35 ms */
	cp_budget_estimate(&u, &s);
	assert_int_equal(s.ticks_ns, 50 * MS);
	assert_int_equal(s.bp_ns, 9 * MS);
	assert_int_equal(s.wakeups_ns, 2 * MS);
	assert_int_equal(s.syscalls_ns, 3 * MS);
	assert_int_equal(s.alloc_ns, 35 * MS);
	assert_int_equal(cp_budget_ppm_of(&s, s.ticks_ns), 5000);	/* 50 ms of 10 s */
	assert_int_equal(cp_budget_total_ppm(&s), 9900);		/* 99 ms of 10 s */
	s.target_cpu_ns = 0;
	assert_int_equal(cp_budget_ppm_of(&s, s.ticks_ns), 0);
}

/* The hit rate follows the targets' CPU use, up to the planned rate, at least 1/s. */
static void test_bp_rate(void **state)
{
	(void)state;
	assert_int_equal(cp_budget_bp_rate(296, 100 * MS, 1 * S), 29);	/* a tenth of a CPU */
	assert_int_equal(cp_budget_bp_rate(296, 2 * S, 1 * S), 296);	/* two CPUs: as planned */
	assert_int_equal(cp_budget_bp_rate(296, 0, 1 * S), 1);		/* idle: the floor */
	assert_int_equal(cp_budget_bp_rate(0, 1 * S, 1 * S), 0);	/* breakpoints off */
	assert_int_equal(cp_budget_bp_rate(296, 1 * S, 0), 296);	/* no time: as planned */
}

/*
 * Each CPU against its own time: a CPU that ran the allocating thread pays
 * more than the run's average, and the highest is the one shown first.
 */
static void test_per_cpu(void **state)
{
	struct cp_unit_costs u = { .tick_ns = 10000, .uprobe_ns = 800, .uretprobe_ns = 600,
				   .bp_hit_ns = 9000, .wakeup_ns = 5000, .syscall_ns = 500 };
	struct cp_budget_spent s = { .wall_ns = 10 * S };
	struct cp_budget_cpu_counts ticked = { .ticks = 1000, .wakeups = 100 };
	struct cp_budget_cpu_counts allocating = { .alloc_calls = 50000, .bp_hits = 100,
						   .syscalls = 20000 };

	(void)state;
	/* 1000 ticks (10 ms) + 100 wakeups (0.5 ms) of 10 s: 1050 ppm */
	assert_int_equal(cp_budget_cpu_ppm(&u, &ticked, s.wall_ns), 1050);
	/* 50000 calls * 1.4 us = 70 ms + 100 hits * 9 us = 0.9 ms + 20000 system calls
	 * * 0.5 us = 10 ms: 8090 ppm */
	assert_int_equal(cp_budget_cpu_ppm(&u, &allocating, s.wall_ns), 8090);
	assert_int_equal(cp_budget_cpu_ppm(&u, &ticked, 0), 0);
	cp_budget_add_cpu(&s, 0, 1050);
	cp_budget_add_cpu(&s, 1, 8090);
	cp_budget_add_cpu(&s, 2, 30);
	assert_int_equal(s.nr_cpus, 3);
	assert_int_equal(s.cpu_max, 1);
	assert_int_equal(s.cpu_ppm[2], 30);
	/* a CPU past the cap folds into the last slot, which keeps the highest */
	cp_budget_add_cpu(&s, CP_BUDGET_MAX_CPUS + 5, 20000);
	assert_int_equal(s.nr_cpus, CP_BUDGET_MAX_CPUS);
	assert_int_equal(s.cpu_ppm[CP_BUDGET_MAX_CPUS - 1], 20000);
	assert_int_equal(s.cpu_max, CP_BUDGET_MAX_CPUS - 1);
}

/*
 * Each probed process against its own CPU time: its calls, plus the run's
 * tick, hit and wakeup shares; the costliest (by time spent) kept first,
 * at most CP_BUDGET_TOP_PROCS.
 */
static void test_per_process(void **state)
{
	struct cp_unit_costs u = { .uprobe_ns = 800, .uretprobe_ns = 600 };
	struct cp_budget_spent s = { .target_cpu_ns = 10 * S, .ticks_ns = 10 * MS };

	(void)state;
	/* the run's ticks: 10 ms of 10 s = 1000 ppm for everyone */
	/* 10000 calls * 1.4 us = 14 ms of 2 s = 7000 ppm, + 1000 */
	cp_budget_add_proc(&u, &s, (struct cp_budget_proc){ .pid = 10, .cpu_ns = 2 * S,
							    .alloc_calls = 10000 });
	/* no calls: the shared 1000 ppm of 8 s, 8 ms spent: under the first's 16 ms */
	cp_budget_add_proc(&u, &s, (struct cp_budget_proc){ .pid = 11, .cpu_ns = 8 * S });
	assert_int_equal(s.nr_procs, 2);
	assert_int_equal(s.procs[0].pid, 10);
	assert_int_equal(s.procs[0].ppm, 8000);
	assert_int_equal(s.procs[0].alloc_ns, 14 * MS);
	assert_int_equal(s.procs[1].pid, 11);
	assert_int_equal(s.procs[1].ppm, 1000);
	/* a short-lived process: 100 calls in 1 ms of CPU time is 14 %, but 0.14 ms spent */
	cp_budget_add_proc(&u, &s, (struct cp_budget_proc){ .pid = 12, .cpu_ns = 1 * MS,
							    .alloc_calls = 100 });
	assert_int_equal(s.procs[2].pid, 12);
	assert_int_equal(s.procs[2].ppm, 141000);
	/* more than the cap: the cheapest go */
	for (int i = 0; i < CP_BUDGET_TOP_PROCS; i++)
		cp_budget_add_proc(&u, &s, (struct cp_budget_proc){ .pid = 100 + i,
								    .cpu_ns = 4 * S,
								    .alloc_calls = 1000 });
	assert_int_equal(s.nr_procs, CP_BUDGET_TOP_PROCS);
	assert_int_equal(s.procs[0].pid, 10);
	assert_int_equal(s.procs[1].pid, 11);	/* 8 ms beats 4 ms + 1.4 ms */
	for (int i = 2; i < CP_BUDGET_TOP_PROCS; i++)
		assert_true(s.procs[i].pid >= 100);
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
		cmocka_unit_test(test_storm_account),
		cmocka_unit_test(test_coarse_cpu_time),
		cmocka_unit_test(test_window_caps), cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_proc_stat), cmocka_unit_test(test_prog_cost),
		cmocka_unit_test(test_per_cpu),	    cmocka_unit_test(test_per_process),
		cmocka_unit_test(test_bp_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
