// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The status line each interval: what an operator reads on the terminal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "report/summary_out.h"

static void test_status_line(void **state)
{
	struct cp_status s = { .samples_per_s = 18234.4, .issues = 3, .drops = 0, .cpu_pct = 2.06 };
	char buf[160];

	(void)state;
	cp_status_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "cacheperf-bpf: 18234 samples/s, 3 issues, 0 drops, CPU 2.1 %");
	s = (struct cp_status){ .samples_per_s = 0, .issues = 1, .drops = 12, .cpu_pct = 0 };
	cp_status_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "cacheperf-bpf: 0 samples/s, 1 issue, 12 drops, CPU 0.0 %");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
