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
#include <string.h>
#include <cmocka.h>

#include "budget/alloc_guard.h"
#include "budget/budget.h"
#include "budget/intervals.h"
#include "budget/prog_cost.h"
#include "budget/sys_windows.h"
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
	/* ticks get 5000 ppm at 10 us and a quarter for their program: 5000 * 1000 /
	 * 12500 ns = 400 Hz, costing 400 * 12.5 us = 0.5 %; hits get 2500 ppm: 2500 *
	 * 1000 / 10000 = 250/s; the system-call programs keep 10000 / 16 = 625; the rest,
	 * 1875, is the probes' */
	{ "1 % in a VM", 10000, UNIT(10000, 800, 600, 10000, 0), true, 4999, 2000,
	  400, 250, 5000, 2500, 1875, 1 * MS, 0 },
	/* wakeups get 10000 / 16 = 625 ppm: 625 * 1000 / 5000 ns = 125/s, one per 8 ms,
	 * costing 125 * 5 us = 625 ppm; the probes keep 10000 - 5000 - 2500 - 625 - 625 */
	{ "1 % in a VM, wakeups", 10000, UNIT(10000, 800, 600, 10000, 5000), true, 4999, 2000,
	  400, 250, 5000, 2500, 1250, 8 * MS, 625 },
	/* bare metal: 5000 * 1000 / 2500 (2 us and its program's quarter) = 2000 Hz is
	 * under 4999; 2500 * 1000 / 1000 = 2500 hits; a 1 us wakeup could come 625 times a
	 * second: one per 1.6 ms (625 ppm) */
	{ "1 % on bare metal", 10000, UNIT(2000, 300, 200, 1000, 1000), true, 4999, 2000,
	  2000, 2000, 5000, 2000, 1750, 1600000, 625 },
	/* a wakeup so cheap the budget would allow more than one per ms: one per ms, 300 ppm;
	 * the probes get 50000 - 2492 - 100 - 300 - 3125 */
	{ "wakeups at the floor", 50000, UNIT(2000, 300, 200, 1000, 300), true, 997, 100,
	  997, 100, 2492, 100, 43983, 1 * MS, 300 },
	/* asked rates under the shares stay as asked: 997 * 2.5 us = 2492 ppm; the
	 * probes get 50000 - 2492 - 100 - 3125 (the system-call programs' 1/16) */
	{ "asked less than allowed", 50000, UNIT(2000, 300, 200, 1000, 0), true, 997, 100,
	  997, 100, 2492, 100, 44283, 1 * MS, 0 },
	/* no budget: everything as asked, nothing for the probes' windows */
	{ "no budget", 0, UNIT(10000, 800, 600, 10000, 5000), true, 4999, 2000, 4999, 2000, 0, 0, 0,
	  0, 0 },
	/* a budget so small the floor (10 Hz) costs 10 * 25 us = 250 ppm, over the 100 */
	{ "the soft floor", 100, UNIT(20000, 800, 600, 10000, 0), true, 4999, 0, 10, 0, 250, 0, 0,
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
	 * A storm: 50000 calls more spend 50 ms where 100 ms of CPU time
	 * earned 1 % x 10/13 (an interval's share beside a full bank of 3 s,
	 * CP_GUARD_BANK_NS): 0.769 ms (the credit, 5 ms, is more): 45.1 ms
	 * overspent, detached at once. The window's rate, 50100 calls in
	 * 100 ms, and the 128 that may come late want 50.228 ms in the account
	 * to open again: 95.328 ms to earn at 1 % x 10/13 of the one CPU the
	 * target ran, 12.39264 s
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 50000, 50 * MS, 100 * MS),
			 CP_GUARD_DETACH);
	assert_int_equal(g.budget_offs, 1);
	assert_int_equal(g.attached_ns, 100 * MS);
	assert_int_equal(g.until_ns, 100 * MS + 12392640ull * 1000);
	/* a forecast: the loop looks at the account again each 100 ms meanwhile */
	assert_int_equal(cp_alloc_guard_next_ns(&g, &cfg), 200 * MS);
	assert_int_equal(cp_alloc_guard_allowance(&g, &cfg), ~0ull);	/* off: no window */
	/* 1000 calls while detaching are spent too; 5 s more of CPU earn 38.461538 ms */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 1000, 5 * S, 5100 * MS), CP_GUARD_NONE);
	assert_int_equal(g.earned_ns, 769230 + 38461538);
	/*
	 * 5.48 s later, 5.48 s more of CPU: 81.384614 ms earned, 51.1 ms
	 * spent: 30.284614 ms is short of 50.228 ms: 19.943386 ms more to
	 * earn, 2.59264018 s at the one CPU the target ran. Nothing is
	 * forfeit: the bank keeps a window's opening balance (50.228 ms) where
	 * 3 s of earnings (23.08 ms, nine tenths of it 20.77 ms) are less
	 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 5480 * MS, 10580 * MS), CP_GUARD_NONE);
	assert_int_equal(g.cpu_ppm, 1000000);
	assert_int_equal(g.until_ns, 10580 * MS + 2592640180ull);
	assert_int_equal(g.forfeit_ns, 0);
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 2592640180ull, g.until_ns),
			 CP_GUARD_ATTACH);
	assert_int_equal(g.backoff_total_ns, 13072640180ull);
	/* 101.328 ms earned, 51.1 ms spent: 50.228 ms, 50228 calls for this window, less 128 */
	assert_int_equal(cp_alloc_guard_allowance(&g, &cfg), 50100);
	/*
	 * The watcher cut it 50 ms later; its calls come with the next tick,
	 * which measures its rate from them, over the window and the detaching
	 * (the probes may fire until then): 50228 in 100 ms. 128 of them came
	 * past the allowance: the next windows keep those back. So 50.356 ms
	 * must be in the account to open again, and 0.384615 ms is: 49.971385
	 * ms to earn at 1 % x 10/13, 6.49628005 s
	 */
	cp_alloc_guard_cut(&g, 50100, 13222640180ull);
	assert_true(g.backed_off);
	assert_int_equal(g.cuts, 1);
	assert_int_equal(g.budget_offs, 2);
	assert_int_equal(g.attached_ns, 150 * MS);
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 50228, 50 * MS, 13272640180ull),
			 CP_GUARD_NONE);
	assert_int_equal(g.last_rate, 502280);
	assert_int_equal(g.late_calls, 128);
	assert_int_equal(g.until_ns, 13272640180ull + 6496280050ull);
	assert_int_equal(g.spent_ns, 101328 * 1000);
}

/*
 * The bank's cap: a target that ran 60 s on one CPU without allocating
 * earned 461.5 ms at 1 % x 10/13, but keeps what 3 s earn (23.08 ms);
 * a storm after it spends that and the next seconds' earnings, and every
 * 10 s of it stays inside 1 % of its CPU time, the calls counted late aside.
 */
static void test_bank_cap(void **state)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;
	__u64 now = 0, spent_at[200] = { 0 };
	int step = 0;

	(void)state;
	budget_cfg(&cfg);
	cfg.window_ns = 5 * MS;
	cp_alloc_guard_init(&g, &cfg, 0);
	/* quiet: a few calls each 100 ms window, the probes stay attached */
	for (; now < 60 * S; now += 100 * MS)
		assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 10, 100 * MS, now + 100 * MS),
				 CP_GUARD_NONE);
	assert_int_equal(g.earned_ns, 600 * 769230); /* 0.769 ms a tick */
	assert_true(g.earned_ns - g.spent_ns - g.forfeit_ns <= 23076923);
	/* the storm: each 100 ms tick the open window takes what the allowance lets it */
	for (; now < 80 * S; now += 100 * MS) {
		__u64 allow = cp_alloc_guard_allowance(&g, &cfg), calls = 0;

		if (!g.backed_off)
			calls = allow == ~0ull ? 100000 : allow;
		cp_alloc_guard_tick(&g, &cfg, calls, 100 * MS, now + 100 * MS);
		spent_at[step++] = g.spent_ns;
		/* every 10 s ending here: at most 1 % of its 10 s of CPU, and a window's late calls */
		if (step > 100)
			assert_true(g.spent_ns - spent_at[step - 101] <= 100 * MS + 128 * 1000);
	}
	assert_true(step > 100);
}

/*
 * A target on one CPU that would call its allocator a million times a
 * second (1 us a call: all of its time) for 60 s, the loop ticking every
 * 100 ms and a watcher cutting each window at its allowance: at every tick
 * the spending is at most the earnings (or the credit, early on) plus the
 * calls counted late, the probes are attached about the budget's share
 * of the time, and the windows are few: one each time the bank is nearly
 * full again.
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
	/*
	 * 1 % x 10/13 of 60 s of CPU is 461.5 ms of calls: spent less what the
	 * account holds at the end (up to nine tenths of a bank, 20.8 ms) and
	 * at most the late calls more; attached about that long (1 us a call)
	 */
	assert_in_range(g.spent_ns, 435 * MS, 470 * MS);
	assert_in_range(attached, 435 * MS, 480 * MS);
	/*
	 * each window waits for nine tenths of a full bank, 2.7 s of earnings:
	 * 22 windows in 60 s at most, the credit's first one aside (a window
	 * for each 5.128 ms earned would be 90: each costs the profiler alike)
	 */
	assert_in_range(g.budget_offs, 20, 23);
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
	/* 1 s of CPU earned 7.6923 ms (1 % x 10/13); a burst of 20000 calls spends 20: off */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 20000, 0, now + 5 * MS), CP_GUARD_DETACH);
	now += 5 * MS;
	/* the next 500 ms read no CPU time at all (the last tick of 10 ms comes late) */
	for (int i = 1; i <= 100; i++)
		cp_alloc_guard_tick(&g, &cfg, 0, 0, now + i * 5 * MS);
	now += 500 * MS;
	assert_int_equal(g.cpu_ppm, CP_GUARD_MIN_CPU_PPM);
	assert_true(g.until_ns - now > 10 * S);
	/*
	 * then the target runs a whole CPU again. The account is 12.3077 ms
	 * short. A window at the burst's rate (4 million calls/s: 20000 calls
	 * in 5 ms) and 128 late calls want 20.128 ms, but nine tenths of a
	 * full bank are more once the CPU rate is measured at one CPU again
	 * (3 s at 1 % x 10/13: 23.0769 ms, nine tenths 20.7692 ms): 33.0769 ms
	 * to earn at 0.769230 ms a tick. 43 ticks are 38 ns short, so the
	 * window opens at the tick 4.4 s on, not 10 s on
	 */
	for (int i = 1; i < 44; i++)
		assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 0, 100 * MS, now + i * 100 * MS),
				 CP_GUARD_NONE);
	/* while the last probes are still coming off, the window waits, looked at every 10 ms */
	now += 4400 * MS;
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
	/* the tick's program timed itself at 2 us a tick: 5000 ticks cost 60 ms */
	u.tick_prog_ns = 2000;
	cp_budget_estimate(&u, &s);
	assert_int_equal(s.ticks_ns, 60 * MS);
	assert_int_equal(cp_budget_total_ppm(&s), 10900);
	s.target_cpu_ns = 0;
	assert_int_equal(cp_budget_ppm_of(&s, s.ticks_ns), 0);
}

/*
 * The estimate per interval: a target on one CPU ticked 100 times a second
 * (10 us each: 0.1 %), with a burst of 20000 calls (1 us each) in its 15th
 * second; readings once a second. Each interval of 10 s
 * ending at a reading is priced; the costliest holds the burst.
 */
static void test_intervals(void **state)
{
	struct cp_unit_costs u = { .tick_ns = 10000, .uprobe_ns = 600, .uretprobe_ns = 400 };
	struct cp_budget_intervals iv;
	struct cp_budget_interval w;
	struct cp_budget_reading r = { 0 };

	(void)state;
	cp_budget_intervals_init(&iv, 100 * S);
	assert_true(cp_budget_intervals_due(&iv, 100 * S));
	assert_false(cp_budget_intervals_worst(&iv, &u, &w)); /* none yet */
	for (int sec = 0; sec <= 25; sec++) {
		r.at_ns = 100 * S + (__u64)sec * S;
		r.cpu_ns = r.at_ns - 100 * S;
		r.c.ticks = (__u64)sec * 100;
		if (sec >= 15)
			r.c.alloc_calls = 20000;
		assert_true(cp_budget_intervals_due(&iv, r.at_ns));
		cp_budget_intervals_add(&iv, &u, 2000, &r);
		assert_false(cp_budget_intervals_due(&iv, r.at_ns + S - 1));
		/* readings 0 to 9: no interval of 10 s yet */
		assert_int_equal(iv.count, sec < 10 ? 0 : (__u64)sec - 9);
	}
	/*
	 * 16 intervals, 0-10 s to 15-25 s. Those with the burst, counted
	 * between the readings of 14 s and 15 s (5-15 s to 14-24 s), cost
	 * 1000 ticks x 10 us + 20000 x 1 us = 30 ms of 10 s: 0.3 %, over the
	 * 0.2 % budget; the others 0.1 %
	 */
	assert_true(cp_budget_intervals_worst(&iv, &u, &w));
	assert_int_equal(w.ppm, 3000);
	assert_int_equal(w.from_ns, 5 * S);
	assert_int_equal(w.to_ns, 15 * S);
	assert_int_equal(w.cpu_ns, 10 * S);
	assert_int_equal(w.c.alloc_calls, 20000);
	assert_int_equal(iv.over, 10);
	/* priced again with what a call was found to cost later: 2 us */
	u.alloc_prog_ns = 1000;
	assert_true(cp_budget_intervals_worst(&iv, &u, &w));
	assert_int_equal(w.ppm, 5000);
	/*
	 * the same calls with the programs' own run time counted, 1 ms (a
	 * twentieth of 20000 calls at the later figure): 10 ms of ticks +
	 * 20000 x 1 us of traps + 1 ms of 10 s, 0.31 %, whatever figure a
	 * later measure gives
	 */
	w.c.alloc_prog_ns = 1000000;
	assert_int_equal(cp_budget_interval_ppm(&u, &w.c, w.cpu_ns), 3100);
	u.alloc_prog_ns = 9000;
	assert_int_equal(cp_budget_interval_ppm(&u, &w.c, w.cpu_ns), 3100);
	/* counts with no CPU time: all of it; none: nothing */
	assert_int_equal(cp_budget_interval_ppm(&u, &w.c, 0), CP_PPM);
	memset(&w.c, 0, sizeof(w.c));
	assert_int_equal(cp_budget_interval_ppm(&u, &w.c, 0), 0);
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
	/* and the programs' run time on that CPU, 30 ms entry and return, 2 ms of system calls' */
	allocating.alloc_prog_ns = 30 * MS;
	allocating.sys_prog_ns = 2 * MS;
	assert_int_equal(cp_budget_cpu_ppm(&u, &allocating, s.wall_ns), 11290);
	/* the tick's program's run time on that CPU, 3 ms: on top of the 1000 ticks' */
	ticked.tick_prog_ns = 3 * MS;
	assert_int_equal(cp_budget_cpu_ppm(&u, &ticked, s.wall_ns), 1350);
	/* not timed there: at its cost per tick over the run, 2 us */
	ticked.tick_prog_ns = 0;
	u.tick_prog_ns = 2000;
	assert_int_equal(cp_budget_cpu_ppm(&u, &ticked, s.wall_ns), 1250);
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
	/*
	 * Measured again under load: 1300 ns where 950 was in use. The figure
	 * rises, each call counted so far owes 350 ns; a lower measure later
	 * changes nothing (the estimate must not undercount)
	 */
	ns = 950;
	assert_int_equal(cp_prog_cost_raise(&ns, 1300), 350);
	assert_int_equal(ns, 1300);
	assert_int_equal(cp_prog_cost_raise(&ns, 900), 0);
	assert_int_equal(ns, 1300);
	/* an estimate of 40 ms revised to 46 ms: +15 %; not raised, or nothing: 0 */
	assert_int_equal(cp_prog_cost_revised_ppm(40 * MS, 46 * MS), 150000);
	assert_int_equal(cp_prog_cost_revised_ppm(40 * MS, 40 * MS), 0);
	assert_int_equal(cp_prog_cost_revised_ppm(0, 46 * MS), 0);
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

/*
 * The system-call programs' windows: every one while each records a
 * mapping; after one that records none, one in 2, 4, then 8 at most; a
 * mapping brings every window back.
 */
static void test_sys_windows(void **state)
{
	/* the windows, in order: 1 with the programs, 0 without */
	static const char want[] = "1"	      /* records a mapping: every window still */
				   "1"	      /* none: one in 2 from here */
				   "01"	      /* none: one in 4 */
				   "0001"     /* none: one in 8 */
				   "00000001" /* none: 8 is the most */
				   "00000001" /* a mapping: every window */
				   "1";	      /* none: one in 2 again */
	struct cp_sys_windows w;
	size_t with = 0, n = strlen(want);

	(void)state;
	cp_sys_windows_init(&w);
	for (size_t i = 0; i < n; i++) {
		bool on = cp_sys_windows_begin(&w);

		if (on != (want[i] == '1'))
			fail_msg("window %zu: %s the programs", i, on ? "with" : "without");
		if (!on)
			continue;
		/* the first window they went with and the sixth recorded a mapping */
		cp_sys_windows_end(&w, with == 0 || with == 5);
		with++;
	}
	assert_int_equal(w.with, 7);
	assert_int_equal(w.without, n - 7);
	assert_int_equal(w.every, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plans),	     cmocka_unit_test(test_windows),
		cmocka_unit_test(test_storm_account), cmocka_unit_test(test_bank_cap),
		cmocka_unit_test(test_coarse_cpu_time),
		cmocka_unit_test(test_window_caps), cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_proc_stat), cmocka_unit_test(test_prog_cost),
		cmocka_unit_test(test_per_cpu),	    cmocka_unit_test(test_per_process),
		cmocka_unit_test(test_bp_rate), cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_sys_windows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
