// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Call-site table: stable dense ids, the cap, lookups across table growth. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "callsites.h"

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
	for (__u64 i = 1; i <= 3; i++)
		assert_int_equal(cp_callsites__intern(cs, i, 0), i);
	assert_int_equal(cp_callsites__intern(cs, 4, 0), 0);
	assert_int_equal(cp_callsites__intern(cs, 5, 0), 0);
	assert_int_equal(cp_callsites__intern(cs, 2, 0), 2);	/* known sites still resolve */
	assert_int_equal(cp_callsites__dropped(cs), 2);
	cp_callsites__free(cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_site_same_id),
		cmocka_unit_test(test_ids_survive_growth),
		cmocka_unit_test(test_cap_gives_unknown_and_counts),
	};

	return cmocka_run_group_tests_name("callsites", tests, NULL, NULL);
}
