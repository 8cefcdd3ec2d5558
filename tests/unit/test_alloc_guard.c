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

#define MS	1000000ull

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
	{ "under budget: nothing", 1000,
	  { { 50, 100, N }, { 99, 200, N }, { 100, 300, N } }, 3, 0, 0 },
	{ "over budget: detach, then attach after 1 s", 1000,
	  { { 101, 100, D }, { 0, 600, N }, { 0, 1099, N }, { 0, 1100, A } }, 4, 1, 1000 },
	{ "calls while backed off are ignored", 1000,
	  { { 200, 100, D }, { 100000, 1100, A }, { 10, 1200, N } }, 3, 1, 1000 },
	{ "rates are measured over >= 100 ms: short ticks accumulate", 1000,
	  { { 60, 50, N }, { 60, 100, D } }, 2, 1, 0 },
	{ "a short burst inside a long interval stays under budget", 1000,
	  { { 40, 40, N }, { 50, 100, N } }, 2, 0, 0 },
	{ "back-offs double: 1 s, 2 s, then capped at 4 s", 1000,
	  { { 500, 100, D }, { 0, 1100, A }, { 500, 1200, D }, { 0, 3100, N }, { 0, 3200, A },
	    { 500, 3300, D }, { 0, 7300, A }, { 500, 7400, D }, { 0, 11400, A } }, 9, 4, 11000 },
	{ "calm intervals shrink the next back-off again", 1000,
	  { { 500, 100, D }, { 0, 1100, A }, { 10, 1200, N }, { 500, 1300, D }, { 0, 2300, A } },
	  5, 2, 2000 },
	{ "0 turns the guard off", 0,
	  { { 1000000, 100, N }, { 1000000, 200, N } }, 2, 0, 0 },
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
			enum cp_guard_action got = cp_alloc_guard_tick(&g, &cfg, c->ticks[t].calls, 0,
								       c->ticks[t].at_ms * MS);

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
