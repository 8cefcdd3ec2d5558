// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * When the calibration stops measuring a unit cost (budget/cal_rounds.h):
 * the median's confidence interval, its ranks worked out from the binomial
 * distribution in the comment next to each case, and the stopping rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "budget/cal_rounds.h"

static void fill(struct cp_cal_rounds *r, const __u64 *v, int n)
{
	*r = (struct cp_cal_rounds){0};
	for (int i = 0; i < n; i++)
		cp_cal_rounds__add(r, v[i]);
}

struct rank_case {
	int n;
	__u64 want_lo; /* rounds 1..n (shuffled): the rank k is the low bound */
};

/*
 * k is the largest with sum(C(n, i), i < k) * 20 <= 2^n: n = 5: 1 * 20 <= 32,
 * 6 * 20 > 32, k = 1 (93.75 %); n = 8: (1 + 8) * 20 = 180 <= 256, 37 * 20 > 256,
 * k = 2; n = 10: 11 * 20 = 220 <= 1024, 56 * 20 > 1024, k = 2; n = 11:
 * 67 * 20 = 1340 <= 2048, 232 * 20 > 2048, k = 3.
 */
static const struct rank_case ranks[] = {
	{5, 1}, {6, 1}, {7, 1}, {8, 2}, {9, 2}, {10, 2}, {11, 3},
};

static void test_interval_ranks(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(ranks) / sizeof(ranks[0]); c++) {
		struct cp_cal_rounds r = {0};
		__u64 lo = 0, hi = 0;

		/* n, n - 1, ..., 1: the order measured does not matter */
		for (int i = ranks[c].n; i > 0; i--)
			cp_cal_rounds__add(&r, (__u64)i);
		assert_true(cp_cal_rounds__interval(&r, &lo, &hi));
		assert_int_equal(lo, ranks[c].want_lo);
		assert_int_equal(hi, (__u64)ranks[c].n + 1 - ranks[c].want_lo);
	}
}

static void test_too_few(void **state)
{
	const __u64 v[] = {45000, 45000, 45000, 45000};
	struct cp_cal_rounds r;
	__u64 lo = 7, hi = 7;

	(void)state;
	fill(&r, v, 4);
	/* four equal rounds: no interval at 90 % yet, so another round */
	assert_false(cp_cal_rounds__interval(&r, &lo, &hi));
	assert_int_equal(lo, 7);
	assert_true(cp_cal_rounds__more(&r));
	cp_cal_rounds__add(&r, 45000);
	assert_false(cp_cal_rounds__more(&r));
	assert_int_equal(cp_cal_rounds__median(&r), 45000);
}

struct stop_case {
	const char *what;
	__u64 v[CP_CAL_MAX_ROUNDS];
	int n;
	bool want_more;
	__u64 want_median;
};

static const struct stop_case stops[] = {
	/* min..max = 44000..48400: 4400 <= 10 % of the median 45000 */
	{"quiet tick", {45000, 44000, 48400, 46000, 44500}, 5, false, 45000},
	/* 44000..50000: 6000 > 4500 */
	{"one slow round in five", {45000, 44000, 50000, 46000, 44500}, 5, true, 45000},
	/* eight: ranks 2 and 7, 44000..46000, the outliers 13000 and 61000 left out */
	{"outliers at both ends, eight rounds",
	 {45000, 13000, 44000, 61000, 46000, 44500, 45500, 45200},
	 8,
	 false,
	 45100},
	/* 150..250: 100 ns wide, 10 % of 200 is 20 but the floor is 100 */
	{"system call at the floor", {200, 150, 250, 180, 220}, 5, false, 200},
	{"system call over the floor", {200, 150, 251, 180, 220}, 5, true, 200},
	/* a breakpoint that never fires costs nothing measurable: 1, not 0 */
	{"nothing measurable", {0, 0, 3, 0, 1}, 5, false, 1},
	/* eleven noisy rounds: no more, whatever the interval */
	{"full",
	 {1000, 90000, 2000, 80000, 3000, 70000, 4000, 60000, 5000, 50000, 6000},
	 11,
	 false,
	 6000},
};

static void test_stop(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(stops) / sizeof(stops[0]); c++) {
		struct cp_cal_rounds r;

		fill(&r, stops[c].v, stops[c].n);
		if (cp_cal_rounds__more(&r) != stops[c].want_more)
			fail_msg("%s: more %d", stops[c].what, !stops[c].want_more);
		if (cp_cal_rounds__median(&r) != stops[c].want_median)
			fail_msg("%s: median %llu, want %llu", stops[c].what,
				 (unsigned long long)cp_cal_rounds__median(&r),
				 (unsigned long long)stops[c].want_median);
	}
}

static void test_full_and_any(void **state)
{
	struct cp_cal_rounds r[2] = {0};

	(void)state;
	assert_int_equal(cp_cal_rounds__median(&r[0]), 1); /* none yet */
	for (int i = 0; i < CP_CAL_MAX_ROUNDS + 3; i++)
		cp_cal_rounds__add(&r[0], i % 2 ? 1000 : 100000);
	/* the rounds past the last are not kept */
	assert_int_equal(r[0].n, CP_CAL_MAX_ROUNDS);
	assert_false(cp_cal_rounds__more(&r[0]));
	/* one cost settled, the other with no rounds: the pair needs more */
	assert_true(cp_cal_rounds__any_more(r, 2));
	assert_false(cp_cal_rounds__any_more(r, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval_ranks),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_full_and_any),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
