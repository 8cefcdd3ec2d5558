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

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

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
		cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
