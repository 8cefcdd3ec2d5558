// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the allocation guard's back-offs make uncertain: objects allocated
 * before a back-off ended may be stale, memory without an object may come
 * from a back-off, exec starts over unless a back-off is still going on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "objects/backoff_marks.h"

static void test_never_backed_off(void **state)
{
	struct cp_backoff_marks m = { 0 };

	(void)state;
	assert_false(cp_backoff_marks_doubt(&m, 0));
	assert_false(cp_backoff_marks_doubt(&m, 1000));
	assert_false(m.unseen);
}

static void test_backoff_then_resume(void **state)
{
	struct cp_backoff_marks m = { 0 };

	(void)state;
	cp_backoff_marks_on_guard(&m, true, 1000);
	/* backed off: even an object allocated just before may be freed by now */
	assert_true(cp_backoff_marks_doubt(&m, 999));
	assert_true(m.unseen);
	cp_backoff_marks_on_guard(&m, false, 2000);
	/* before the resume: lived through the back-off; after: seen whole */
	assert_true(cp_backoff_marks_doubt(&m, 500));
	assert_true(cp_backoff_marks_doubt(&m, 1999));
	assert_false(cp_backoff_marks_doubt(&m, 2000));
	assert_false(cp_backoff_marks_doubt(&m, 2500));
	/* a second back-off moves the line */
	cp_backoff_marks_on_guard(&m, true, 3000);
	cp_backoff_marks_on_guard(&m, false, 4000);
	assert_true(cp_backoff_marks_doubt(&m, 2500));
	assert_false(cp_backoff_marks_doubt(&m, 4001));
	/* a stale clock never moves it back */
	cp_backoff_marks_on_guard(&m, false, 100);
	assert_true(cp_backoff_marks_doubt(&m, 3999));
}

static void test_exec(void **state)
{
	struct cp_backoff_marks m = { 0 };

	(void)state;
	cp_backoff_marks_on_guard(&m, true, 1000);
	cp_backoff_marks_on_guard(&m, false, 2000);
	cp_backoff_marks_on_exec(&m);
	/* a new heap, all of it seen */
	assert_false(cp_backoff_marks_doubt(&m, 500));
	assert_false(m.unseen);
	/* exec while backed off: the new heap is unseen too */
	cp_backoff_marks_on_guard(&m, true, 3000);
	cp_backoff_marks_on_exec(&m);
	assert_true(m.unseen);
	assert_true(cp_backoff_marks_doubt(&m, 3500));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_backed_off),
		cmocka_unit_test(test_backoff_then_resume),
		cmocka_unit_test(test_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
