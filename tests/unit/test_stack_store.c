// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stack store: one entry per (process, frames), bounded, evictions counted. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "profile/stack_store.h"

struct seen {
	size_t n;
	__u32 tgid[64];
	__u32 nr[64];
	__u64 first[64], last[64];
	struct cp_stack_counts c[64];
	int stop_at;			/* 1 + index to stop at; 0: never */
};

static int collect(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
		   const struct cp_stack_counts *c)
{
	struct seen *s = ctx;

	if (s->n < 64) {
		s->tgid[s->n] = tgid;
		s->nr[s->n] = nr;
		s->first[s->n] = pcs[0];
		s->last[s->n] = pcs[nr - 1];
		s->c[s->n] = *c;
	}
	s->n++;
	return s->stop_at && (int)s->n == s->stop_at ? 7 : 0;
}

static struct cp_stack_counts samples(__u64 n)
{
	return (struct cp_stack_counts){ .samples = n, .misses = n / 2, .lat_sum = 10 * n };
}

static void test_same_stack_is_one_entry(void **state)
{
	struct cp_stack_store *s = cp_stack_store__new(16);
	const __u64 a[] = { 0x401000, 0x402000, 0x403000 };
	const __u64 b[] = { 0x401000, 0x402000, 0x404000 };	/* another caller's caller */
	struct cp_stack_counts tick = { .ticks = 3, .bp_hits = 1 }, one = samples(4);
	struct seen seen = { 0 };

	(void)state;
	assert_non_null(s);
	assert_int_equal(cp_stack_store__add(s, 10, a, 3, &one), 0);
	assert_int_equal(cp_stack_store__add(s, 10, a, 3, &one), 0);
	assert_int_equal(cp_stack_store__add(s, 10, a, 3, &tick), 0);
	/* the same frames in another process, a different last frame, a shorter stack */
	assert_int_equal(cp_stack_store__add(s, 11, a, 3, &one), 0);
	assert_int_equal(cp_stack_store__add(s, 10, b, 3, &one), 0);
	assert_int_equal(cp_stack_store__add(s, 10, a, 2, &one), 0);
	assert_int_equal(cp_stack_store__held(s), 4);
	assert_int_equal(cp_stack_store__for_each(s, collect, &seen), 0);
	assert_int_equal(seen.n, 4);
	/* first added first; the counts of one stack added up, field by field */
	assert_int_equal(seen.tgid[0], 10);
	assert_int_equal(seen.nr[0], 3);
	assert_int_equal(seen.last[0], 0x403000);
	assert_int_equal(seen.c[0].samples, 8);
	assert_int_equal(seen.c[0].misses, 4);
	assert_int_equal(seen.c[0].lat_sum, 80);
	assert_int_equal(seen.c[0].ticks, 3);
	assert_int_equal(seen.c[0].bp_hits, 1);
	assert_int_equal(seen.tgid[1], 11);
	assert_int_equal(seen.last[2], 0x404000);
	assert_int_equal(seen.nr[3], 2);
	assert_int_equal(cp_stack_store__evicted(s), 0);
	cp_stack_store__free(s);
}

/* An interval's store (--pprof-dir) starts over at each rotation: nothing of before counts. */
static void test_clear_starts_over(void **state)
{
	struct cp_stack_store *s = cp_stack_store__new(16);
	const __u64 a[] = { 0x401000, 0x402000 }, b[] = { 0x405000, 0x406000, 0x407000 };
	struct cp_stack_counts one = samples(4), two = samples(6);
	struct seen seen = { 0 };

	(void)state;
	assert_int_equal(cp_stack_store__add(s, 10, a, 2, &one), 0);
	assert_int_equal(cp_stack_store__add(s, 10, b, 3, &one), 0);
	cp_stack_store__clear(s);
	assert_int_equal(cp_stack_store__held(s), 0);
	assert_int_equal(cp_stack_store__for_each(s, collect, &seen), 0);
	assert_int_equal(seen.n, 0);
	/* the same stack again is a new entry with the new counts only */
	assert_int_equal(cp_stack_store__add(s, 10, b, 3, &two), 0);
	assert_int_equal(cp_stack_store__add(s, 10, b, 3, &two), 0);
	assert_int_equal(cp_stack_store__for_each(s, collect, &seen), 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.first[0], 0x405000);
	assert_int_equal(seen.last[0], 0x407000);
	assert_int_equal(seen.c[0].samples, 12);
	cp_stack_store__free(s);
}

static void test_bad_depths_refused(void **state)
{
	struct cp_stack_store *s = cp_stack_store__new(4);
	__u64 deep[CP_STACK_DEPTH + 1] = { 1 };
	struct cp_stack_counts one = samples(1);

	(void)state;
	assert_int_equal(cp_stack_store__add(s, 1, deep, 0, &one), -EINVAL);
	assert_int_equal(cp_stack_store__add(s, 1, deep, CP_STACK_DEPTH + 1, &one), -EINVAL);
	assert_int_equal(cp_stack_store__add(s, 1, deep, CP_STACK_DEPTH, &one), 0);
	assert_int_equal(cp_stack_store__held(s), 1);
	cp_stack_store__free(s);
}

/*
 * 16 entries fill a store of 16; the 17th evicts the eighth (2) that
 * weigh least: stacks 1 and 2 have 1 sample each, the others 10 or more.
 */
static void test_full_store_evicts_the_least_counted(void **state)
{
	struct cp_stack_store *s = cp_stack_store__new(16);
	struct seen seen = { 0 };
	__u64 pcs[2];

	(void)state;
	for (__u64 i = 0; i < 16; i++) {
		struct cp_stack_counts c = samples(i == 1 || i == 2 ? 1 : 10 + i);

		pcs[0] = 0x1000 + i;
		pcs[1] = 0x9000;
		assert_int_equal(cp_stack_store__add(s, 5, pcs, 2, &c), 0);
	}
	assert_int_equal(cp_stack_store__evicted(s), 0);
	pcs[0] = 0x2000;
	assert_int_equal(cp_stack_store__add(s, 5, pcs, 2, &(struct cp_stack_counts){ .ticks = 1 }),
			 0);
	assert_int_equal(cp_stack_store__evicted(s), 2);
	assert_int_equal(cp_stack_store__held(s), 15);
	cp_stack_store__for_each(s, collect, &seen);
	assert_int_equal(seen.n, 15);
	for (size_t i = 0; i < seen.n; i++) {
		assert_int_not_equal(seen.first[i], 0x1001);
		assert_int_not_equal(seen.first[i], 0x1002);
	}
	/* the rest kept their order and counts, the new one last */
	assert_int_equal(seen.first[0], 0x1000);
	assert_int_equal(seen.first[1], 0x1003);
	assert_int_equal(seen.c[1].samples, 13);
	assert_int_equal(seen.first[14], 0x2000);
	/* a kept stack is still found: its counts add up, no new entry */
	pcs[0] = 0x1003;
	assert_int_equal(cp_stack_store__add(s, 5, pcs, 2, &(struct cp_stack_counts){ .samples = 1 }),
			 0);
	assert_int_equal(cp_stack_store__held(s), 15);
	memset(&seen, 0, sizeof(seen));
	cp_stack_store__for_each(s, collect, &seen);
	assert_int_equal(seen.c[1].samples, 14);
	cp_stack_store__free(s);
}

static void test_for_each_stops_at_nonzero(void **state)
{
	struct cp_stack_store *s = cp_stack_store__new(8);
	struct seen seen = { .stop_at = 2 };
	struct cp_stack_counts one = samples(1);

	(void)state;
	for (__u64 i = 1; i <= 5; i++)
		assert_int_equal(cp_stack_store__add(s, 1, &i, 1, &one), 0);
	assert_int_equal(cp_stack_store__for_each(s, collect, &seen), 7);
	assert_int_equal(seen.n, 2);
	cp_stack_store__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_stack_is_one_entry),
		cmocka_unit_test(test_clear_starts_over),
		cmocka_unit_test(test_bad_depths_refused),
		cmocka_unit_test(test_full_store_evicts_the_least_counted),
		cmocka_unit_test(test_for_each_stops_at_nonzero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
