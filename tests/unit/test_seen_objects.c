// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The objects samples touched, per line: found at any byte of the object on
 * a noted line and nowhere else, several objects on one line (allocator
 * false sharing), the oldest dropped from a full line, a full table
 * overwriting and counting.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "profile/seen_objects.h"

#define LINE	64

static struct cp_seen_object obj(__u64 start, __u64 size, __u32 tid)
{
	return (struct cp_seen_object){ .start = start, .size = size, .callsite = 7, .tid = tid };
}

static void test_found_on_its_line_only(void **state)
{
	struct cp_seen_objects *s = cp_seen_objects__new(64);
	struct cp_seen_object o = obj(0x1010, 0x100, 11), out;

	(void)state;
	assert_non_null(s);
	cp_seen_objects__note(s, 100, 0x1020, LINE, &o);
	/* any byte of the object on the noted line 0x1000..0x103f */
	assert_int_equal(cp_seen_objects__find(s, 100, 0x1010, LINE, &out), 0);
	assert_int_equal(out.start, 0x1010);
	assert_int_equal(out.size, 0x100);
	assert_int_equal(out.tid, 11);
	assert_int_equal(cp_seen_objects__find(s, 100, 0x103f, LINE, &out), 0);
	/* before the object on that line, another process, a line never sampled */
	assert_int_equal(cp_seen_objects__find(s, 100, 0x100f, LINE, &out), -ENOENT);
	assert_int_equal(cp_seen_objects__find(s, 101, 0x1020, LINE, &out), -ENOENT);
	assert_int_equal(cp_seen_objects__find(s, 100, 0x1040, LINE, &out), -ENOENT);
	cp_seen_objects__free(s);
}

static void test_one_past_the_end(void **state)
{
	struct cp_seen_objects *s = cp_seen_objects__new(64);
	struct cp_seen_object o = obj(0x2000, 24, 1), out;

	(void)state;
	cp_seen_objects__note(s, 100, 0x2000, LINE, &o);
	assert_int_equal(cp_seen_objects__find(s, 100, 0x2017, LINE, &out), 0);
	assert_int_equal(cp_seen_objects__find(s, 100, 0x2018, LINE, &out), -ENOENT);
	cp_seen_objects__free(s);
}

/* Two threads' 24-byte objects side by side on one line, and a reuse of the first. */
static void test_several_on_a_line(void **state)
{
	struct cp_seen_objects *s = cp_seen_objects__new(64);
	struct cp_seen_object a = obj(0x3000, 24, 1), b = obj(0x3020, 24, 2), out;
	struct cp_seen_stats st;

	(void)state;
	cp_seen_objects__note(s, 100, 0x3004, LINE, &a);
	cp_seen_objects__note(s, 100, 0x3024, LINE, &b);
	cp_seen_objects__note(s, 100, 0x3008, LINE, &a);	/* again: not a new one */
	assert_int_equal(cp_seen_objects__find(s, 100, 0x3010, LINE, &out), 0);
	assert_int_equal(out.tid, 1);
	assert_int_equal(cp_seen_objects__find(s, 100, 0x3030, LINE, &out), 0);
	assert_int_equal(out.tid, 2);
	/* the gap between them belongs to neither */
	assert_int_equal(cp_seen_objects__find(s, 100, 0x301c, LINE, &out), -ENOENT);
	cp_seen_objects__stats(s, &st);
	assert_int_equal(st.noted, 2);
	assert_int_equal(st.lines, 1);
	cp_seen_objects__free(s);
}

/* The memory of a freed object reused by a bigger one: the newest note answers first. */
static void test_newest_first(void **state)
{
	struct cp_seen_objects *s = cp_seen_objects__new(64);
	struct cp_seen_object old = obj(0x4000, 16, 1), now = obj(0x4000, 48, 2), out;

	(void)state;
	cp_seen_objects__note(s, 100, 0x4000, LINE, &old);
	cp_seen_objects__note(s, 100, 0x4000, LINE, &now);
	assert_int_equal(cp_seen_objects__find(s, 100, 0x4008, LINE, &out), 0);
	assert_int_equal(out.tid, 2);
	/* bytes only the newer one covers */
	assert_int_equal(cp_seen_objects__find(s, 100, 0x4020, LINE, &out), 0);
	assert_int_equal(out.size, 48);
	cp_seen_objects__free(s);
}

static void test_full_line_drops_oldest(void **state)
{
	struct cp_seen_objects *s = cp_seen_objects__new(64);
	struct cp_seen_object out;
	struct cp_seen_stats st;

	(void)state;
	/* CP_SEEN_PER_LINE + 1 objects of 8 bytes on one line */
	for (int i = 0; i <= CP_SEEN_PER_LINE; i++) {
		struct cp_seen_object o = obj(0x5000 + 8 * (__u64)i, 8, (__u32)i);

		cp_seen_objects__note(s, 100, o.start, LINE, &o);
	}
	assert_int_equal(cp_seen_objects__find(s, 100, 0x5000, LINE, &out), -ENOENT);
	for (int i = 1; i <= CP_SEEN_PER_LINE; i++)
		assert_int_equal(cp_seen_objects__find(s, 100, 0x5000 + 8 * (__u64)i, LINE, &out), 0);
	cp_seen_objects__stats(s, &st);
	assert_int_equal(st.evicted_objects, 1);
	cp_seen_objects__free(s);
}

/* More lines than slots: the table stays at its size, overwrites and counts. */
static void test_full_table(void **state)
{
	struct cp_seen_objects *s = cp_seen_objects__new(16);
	struct cp_seen_stats st;
	struct cp_seen_object out;
	int found = 0;

	(void)state;
	for (__u64 i = 0; i < 1000; i++) {
		struct cp_seen_object o = obj(0x100000 + i * LINE, LINE, 1);

		cp_seen_objects__note(s, 100, o.start, LINE, &o);
	}
	cp_seen_objects__stats(s, &st);
	assert_int_equal(st.lines, 16);
	assert_int_equal(st.evicted_lines, 1000 - 16);
	/* the last one noted is always there */
	assert_int_equal(cp_seen_objects__find(s, 100, 0x100000 + 999 * LINE, LINE, &out), 0);
	for (__u64 i = 0; i < 1000; i++)
		found += !cp_seen_objects__find(s, 100, 0x100000 + i * LINE, LINE, &out);
	assert_true(found <= 16);
	cp_seen_objects__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_on_its_line_only),
		cmocka_unit_test(test_one_past_the_end),
		cmocka_unit_test(test_several_on_a_line),
		cmocka_unit_test(test_newest_first),
		cmocka_unit_test(test_full_line_drops_oldest),
		cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
