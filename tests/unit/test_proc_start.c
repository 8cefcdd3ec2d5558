// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A process's start: /proc/PID/stat's field 22 and the records' clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "machine/proc_start.h"

struct stat_case {
	const char *text;
	int ret;
	__u64 ticks;
};

/* fields 3 (state) to 21 (itrealvalue): starttime (22) follows */
#define TAIL "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 0 "

static const struct stat_case stat_cases[] = {
	{"42 (bash) " TAIL "987654 1234 5\n", 0, 987654},
	/* a comm a tenant chose: spaces and parentheses, the last ')' ends it */
	{"42 (a) S 1 2 (b) ) " TAIL "77 1234\n", 0, 77},
	{"42 (x) " TAIL "18446744073709551615 1\n", 0, 18446744073709551615ull},
	{"42 (x) " TAIL "18446744073709551616 1\n", -EINVAL, 0}, /* overflow */
	{"42 (x) " TAIL "12a 1\n", -EINVAL, 0},
	{"42 (x) " TAIL, -EINVAL, 0}, /* cut before it */
	{"42 (x) S 1 2\n", -EINVAL, 0},
	{"42 x S 1 2\n", -EINVAL, 0}, /* no comm */
	{"", -EINVAL, 0},
	{"42 (x)  " TAIL "5 1\n", -EINVAL, 0}, /* two spaces */
	{"42 (x) " TAIL "5", 0, 5},	       /* ends with it */
};

static void test_stat_starttime(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(stat_cases) / sizeof(stat_cases[0]); i++) {
		const struct stat_case *c = &stat_cases[i];
		__u64 ticks = 0;

		print_message("case %zu: %s", i, c->text);
		assert_int_equal(cp_proc_stat_starttime(c->text, strlen(c->text), &ticks), c->ret);
		if (!c->ret)
			assert_int_equal(ticks, c->ticks);
	}
}

static void test_start_clock(void **state)
{
	(void)state;
	/* 100 Hz: a tick is 10 ms; time suspended is not monotonic time */
	assert_int_equal(cp_proc_start_mono_ns(250, 100, 0), 2500000000ull);
	assert_int_equal(cp_proc_start_mono_ns(250, 100, 500000000ull), 2000000000ull);
	assert_int_equal(cp_proc_start_mono_ns(3, 1000, 0), 3000000ull);
	/* never 0 (unknown) for a known start, nor negative */
	assert_int_equal(cp_proc_start_mono_ns(1, 100, 1000000000ull), 1);
	assert_int_equal(cp_proc_start_mono_ns(1, 0, 0), 0);
	/* no overflow for a long uptime: 10 years at 100 Hz */
	assert_int_equal(cp_proc_start_mono_ns(31536000000ull, 100, 0), 315360000000000000ull);
}

static void test_started_after(void **state)
{
	(void)state;
	assert_true(cp_proc_started_after(2000, 1000));
	assert_false(cp_proc_started_after(1000, 1000));
	assert_false(cp_proc_started_after(500, 1000));
	assert_false(cp_proc_started_after(0, 1000)); /* start unknown */
	assert_false(cp_proc_started_after(2000, 0)); /* record time unknown */
}

/* Our own start: before now, after boot, the same ticks each time. */
static void test_own_start(void **state)
{
	__u64 ticks = 0, again = 0, start;
	struct timespec ts;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_int_equal(cp_proc_starttime(getpid(), &ticks), 0);
	assert_int_equal(cp_proc_starttime(getpid(), &again), 0);
	assert_int_equal(ticks, again);
	start = cp_proc_ticks_mono_ns(ticks);
	assert_true(start > 0);
	assert_false(
		cp_proc_started_after(start, (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec));
	assert_int_equal(cp_proc_starttime(-1, &ticks), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_starttime),
		cmocka_unit_test(test_start_clock),
		cmocka_unit_test(test_started_after),
		cmocka_unit_test(test_own_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
