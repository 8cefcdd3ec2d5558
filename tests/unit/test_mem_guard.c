// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --max-memory: when the profiler shrinks, how often, and its own RSS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/mem_guard.h"

#define MiB	(1ull << 20)
#define SEC	1000000000ull

static void test_shrinks_over_the_limit_with_holdoff(void **state)
{
	struct cp_mem_guard g;
	__u64 t = 100 * SEC;

	(void)state;
	cp_mem_guard_init(&g, 256 * MiB);
	assert_false(cp_mem_guard_over(&g, 200 * MiB, t));
	assert_false(cp_mem_guard_over(&g, 256 * MiB, t + SEC));	/* at the limit: fine */
	assert_true(cp_mem_guard_over(&g, 300 * MiB, t + 2 * SEC));
	/* still over, but the last shrink is recent: RSS gets time to fall */
	assert_false(cp_mem_guard_over(&g, 290 * MiB, t + 2 * SEC + CP_MEM_HOLDOFF_NS / 2));
	assert_false(cp_mem_guard_over(&g, 290 * MiB, t + 2 * SEC + CP_MEM_HOLDOFF_NS - 1));
	assert_true(cp_mem_guard_over(&g, 290 * MiB, t + 2 * SEC + CP_MEM_HOLDOFF_NS));
	assert_false(cp_mem_guard_over(&g, 100 * MiB, t + 60 * SEC));
	assert_int_equal(g.shrinks, 2);
	assert_int_equal(g.peak_bytes, 300 * MiB);
	assert_int_equal(g.bytes, 100 * MiB);
}

/* A reading asked for at once: not more often than CP_MEM_URGENT_NS. */
static void test_urgent_readings_spaced(void **state)
{
	struct cp_mem_guard g;

	(void)state;
	cp_mem_guard_init(&g, 256 * MiB);
	assert_true(cp_mem_guard_urgent(&g, 5 * SEC)); /* never read */
	cp_mem_guard_over(&g, 10 * MiB, 5 * SEC);
	assert_false(cp_mem_guard_urgent(&g, 5 * SEC + CP_MEM_URGENT_NS - 1));
	assert_true(cp_mem_guard_urgent(&g, 5 * SEC + CP_MEM_URGENT_NS));
	/* the kernel's peak, seen between readings, is the peak */
	cp_mem_guard_peak(&g, 40 * MiB);
	cp_mem_guard_over(&g, 20 * MiB, 6 * SEC);
	assert_int_equal(g.peak_bytes, 40 * MiB);
}

static void test_no_limit_never_shrinks(void **state)
{
	struct cp_mem_guard g;

	(void)state;
	cp_mem_guard_init(&g, 0);
	assert_false(cp_mem_guard_over(&g, 1ull << 40, SEC));
	assert_int_equal(g.shrinks, 0);
}

static void test_checks_at_its_period(void **state)
{
	struct cp_mem_guard g;

	(void)state;
	cp_mem_guard_init(&g, 256 * MiB);
	assert_true(cp_mem_guard_due(&g, 10 * SEC));
	assert_false(cp_mem_guard_due(&g, 10 * SEC + CP_MEM_CHECK_NS - 1));
	assert_true(cp_mem_guard_due(&g, 10 * SEC + CP_MEM_CHECK_NS));
}

/* Far below the limit the next reading waits until 100 MiB/s of growth could reach it. */
static void test_period_follows_the_headroom(void **state)
{
	static const struct {
		__u64 bytes, next_ns;
	} cases[] = {
		{ 40 * MiB, CP_MEM_CHECK_MAX_NS },	/* 216 MiB of room: 1 s at most */
		{ 156 * MiB, CP_MEM_CHECK_MAX_NS },	/* 100 MiB: 1 s */
		{ 206 * MiB, SEC / 2 },		/* 50 MiB: half a second */
		{ 250 * MiB, CP_MEM_CHECK_NS },	/* 6 MiB: 60 ms, but 100 ms at least */
		{ 300 * MiB, CP_MEM_CHECK_NS },	/* over */
	};
	struct cp_mem_guard g;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 t = 10 * SEC;

		cp_mem_guard_init(&g, 256 * MiB);
		assert_true(cp_mem_guard_due(&g, t)); /* never read: at once, then 100 ms */
		cp_mem_guard_over(&g, cases[i].bytes, t);
		t += CP_MEM_CHECK_NS;
		assert_true(cp_mem_guard_due(&g, t));
		if (cp_mem_guard_due(&g, t + cases[i].next_ns - 1))
			fail_msg("%llu MiB: read again before %llu ns",
				 (unsigned long long)(cases[i].bytes / MiB),
				 (unsigned long long)cases[i].next_ns);
		assert_true(cp_mem_guard_due(&g, t + cases[i].next_ns));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shrinks_over_the_limit_with_holdoff),
		cmocka_unit_test(test_urgent_readings_spaced),
		cmocka_unit_test(test_no_limit_never_shrinks),
		cmocka_unit_test(test_checks_at_its_period),
		cmocka_unit_test(test_period_follows_the_headroom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
