// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Interned strings (user/util/str_set.h), as the symbolizer keeps its
 * function, file and module names: one copy of each, the same pointer for
 * equal strings however many there are, their bytes counted, and a string
 * longer than a chunk kept whole.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/str_set.h"

/* Equal strings are one copy, wherever the caller's came from. */
static void test_one_copy(void **state)
{
	struct cp_str_set t = {0};
	char a[] = "main", b[] = "main";
	const char *x, *y, *z;
	int err = 0;

	(void)state;
	x = cp_str_set_intern(&t, a, &err);
	y = cp_str_set_intern(&t, b, &err);
	z = cp_str_set_intern(&t, "memcpy", &err);
	assert_int_equal(err, 0);
	assert_ptr_equal(x, y);
	assert_ptr_not_equal(x, a);
	assert_string_equal(x, "main");
	assert_string_equal(z, "memcpy");
	assert_int_equal(t.nr, 2);
	assert_int_equal(t.bytes, sizeof("main") + sizeof("memcpy"));
	assert_null(cp_str_set_intern(&t, NULL, &err));
	assert_int_equal(err, 0);
	cp_str_set_free(&t);
	assert_int_equal(t.nr, 0);
	assert_int_equal(t.bytes, 0);
	cp_str_set_free(&t); /* freed twice: empty, nothing to do */
}

/*
 * 50000 names, past many doublings of the table and many chunks: each is
 * found again as the copy first given, and holds its own text.
 */
static void test_many(void **state)
{
	enum { N = 50000 };
	const char **first = calloc(N, sizeof(*first));
	struct cp_str_set t = {0};
	__u64 bytes = 0;
	char name[64];
	int err = 0;

	(void)state;
	assert_non_null(first);
	for (int i = 0; i < N; i++) {
		int n = snprintf(name, sizeof(name), "cp_function_%d_of_a_long_name", i);

		first[i] = cp_str_set_intern(&t, name, &err);
		bytes += (__u64)n + 1;
	}
	assert_int_equal(err, 0);
	assert_int_equal(t.nr, N);
	assert_int_equal(t.bytes, bytes);
	assert_true(t.nr_chunks > 1);
	assert_true(t.cap >= 2 * t.nr);
	for (int i = N - 1; i >= 0; i--) {
		snprintf(name, sizeof(name), "cp_function_%d_of_a_long_name", i);
		assert_ptr_equal(cp_str_set_intern(&t, name, &err), first[i]);
		assert_string_equal(first[i], name);
	}
	assert_int_equal(t.nr, N);
	cp_str_set_free(&t);
	free(first);
}

/* A string longer than a chunk gets one of its own, and later ones still fit. */
static void test_longer_than_a_chunk(void **state)
{
	size_t len = CP_STR_SET_CHUNK + 100;
	char *big = malloc(len + 1);
	struct cp_str_set t = {0};
	const char *a, *b, *c;
	int err = 0;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', len);
	big[len] = '\0';
	a = cp_str_set_intern(&t, "before", &err);
	b = cp_str_set_intern(&t, big, &err);
	c = cp_str_set_intern(&t, "after", &err);
	assert_int_equal(err, 0);
	assert_string_equal(a, "before");
	assert_int_equal(strlen(b), len);
	assert_string_equal(c, "after");
	assert_ptr_equal(cp_str_set_intern(&t, big, &err), b);
	assert_int_equal(t.bytes, sizeof("before") + len + 1 + sizeof("after"));
	cp_str_set_free(&t);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_copy),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_longer_than_a_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
