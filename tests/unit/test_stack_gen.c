// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocation stack generations: a generation ends when its map fills, the
 * previous map is emptied only after the settle time and a read of the ring
 * after it, and the same stack under two generations' ids is one call site.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cacheperf/alloc.h"
#include "objects/callsites.h"
#include "objects/stack_gen.h"

#define S	1000000000ull

static void test_generation_ends_then_empties(void **state)
{
	struct cp_stack_gen g;

	(void)state;
	cp_stack_gen_init(&g, 64);	/* ends after 64 / CP_STACK_GEN_FILL_DIV = 8 reads */
	assert_true(cp_stack_gen_spare(&g));
	for (__u32 i = 0; i < 7; i++)
		cp_stack_gen_read(&g, CP_ALLOC_STACK_ID(0, i), true);
	assert_int_equal(cp_stack_gen_step(&g, 10 * S, 10 * S), CP_STACK_GEN_WAIT);
	/* a stack of the next generation (the spare map) does not fill this one */
	cp_stack_gen_read(&g, CP_ALLOC_STACK_ID(1, 40), true);
	cp_stack_gen_read(&g, -1, false);
	assert_int_equal(cp_stack_gen_step(&g, 10 * S, 10 * S), CP_STACK_GEN_WAIT);
	cp_stack_gen_read(&g, CP_ALLOC_STACK_ID(0, 7), true);
	assert_int_equal(cp_stack_gen_step(&g, 10 * S, 10 * S), CP_STACK_GEN_END);
	cp_stack_gen_ended(&g, 10 * S);
	assert_int_equal(g.gen, 1);
	assert_int_equal(g.reads, 1);	/* the spare map's stack is of generation 1 */
	assert_false(cp_stack_gen_spare(&g));
	/* not before the settle time, nor before the ring was read after it */
	assert_int_equal(cp_stack_gen_step(&g, 10 * S + CP_STACK_GEN_SETTLE_NS - 1, 11 * S),
			 CP_STACK_GEN_WAIT);
	assert_int_equal(cp_stack_gen_step(&g, 12 * S, 10 * S + CP_STACK_GEN_SETTLE_NS - 1),
			 CP_STACK_GEN_WAIT);
	/* a full generation waits for the map before to be empty */
	for (__u32 i = 0; i < 20; i++)
		cp_stack_gen_read(&g, CP_ALLOC_STACK_ID(1, i), true);
	assert_int_equal(cp_stack_gen_step(&g, 12 * S, 10 * S + CP_STACK_GEN_SETTLE_NS),
			 CP_STACK_GEN_EMPTY);
	cp_stack_gen_emptied(&g);
	assert_true(cp_stack_gen_spare(&g));
	assert_int_equal(cp_stack_gen_step(&g, 12 * S, 12 * S), CP_STACK_GEN_END);
	assert_int_equal(cp_stack_gen_map(CP_ALLOC_STACK_ID(1, 3)), 1);
	assert_int_equal(cp_stack_gen_map(CP_ALLOC_STACK_ID(2, 3)), 0);
	/* a stack gone from its map is counted lost */
	cp_stack_gen_read(&g, CP_ALLOC_STACK_ID(0, 3), false);
	assert_int_equal(g.missing, 1);
}

static void test_generation_wraps(void **state)
{
	struct cp_stack_gen g;

	(void)state;
	cp_stack_gen_init(&g, 8);
	g.gen = 0x7fffffff;
	cp_stack_gen_ended(&g, 1);
	assert_int_equal(g.gen, 0);
	assert_true(CP_ALLOC_STACK_ID(0x7fffffff, 5) >= 0);
	assert_int_equal(CP_ALLOC_STACK_BUCKET(CP_ALLOC_STACK_ID(9, 5)), 5);
	assert_int_equal(CP_ALLOC_STACK_GEN(CP_ALLOC_STACK_ID(9, 5)), 9);
}

static void test_same_stack_two_ids_one_site(void **state)
{
	struct cp_callsites *cs = cp_callsites__new(0);
	const __u64 a[] = { 0x401000, 0x402000, 0x403000 }, b[] = { 0x401000, 0x402000, 0x404000 };
	__u64 id0, id1, id2;
	size_t n0;

	(void)state;
	id0 = cp_callsites__intern(cs, 0x401000, CP_ALLOC_STACK_ID(0, 5));
	assert_int_equal(cp_callsites__set_stack(cs, id0, a, 3), id0);
	/* generation 1: the same stack under another id is the same site */
	id1 = cp_callsites__intern(cs, 0x401000, CP_ALLOC_STACK_ID(1, 5));
	assert_int_not_equal(id1, id0);
	assert_int_equal(cp_callsites__set_stack(cs, id1, a, 3), id0);
	assert_int_equal(cp_callsites__intern(cs, 0x401000, CP_ALLOC_STACK_ID(1, 5)), id0);
	/* the same bucket with another stack is another site */
	id2 = cp_callsites__intern(cs, 0x401000, CP_ALLOC_STACK_ID(2, 5));
	assert_int_equal(cp_callsites__set_stack(cs, id2, b, 3), id2);
	assert_int_not_equal(id2, id0);
	assert_non_null(cp_callsites__frames(cs, id2, &n0));
	assert_int_equal(n0, 3);
	/* many: still found after the frames table grew */
	for (__u64 i = 0; i < 3000; i++) {
		__u64 f[] = { 0x500000 + i, 0x600000 };
		__u64 x = cp_callsites__intern(cs, f[0], CP_ALLOC_STACK_ID(0, i));
		__u64 y;

		assert_int_equal(cp_callsites__set_stack(cs, x, f, 2), x);
		y = cp_callsites__intern(cs, f[0], CP_ALLOC_STACK_ID(1, i));
		assert_int_equal(cp_callsites__set_stack(cs, y, f, 2), x);
	}
	for (__u64 i = 0; i < 3000; i++)
		assert_int_equal(cp_callsites__intern(cs, 0x500000 + i, CP_ALLOC_STACK_ID(1, i)),
				 cp_callsites__intern(cs, 0x500000 + i, CP_ALLOC_STACK_ID(0, i)));
	cp_callsites__free(cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generation_ends_then_empties),
		cmocka_unit_test(test_generation_wraps),
		cmocka_unit_test(test_same_stack_two_ids_one_site),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
