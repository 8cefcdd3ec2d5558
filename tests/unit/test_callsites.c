// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Call-site table: stable dense ids, the cap, lookups across table growth. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "objects/callsites.h"

static void test_same_site_same_id(void **state)
{
	struct cp_callsites *cs = cp_callsites__new(0);
	static const struct { __u64 caller; __s64 stack; __u64 id; } cases[] = {
		{ 0x401000, 5, 1 },
		{ 0x401000, 6, 2 },		/* same caller, other stack */
		{ 0x401008, 5, 3 },		/* same stack, other caller */
		{ 0x401000, 5, 1 },		/* seen before */
		{ 0x401000, CP_NO_STACK, 4 },
		{ 0, CP_NO_STACK, 5 },		/* even an unknown caller is a site */
		{ 0x401008, 5, 3 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cp_callsite *c;

		assert_int_equal(cp_callsites__intern(cs, cases[i].caller, cases[i].stack),
				 cases[i].id);
		c = cp_callsites__get(cs, cases[i].id);
		assert_non_null(c);
		assert_int_equal(c->caller, cases[i].caller);
		assert_int_equal(c->stack_id, cases[i].stack);
	}
	assert_int_equal(cp_callsites__count(cs), 5);
	assert_null(cp_callsites__get(cs, 0));
	assert_null(cp_callsites__get(cs, 6));
	cp_callsites__free(cs);
}

static void test_ids_survive_growth(void **state)
{
	struct cp_callsites *cs = cp_callsites__new(0);

	(void)state;
	for (__u64 i = 0; i < 5000; i++)
		assert_int_equal(cp_callsites__intern(cs, 0x400000 + i * 16, i % 7), i + 1);
	for (__u64 i = 0; i < 5000; i++) {
		assert_int_equal(cp_callsites__intern(cs, 0x400000 + i * 16, i % 7), i + 1);
		assert_int_equal(cp_callsites__get(cs, i + 1)->caller, 0x400000 + i * 16);
	}
	assert_int_equal(cp_callsites__count(cs), 5000);
	cp_callsites__free(cs);
}

static void test_cap_gives_unknown_and_counts(void **state)
{
	struct cp_callsites *cs = cp_callsites__new(3);

	(void)state;
	for (__u64 i = 1; i <= 3; i++) {
		assert_true(cp_callsites__has_room(cs));
		assert_int_equal(cp_callsites__find(cs, i, 0), 0);
		assert_int_equal(cp_callsites__intern(cs, i, 0), i);
		assert_int_equal(cp_callsites__find(cs, i, 0), i);
	}
	assert_false(cp_callsites__has_room(cs));
	/* a lookup neither interns nor counts */
	assert_int_equal(cp_callsites__find(cs, 4, 0), 0);
	assert_int_equal(cp_callsites__dropped(cs), 0);
	assert_int_equal(cp_callsites__intern(cs, 4, 0), 0);
	assert_int_equal(cp_callsites__intern(cs, 5, 0), 0);
	assert_int_equal(cp_callsites__intern(cs, 2, 0), 2);	/* known sites still resolve */
	assert_int_equal(cp_callsites__dropped(cs), 2);
	cp_callsites__free(cs);
}

/* A site's stack is kept once, whatever is offered later, and capped in depth. */
static void test_frames_set_once_and_capped(void **state)
{
	struct cp_callsites *cs = cp_callsites__new(0);
	__u64 ips[CP_CALLSITE_MAX_FRAMES + 8], other[2] = { 0xdead, 0xbeef };
	const __u64 *f;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		ips[i] = 0x401000 + i;
	assert_int_equal(cp_callsites__intern(cs, 0x401000, 7), 1);
	assert_int_equal(cp_callsites__intern(cs, 0x402000, 8), 2);
	assert_null(cp_callsites__frames(cs, 1, &n));
	assert_int_equal(n, 0);
	assert_false(cp_callsites__get(cs, 1)->stack_read);
	assert_int_equal(cp_callsites__set_frames(cs, 1, ips, 3), 0);
	assert_int_equal(cp_callsites__set_frames(cs, 1, other, 2), 0);	/* no change */
	assert_int_equal(cp_callsites__set_frames(cs, 2, ips, sizeof(ips) / sizeof(ips[0])), 0);
	assert_int_equal(cp_callsites__set_frames(cs, 3, ips, 1), -ENOENT);
	f = cp_callsites__frames(cs, 1, &n);
	assert_int_equal(n, 3);
	assert_int_equal(f[0], 0x401000);
	assert_int_equal(f[2], 0x401002);
	assert_true(cp_callsites__get(cs, 1)->stack_read);
	f = cp_callsites__frames(cs, 2, &n);
	assert_int_equal(n, CP_CALLSITE_MAX_FRAMES);
	assert_int_equal(f[CP_CALLSITE_MAX_FRAMES - 1], 0x401000 + CP_CALLSITE_MAX_FRAMES - 1);
	/* a stack read that found nothing still counts as read: no second lookup */
	assert_int_equal(cp_callsites__intern(cs, 0x403000, 9), 3);
	assert_int_equal(cp_callsites__set_frames(cs, 3, NULL, 0), 0);
	assert_true(cp_callsites__get(cs, 3)->stack_read);
	assert_null(cp_callsites__frames(cs, 3, &n));
	cp_callsites__free(cs);
}

/* The frame pool is bounded: past CP_CALLSITE_FRAMES_CAP sites keep their caller alone. */
static void test_frame_pool_bounded(void **state)
{
	size_t per = CP_CALLSITE_MAX_FRAMES, fit = CP_CALLSITE_FRAMES_CAP / per;
	struct cp_callsites *cs = cp_callsites__new(fit + 10);
	__u64 ips[CP_CALLSITE_MAX_FRAMES] = { 0 };
	size_t n;

	(void)state;
	for (size_t i = 1; i <= fit + 2; i++) {
		assert_int_equal(cp_callsites__intern(cs, i, 1), i);
		assert_int_equal(cp_callsites__set_frames(cs, i, ips, per),
				 i <= fit ? 0 : -ENOSPC);
	}
	assert_int_equal(cp_callsites__frames_dropped(cs), 2);
	assert_non_null(cp_callsites__frames(cs, fit, &n));
	assert_null(cp_callsites__frames(cs, fit + 1, &n));
	assert_int_equal(cp_callsites__get(cs, fit + 1)->caller, fit + 1);
	cp_callsites__free(cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_site_same_id),
		cmocka_unit_test(test_ids_survive_growth),
		cmocka_unit_test(test_cap_gives_unknown_and_counts),
		cmocka_unit_test(test_frames_set_once_and_capped),
		cmocka_unit_test(test_frame_pool_bounded),
	};

	return cmocka_run_group_tests_name("callsites", tests, NULL, NULL);
}
