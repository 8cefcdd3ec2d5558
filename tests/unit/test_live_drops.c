// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF programs' skipped runs: the total, and the programs with the most, most first. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "profile/bpf_stats.h"

static void test_programs_most_first(void **state)
{
	struct cp_live_drops d = { 0 };
	char name[CP_PROG_NAME_LEN];

	(void)state;
	cp_live_drops_add_prog(&d, "on_tick", 0);	/* none: not named */
	assert_int_equal(d.nr_progs, 0);
	cp_live_drops_add_prog(&d, "on_alloc", 5);
	cp_live_drops_add_prog(&d, "on_free", 9);
	cp_live_drops_add_prog(&d, "on_alloc_ret", 7);
	assert_int_equal(d.recursion_misses, 21);
	assert_int_equal(d.nr_progs, 3);
	assert_string_equal(d.progs[0].name, "on_free");
	assert_string_equal(d.progs[1].name, "on_alloc_ret");
	assert_string_equal(d.progs[2].name, "on_alloc");
	/* past the cap: the smallest go, the total keeps every run */
	for (int i = 0; i < CP_MAX_PROG_DROPS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		cp_live_drops_add_prog(&d, name, 6);
	}
	assert_int_equal(d.nr_progs, CP_MAX_PROG_DROPS);
	assert_int_equal(d.recursion_misses, 21 + 6 * CP_MAX_PROG_DROPS);
	assert_string_equal(d.progs[0].name, "on_free");
	assert_string_equal(d.progs[1].name, "on_alloc_ret");
	assert_int_equal(d.progs[CP_MAX_PROG_DROPS - 1].misses, 6);
	for (int i = 0; i < CP_MAX_PROG_DROPS; i++)
		assert_string_not_equal(d.progs[i].name, "on_alloc");
	/* a long name is cut, not overrun */
	cp_live_drops_add_prog(&d, "a_program_name_longer_than_sixteen", 100);
	assert_string_equal(d.progs[0].name, "a_program_name_");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_programs_most_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
