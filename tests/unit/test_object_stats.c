// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Samples per object group: heap objects by call site, globals by variable, the cap. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "objects/object_stats.h"

static struct cp_resolved heap(__u64 start, __u64 size, __u64 callsite, __u32 tid)
{
	struct cp_resolved r = { .kind = CP_OBJ_HEAP, .start = start, .size = size,
				 .callsite = callsite, .tid = tid };

	strcpy(r.name, "heap");
	return r;
}

static void test_heap_groups_by_callsite(void **state)
{
	struct cp_object_stats *s = cp_object_stats__new(0);
	const struct cp_object_group *top[4];
	struct cp_resolved a = heap(0x1000, 64, 7, 11), b = heap(0x2000, 64, 7, 12);
	struct cp_resolved c = heap(0x3000, 1056, 9, 11);

	(void)state;
	/* two objects from call site 7 by two threads, hit 3 times (2 misses) */
	assert_int_equal(cp_object_stats__add(s, 5, &a, 0x401234, true), 0);
	assert_int_equal(cp_object_stats__add(s, 5, &b, 0x401234, true), 0);
	assert_int_equal(cp_object_stats__add(s, 5, &a, 0x401234, false), 0);
	/* one object from call site 9, one miss */
	assert_int_equal(cp_object_stats__add(s, 5, &c, 0x401300, true), 0);
	/* the same call site id in another process is another group */
	assert_int_equal(cp_object_stats__add(s, 6, &a, 0x401234, false), 0);
	assert_int_equal(cp_object_stats__count(s), 3);
	assert_int_equal(cp_object_stats__top(s, top, 4), 3);
	assert_int_equal(top[0]->callsite, 7);
	assert_int_equal(top[0]->tgid, 5);
	assert_int_equal(top[0]->misses, 2);
	assert_int_equal(top[0]->samples, 3);
	assert_int_equal(top[0]->caller, 0x401234);
	assert_int_equal(top[0]->nr_tids, 2);
	assert_int_equal(top[0]->tids[0], 11);
	assert_int_equal(top[0]->tids[1], 12);
	assert_true(top[0]->objects >= 2);
	assert_int_equal(top[1]->callsite, 9);
	assert_int_equal(top[1]->size, 1056);
	assert_int_equal(top[2]->tgid, 6);
	cp_object_stats__free(s);
}

/*
 * Call-site ids start over at an exec: a shell's fork whose xmalloc site
 * was id 1, then the program it exec'd, whose malloc site is id 1 too, are
 * two groups, each with its own caller (test_cli once showed a 16 MiB
 * object "allocated at" the shell's xmalloc, with the shell's samples).
 */
static void test_exec_callsite_ids(void **state)
{
	struct cp_object_stats *s = cp_object_stats__new(0);
	const struct cp_object_group *top[2];
	struct cp_resolved shell = heap(0x561000, 40, 1, 20), prog = heap(0x7f0000, 1 << 24, 1, 20);

	(void)state;
	assert_int_equal(cp_object_stats__add(s, 20, &shell, 0x561ce259fc8e, false), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cp_object_stats__add(s, 20, &prog, 0x5555555553e7, true), 0);
	assert_int_equal(cp_object_stats__top(s, top, 2), 2);
	assert_int_equal(top[0]->caller, 0x5555555553e7);
	assert_int_equal(top[0]->samples, 3);
	assert_int_equal(top[0]->size, 1 << 24);
	assert_int_equal(top[1]->caller, 0x561ce259fc8e);
	assert_int_equal(top[1]->samples, 1);
	cp_object_stats__free(s);
}

static void test_globals_and_cap(void **state)
{
	struct cp_object_stats *s = cp_object_stats__new(2);
	struct cp_resolved g = { .kind = CP_OBJ_GLOBAL, .start = 0x404040, .size = 8 };
	struct cp_resolved t = { .kind = CP_OBJ_TLS, .start = 0x7f0000001000, .size = 4 };
	struct cp_resolved m = { .kind = CP_OBJ_UNKNOWN, .start = 0x555000, .before_attach = 1 };
	const struct cp_object_group *top[4];

	(void)state;
	strcpy(g.name, "counter");
	strcpy(g.path, "/usr/bin/app");
	assert_int_equal(cp_object_stats__add(s, 5, &g, 0, true), 0);
	assert_int_equal(cp_object_stats__add(s, 5, &g, 0, true), 0);
	assert_int_equal(cp_object_stats__add(s, 5, &t, 0, false), 0);
	/* a third group does not fit: counted, not stored */
	assert_int_equal(cp_object_stats__add(s, 5, &m, 0, true), -ENOSPC);
	assert_int_equal(cp_object_stats__dropped(s), 1);
	assert_int_equal(cp_object_stats__top(s, top, 4), 2);
	assert_string_equal(top[0]->name, "counter");
	assert_string_equal(top[0]->path, "/usr/bin/app");
	assert_int_equal(top[0]->kind, CP_OBJ_GLOBAL);
	assert_int_equal(top[0]->misses, 2);
	assert_int_equal(top[0]->nr_tids, 0);
	assert_int_equal(top[1]->kind, CP_OBJ_TLS);
	cp_object_stats__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_groups_by_callsite),
		cmocka_unit_test(test_exec_callsite_ids),
		cmocka_unit_test(test_globals_and_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
