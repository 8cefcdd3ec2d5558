// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --max-alloc-rate: a table of ticks (calls since the previous tick, time)
 * and what the guard must do. Budget 1000 calls/s, intervals of 100 ms,
 * back-offs of 1 s doubling up to 4 s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "budget/alloc_guard.h"

#define MS 1000000ull

struct tick {
	__u64 calls;
	__u64 at_ms;
	enum cp_guard_action want;
};

struct guard_case {
	const char *what;
	__u64 max_rate;
	struct tick ticks[12];
	int nr;
	__u64 backoffs;
	__u64 backoff_total_ms;
};

#define N CP_GUARD_NONE
#define D CP_GUARD_DETACH
#define A CP_GUARD_ATTACH

static const struct guard_case cases[] = {
	{"under budget: nothing", 1000, {{50, 100, N}, {99, 200, N}, {100, 300, N}}, 3, 0, 0},
	{"over budget: detach, then attach after 1 s",
	 1000,
	 {{101, 100, D}, {0, 600, N}, {0, 1099, N}, {0, 1100, A}},
	 4,
	 1,
	 1000},
	{"calls while backed off are ignored",
	 1000,
	 {{200, 100, D}, {100000, 1100, A}, {10, 1200, N}},
	 3,
	 1,
	 1000},
	{"rates are measured over >= 100 ms: short ticks accumulate",
	 1000,
	 {{60, 50, N}, {60, 100, D}},
	 2,
	 1,
	 0},
	{"a short burst inside a long interval stays under budget",
	 1000,
	 {{40, 40, N}, {50, 100, N}},
	 2,
	 0,
	 0},
	{"back-offs double: 1 s, 2 s, then capped at 4 s",
	 1000,
	 {{500, 100, D},
	  {0, 1100, A},
	  {500, 1200, D},
	  {0, 3100, N},
	  {0, 3200, A},
	  {500, 3300, D},
	  {0, 7300, A},
	  {500, 7400, D},
	  {0, 11400, A}},
	 9,
	 4,
	 11000},
	{"calm intervals shrink the next back-off again",
	 1000,
	 {{500, 100, D}, {0, 1100, A}, {10, 1200, N}, {500, 1300, D}, {0, 2300, A}},
	 5,
	 2,
	 2000},
	{"0 turns the guard off", 0, {{1000000, 100, N}, {1000000, 200, N}}, 2, 0, 0},
};

static void test_ticks(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct guard_case *c = &cases[i];
		struct cp_alloc_guard_cfg cfg;
		struct cp_alloc_guard g;

		cp_alloc_guard_cfg_init(&cfg, c->max_rate);
		cfg.max_backoff_ns = 4000 * MS;
		cp_alloc_guard_init(&g, &cfg, 0);
		for (int t = 0; t < c->nr; t++) {
			enum cp_guard_action got = cp_alloc_guard_tick(&g, &cfg, c->ticks[t].calls,
								       0, c->ticks[t].at_ms * MS);

			if (got != c->ticks[t].want)
				fail_msg("%s: tick %d at %llu ms: got %d, want %d", c->what, t,
					 (unsigned long long)c->ticks[t].at_ms, got,
					 c->ticks[t].want);
			assert_int_equal(g.backed_off, got == D ? 1 : got == A ? 0 : g.backed_off);
		}
		assert_int_equal(g.backoffs, c->backoffs);
		assert_int_equal(g.backoff_total_ns, c->backoff_total_ms * MS);
	}
}

/*
 * The overhead budget on hand-made call-rate sequences: 1 % for the calls,
 * 1 us a call, the default windows, a target on one CPU. The loop ticks the
 * guard when it asks (cp_alloc_guard_next_ns()), at least 100 us and at
 * most 10 ms after the previous tick. At every tick what the calls cost
 * must be inside what the target's CPU time earned, plus the initial
 * credit: the shortest window (2 ms) at one CPU's rate.
 */
#define US	  1000ull
#define CREDIT_NS (2 * MS)

struct sim {
	__u64 storm_at_ns;  /* the storm starts here; quiet before */
	__u64 calls_per_ms; /* its calls while the probes are attached */
	__u64 cpu_ppm_on;   /* its CPU rate while attached (in ppm of one) */
	__u64 cpu_ppm_off;  /* and while detached: slower on a loaded machine */
	__u64 end_ns;
};

static void run_sim(const char *what, const struct sim *sm)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;
	__u64 now = 0, spent = 0, cpu = 0, windows = 0, attached = 0;
	bool on = true;

	cp_alloc_guard_cfg_init(&cfg, 0);
	cfg.budget_ppm = 10000;
	cfg.call_ns = 1000;
	cp_alloc_guard_init(&g, &cfg, 0);
	while (now < sm->end_ns) {
		__u64 next = cp_alloc_guard_next_ns(&g, &cfg), at = now + 10 * MS, dt, calls = 0,
		      dcpu;
		enum cp_guard_action act;

		if (next && next < at)
			at = next;
		if (at < now + 100 * US)
			at = now + 100 * US;
		dt = at - now;
		/* calls only while attached, and only once the storm is on */
		if (on && at > sm->storm_at_ns)
			calls = (at - (now > sm->storm_at_ns ? now : sm->storm_at_ns)) *
				sm->calls_per_ms / MS;
		dcpu = at <= sm->storm_at_ns
			       ? dt / 100
			       : dt * (on ? sm->cpu_ppm_on : sm->cpu_ppm_off) / 1000000;
		now = at;
		spent += calls * cfg.call_ns;
		cpu += dcpu;
		attached += on ? dt : 0;
		act = cp_alloc_guard_tick(&g, &cfg, calls, dcpu, now);
		if (spent > CREDIT_NS + cpu / 100)
			fail_msg("%s: at %llu ms, %llu us spent on %llu calls where %llu us were "
				 "earned "
				 "(%llu ms of CPU time, attached %llu ms in %llu windows)",
				 what, (unsigned long long)(now / MS),
				 (unsigned long long)(spent / US),
				 (unsigned long long)(spent / cfg.call_ns),
				 (unsigned long long)((CREDIT_NS + cpu / 100) / US),
				 (unsigned long long)(cpu / MS),
				 (unsigned long long)(attached / MS), (unsigned long long)windows);
		if (act == D)
			on = false;
		if (act == A) {
			on = true;
			windows++;
		}
	}
	/* and the storm is still seen: windows keep opening */
	if (windows < 2 || spent < cpu / 200)
		fail_msg("%s: %llu windows, %llu us spent of %llu us earned", what,
			 (unsigned long long)windows, (unsigned long long)(spent / US),
			 (unsigned long long)(cpu / 100 / US));
}

/* A storm that starts inside a window: its first window is cut before it overspends. */
static void test_storm_inside_window(void **state)
{
	(void)state;
	run_sim("a storm 51.3 ms into a quiet window", &(struct sim){.storm_at_ns = 51300 * US,
								     .calls_per_ms = 1000,
								     .cpu_ppm_on = 1000000,
								     .cpu_ppm_off = 1000000,
								     .end_ns = 3000 * MS});
	run_sim("a storm from the first instant", &(struct sim){.storm_at_ns = 0,
								.calls_per_ms = 1000,
								.cpu_ppm_on = 1000000,
								.cpu_ppm_off = 1000000,
								.end_ns = 3000 * MS});
}

/*
 * The target runs at one CPU while attached (the traps are its time) and
 * at a fifth of one while detached (two hogs beside it): the time off must
 * last until that slower time has earned, not what the window's rate
 * promised.
 */
static void test_slower_while_detached(void **state)
{
	(void)state;
	run_sim("a storm that runs slower while detached", &(struct sim){.storm_at_ns = 0,
									 .calls_per_ms = 1000,
									 .cpu_ppm_on = 1000000,
									 .cpu_ppm_off = 200000,
									 .end_ns = 10000 * MS});
	run_sim("a light storm, slower while detached", &(struct sim){.storm_at_ns = 20 * MS,
								      .calls_per_ms = 50,
								      .cpu_ppm_on = 400000,
								      .cpu_ppm_off = 100000,
								      .end_ns = 10000 * MS});
}

static void test_rate_does_not_overflow(void **state)
{
	struct cp_alloc_guard_cfg cfg;
	struct cp_alloc_guard g;

	(void)state;
	cp_alloc_guard_cfg_init(&cfg, 200000);
	cp_alloc_guard_init(&g, &cfg, 0);
	/* 10^11 calls in 100 s: 10^9/s, and calls * 10^9 passes 2^64 */
	assert_int_equal(cp_alloc_guard_tick(&g, &cfg, 100000000000ull, 0, 100000 * MS), D);
	assert_int_equal(g.last_rate, 1000000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_rate_does_not_overflow),
		cmocka_unit_test(test_storm_inside_window),
		cmocka_unit_test(test_slower_while_detached),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
