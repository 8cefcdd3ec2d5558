// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * C2Sim's conflict misses (papers/c2sim.txt §3.1) on hand-worked sequences:
 * a miss of the set-associative LRU cache that hits in a fully-associative
 * LRU cache of the same capacity. L1 here: 64 sets x 8 ways of 64-byte
 * lines (32 KiB), so addresses 4096 bytes apart share a set.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "classify/lru_model.h"

#define L1	{ .line_bytes = 64, .sets = 64, .ways = 8 }

/* @items addresses @stride bytes apart, cycled @rounds times, and what the models say. */
struct lru_case {
	const char *what;
	struct cp_lru_geom geom;
	int items, stride, rounds;
	__u32 lines, compulsory, sa_misses, fa_misses, conflict;
};

static const struct lru_case cases[] = {
	/* each reuse follows the 8 other lines of its set (8 ways): all miss; 8 < 512 lines */
	{ "9 lines on one 8-way set", L1, 9, 4096, 3, 9, 9, 27, 9, 18 },
	{ "8 lines fit an 8-way set", L1, 8, 4096, 3, 8, 8, 8, 8, 0 },
	/* 64 longs: 8 a line, lines on consecutive sets; only first touches miss */
	{ "sequential walk", L1, 64, 8, 1, 8, 8, 8, 8, 0 },
	/*
	 * 2 sets x 2 ways, lines 0..4 cycled: each reuse follows the 4 others, so
	 * the fully-associative cache misses; set 0 (lines 0, 2, 4) thrashes, set
	 * 1 (lines 1, 3) even hits. Capacity, no conflict.
	 */
	{ "capacity", { 64, 2, 2 }, 5, 64, 3, 5, 5, 5 + 6, 15, 0 },
	/* 4 sets x 2 ways, lines 0, 4, 8 (all set 0) cycled: the set thrashes, 8 lines hold 3 */
	{ "3 lines on one 2-way set", { 64, 4, 2 }, 3, 256, 4, 3, 3, 12, 3, 9 },
};

static void test_cases(void **state)
{
	__u64 a[CP_LRU_MAX_ACCESSES];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct lru_case *c = &cases[i];
		struct cp_lru_result r;
		size_t n = 0;

		for (int round = 0; round < c->rounds; round++)
			for (int k = 0; k < c->items; k++)
				a[n++] = 0x100000 + (__u64)k * (__u64)c->stride;
		assert_int_equal(cp_lru_simulate(&c->geom, a, n, &r), 0);
		if (r.accesses != n || r.lines != c->lines || r.compulsory != c->compulsory ||
		    r.sa_misses != c->sa_misses || r.fa_misses != c->fa_misses ||
		    r.conflict != c->conflict)
			fail_msg("%s: lines %u first %u sa %u fa %u conflict %u", c->what, r.lines,
				 r.compulsory, r.sa_misses, r.fa_misses, r.conflict);
	}
}

/* Shares: of all set-associative misses, and of those after the first touches. */
static void test_shares(void **state)
{
	struct cp_lru_result thrash = { .compulsory = 9, .sa_misses = 27, .conflict = 18 };
	struct cp_lru_result fits = { .compulsory = 8, .sa_misses = 8 };
	struct cp_lru_result capacity = { .compulsory = 5, .sa_misses = 11 };

	(void)state;
	assert_float_equal(cp_lru_conflict_share(&thrash), 18.0 / 27.0, 1e-9);
	assert_float_equal(cp_lru_reuse_conflict_share(&thrash), 1.0, 1e-9);
	assert_float_equal(cp_lru_conflict_share(&fits), 0.0, 1e-9);
	assert_float_equal(cp_lru_reuse_conflict_share(&fits), -1.0, 1e-9);
	assert_float_equal(cp_lru_reuse_conflict_share(&capacity), 0.0, 1e-9);
}

static void test_bad_input(void **state)
{
	const struct cp_lru_geom no_ways = { .line_bytes = 64, .sets = 64, .ways = 0 };
	const struct cp_lru_geom l1 = L1;
	static __u64 many[CP_LRU_MAX_ACCESSES + 1];
	struct cp_lru_result r;

	(void)state;
	assert_int_equal(cp_lru_simulate(&no_ways, many, 1, &r), -EINVAL);
	assert_int_equal(cp_lru_simulate(&l1, many, CP_LRU_MAX_ACCESSES + 1, &r), -E2BIG);
	assert_int_equal(cp_lru_simulate(&l1, many, 0, &r), 0);
	assert_int_equal(r.accesses, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
