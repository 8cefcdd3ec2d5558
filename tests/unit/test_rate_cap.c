// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --max-sample-rate decisions: a table of one CPU's events over one
 * interval, and the periods that come out. Budget 20000/s, headroom 25 %
 * (target 16000/s), lowering only under 50 % (10000/s).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "live/rate_cap.h"

#define SEC		1000000000ull
#define IBS_MAX		0xffff0ull

struct ev {
	__u64 base, period, samples, max;
	__u32 align;
	__u64 want;		/* expected new period */
};

struct cap_case {
	const char *what;
	__u64 max_rate;
	__u64 elapsed_ns;
	int nr;
	struct ev ev[3];
	int changed;
	__u64 rate;
};

static const struct cap_case cases[] = {
	{ "under budget at the base period: untouched", 20000, SEC, 1,
	  { { 20000, 20000, 10000, 0, 1, 20000 } }, 0, 10000 },
	{ "exactly at budget: untouched", 20000, SEC, 1,
	  { { 20000, 20000, 20000, 0, 1, 20000 } }, 0, 20000 },
	{ "twice the budget: period x 40000/16000", 20000, SEC, 1,
	  { { 20000, 20000, 40000, 0, 1, 50000 } }, 1, 40000 },
	{ "the same rate over half a second", 20000, SEC / 2, 1,
	  { { 20000, 20000, 20000, 0, 1, 50000 } }, 1, 40000 },
	{ "loads and stores scale together, keeping their ratio", 20000, SEC, 2,
	  { { 20000, 20000, 30000, 0, 1, 50000 }, { 50000, 50000, 10000, 0, 1, 125000 } },
	  2, 40000 },
	{ "rounded up, never down: ceil(20000 * 20001 / 16000)", 20000, SEC, 1,
	  { { 20000, 20000, 20001, 0, 1, 25002 } }, 1, 20001 },
	{ "IBS: aligned up to 16 ops", 20000, SEC, 1,
	  { { 20000, 20000, 30000, IBS_MAX, 16, 37504 } }, 1, 30000 },
	{ "clamped to the PMU's max period", 20000, SEC, 1,
	  { { 20000, 20000, 1000000, IBS_MAX, 16, IBS_MAX } }, 1, 1000000 },
	{ "already at the max: nothing left to change", 20000, SEC, 1,
	  { { 20000, IBS_MAX, 1000000, IBS_MAX, 16, IBS_MAX } }, 0, 1000000 },
	{ "load drops: back down to the base exactly", 20000, SEC, 1,
	  { { 20000, 80000, 4000, 0, 1, 20000 } }, 1, 4000 },
	{ "load drops: never below the base", 20000, SEC, 1,
	  { { 20000, 50000, 1000, 0, 1, 20000 } }, 1, 1000 },
	{ "load drops partway: period x 8000/16000", 20000, SEC, 1,
	  { { 20000, 100000, 8000, 0, 1, 50000 } }, 1, 8000 },
	{ "between half the budget and the budget: hysteresis holds", 20000, SEC, 1,
	  { { 20000, 50000, 12000, 0, 1, 50000 } }, 0, 12000 },
	{ "idle: raised periods return to the base", 20000, SEC, 2,
	  { { 20000, 60000, 0, 0, 1, 20000 }, { 50000, 150000, 0, 0, 1, 50000 } }, 2, 0 },
	{ "lowering leaves an event already at its base alone", 20000, SEC, 2,
	  { { 20000, 40000, 2000, 0, 1, 20000 }, { 50000, 50000, 0, 0, 1, 50000 } }, 1, 2000 },
	{ "no time elapsed: no decision", 20000, 0, 1,
	  { { 20000, 20000, 40000, 0, 1, 20000 } }, 0, 0 },
	{ "--max-sample-rate 0: no cap, rate still measured", 0, SEC, 1,
	  { { 20000, 20000, 90000, 0, 1, 20000 } }, 0, 90000 },
	{ "huge numbers do not overflow", 20000, 1, 1,
	  { { 1ull << 40, 1ull << 40, 1000000000, 0, 1, ~0ull } }, 1, 1000000000ull * SEC },
	{ "three events of one CPU", 1000, SEC, 3,
	  { { 100, 100, 1000, 0, 1, 250 }, { 200, 200, 500, 0, 1, 500 },
	    { 300, 300, 500, 0, 1, 750 } }, 3, 2000 },
};

static void test_decide_table(void **state)
{
	struct cp_rate_cap_cfg cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cap_case *c = &cases[i];
		struct cp_rate_unit u = { .nr = c->nr };
		__u64 rate = 12345;

		print_message("# %s\n", c->what);
		cp_rate_cap_cfg_init(&cfg, c->max_rate);
		for (int k = 0; k < c->nr; k++) {
			u.ev[k].base_period = c->ev[k].base;
			u.ev[k].period = c->ev[k].period;
			u.ev[k].samples = c->ev[k].samples;
			u.ev[k].max_period = c->ev[k].max;
			u.ev[k].align = c->ev[k].align;
			u.ev[k].new_period = 777;
		}
		assert_int_equal(cp_rate_cap_decide(&cfg, &u, c->elapsed_ns, &rate), c->changed);
		assert_int_equal(rate, c->rate);
		for (int k = 0; k < c->nr; k++)
			assert_int_equal(u.ev[k].new_period, c->ev[k].want);
	}
}

/* After a raise, the predicted rate is under the budget; a second interval at it changes nothing. */
static void test_converges(void **state)
{
	struct cp_rate_cap_cfg cfg;
	struct cp_rate_unit u = { .nr = 1 };
	__u64 events_per_s = 900000000ull;	/* loads retired per second on this CPU */

	(void)state;
	cp_rate_cap_cfg_init(&cfg, 20000);
	u.ev[0].base_period = u.ev[0].period = 20000;
	for (int round = 0; round < 3; round++) {
		u.ev[0].samples = events_per_s / u.ev[0].period;
		cp_rate_cap_decide(&cfg, &u, SEC, NULL);
		u.ev[0].period = u.ev[0].new_period;
	}
	assert_true(events_per_s / u.ev[0].period <= 20000);
	assert_true(events_per_s / u.ev[0].period >= 10000);	/* not over-throttled */
	u.ev[0].samples = events_per_s / u.ev[0].period;
	assert_int_equal(cp_rate_cap_decide(&cfg, &u, SEC, NULL), 0);
}

static void test_samples_from_counts(void **state)
{
	(void)state;
	assert_int_equal(cp_rate_samples(0, 100000, 20000), 5);
	assert_int_equal(cp_rate_samples(100000, 139999, 20000), 1);
	assert_int_equal(cp_rate_samples(5, 5, 1), 0);
	assert_int_equal(cp_rate_samples(7, 1007, 1), 1000);	/* software events: exact */
	assert_int_equal(cp_rate_samples(100, 50, 1), 0);	/* counter went back */
	assert_int_equal(cp_rate_samples(0, 100, 0), 0);	/* counting event */
}

/*
 * The kernel's perf_event_max_sample_rate (100000 by default, lowered by the
 * kernel itself when interrupts take long): half of it is the cap when lower
 * than --max-sample-rate, and stays one when the option asks for none.
 */
static void test_kernel_limit(void **state)
{
	(void)state;
	assert_int_equal(cp_rate_cap_limit(20000, 100000), 20000);
	assert_int_equal(cp_rate_cap_limit(20000, 25000), 12500);	/* lowered: throttling ahead */
	assert_int_equal(cp_rate_cap_limit(0, 100000), 50000);
	assert_int_equal(cp_rate_cap_limit(20000, 0), 20000);		/* unreadable */
	assert_int_equal(cp_rate_cap_limit(0, 0), 0);
	assert_int_equal(cp_rate_cap_limit(20000, 1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_converges),
		cmocka_unit_test(test_samples_from_counts),
		cmocka_unit_test(test_kernel_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
