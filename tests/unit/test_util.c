// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The helpers of user/util that replaced per-file copies, each held to what
 * the copies did: callers' outputs (golden reports) depend on it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/clock.h"
#include "util/path.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static void test_base_name(void **state)
{
	static const struct {
		const char *path, *base;
	} cases[] = {
		{ "/usr/lib/libc.so.6", "libc.so.6" },
		{ "src/work.c", "work.c" },
		{ "work.c", "work.c" },
		{ "[vdso]", "[vdso]" },
		{ "/", "" },
		{ "/usr/lib/", "" },	/* a trailing '/' leaves nothing, as it always did */
		{ "//a//b", "b" },
		{ "", "" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		assert_string_equal(cp_base_name(cases[i].path), cases[i].base);
	/* a pointer into the path, not a copy */
	{
		const char *p = "/a/bc";

		assert_ptr_equal(cp_base_name(p), p + 3);
		assert_ptr_equal(cp_base_name("x"), cp_base_name("x"));
	}
}

static void test_clock(void **state)
{
	__u64 a, b;

	(void)state;
	a = cp_now_ns();
	usleep(2000);
	b = cp_now_ns();
	assert_true(a > 0);
	assert_true(b - a >= 2000000ull);
	assert_true(b - a < 10000000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_name),
		cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
