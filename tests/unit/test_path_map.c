// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --path-map OLD=NEW: parsing, whole-component prefixes, order, bad input. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/path_map.h"

static void test_prefix_by_component(void **state)
{
	char a[] = "/build/ci/=/home/me/src", b[] = "/=/srv/sysroot", buf[64], err[128];
	struct cp_path_map m = { 0 };
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/build/ci/bin/app", "/home/me/src/bin/app" },
		{ "/build/ci", "/home/me/src" },
		/* not a component boundary: the second entry, the root, maps it */
		{ "/build/cix/app", "/srv/sysroot/build/cix/app" },
		{ "/usr/lib/libc.so.6", "/srv/sysroot/usr/lib/libc.so.6" },
		/* not absolute ([vdso], anon names): nothing maps it */
		{ "[vdso]", "[vdso]" },
	};

	(void)state;
	assert_int_equal(cp_path_map_add(&m, a, err, sizeof(err)), 0);
	assert_int_equal(cp_path_map_add(&m, b, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(cp_path_map_apply(&m, cases[i].in, buf, sizeof(buf)),
				    cases[i].out);
	assert_string_equal(cp_path_map_apply(NULL, "/x", buf, sizeof(buf)), "/x");
	/* too long for the buffer: NULL, not a cut path */
	assert_null(cp_path_map_apply(&m, "/build/ci/a/very/long/path/that/does/not/fit/here/x",
				      buf, 24));
}

static void test_bad_input(void **state)
{
	char no_eq[] = "/a", rel[] = "a=/b", empty_new[] = "/a=", empty_old[] = "=/b";
	char ok[] = "/a=/b";
	char err[128];
	struct cp_path_map m = { 0 };

	(void)state;
	assert_int_equal(cp_path_map_add(&m, no_eq, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'/a' is not OLD=NEW"));
	assert_int_equal(cp_path_map_add(&m, rel, err, sizeof(err)), -EINVAL);
	assert_int_equal(cp_path_map_add(&m, empty_new, err, sizeof(err)), -EINVAL);
	assert_int_equal(cp_path_map_add(&m, empty_old, err, sizeof(err)), -EINVAL);
	assert_int_equal(m.nr, 0);
	for (int i = 0; i < CP_MAX_PATH_MAPS; i++) {
		char *arg = strdup("/a=/b");

		assert_int_equal(cp_path_map_add(&m, arg, err, sizeof(err)), 0);
	}
	assert_int_equal(cp_path_map_add(&m, ok, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 16"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_by_component),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("path_map", tests, NULL, NULL);
}
