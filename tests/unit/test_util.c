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
#include "util/hash.h"
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

static void test_hash_slot_range(void **state)
{
	static const unsigned int shifts[] = { 0, 29, 32, 40, 56 };
	__u64 key = 1;

	(void)state;
	for (size_t bits = 0; bits <= 20; bits++) {
		size_t mask = ((size_t)1 << bits) - 1;

		for (size_t s = 0; s < ARRAY_LEN(shifts); s++) {
			for (int k = 0; k < 1000; k++) {
				key = cp_splitmix64(key);
				assert_true(cp_hash_slot(cp_hash64(key), shifts[s], mask) <= mask);
				assert_true(cp_hash_slot(key, shifts[s], mask) <= mask);
			}
			assert_true(cp_hash_slot(~0ull, shifts[s], mask) <= mask);
			assert_int_equal(cp_hash_slot(0, shifts[s], mask), 0);
		}
	}
	/* Fibonacci hashing: shift 64 - log2(slots) needs no mask to stay in range */
	for (int k = 0; k < 1000; k++) {
		key = cp_splitmix64(key);
		assert_true(cp_hash64(key) >> (64 - 10) < 1024);
		assert_int_equal(cp_hash_slot(cp_hash64(key), 64 - 10, 1023), cp_hash64(key) >> 54);
	}
}

static void test_probe_step(void **state)
{
	(void)state;
	assert_int_equal(cp_probe_next(0, 7), 1);
	assert_int_equal(cp_probe_next(6, 7), 7);
	assert_int_equal(cp_probe_next(7, 7), 0);
	assert_int_equal(cp_probe_next(0, 0), 0);
	/* (i, j] without wrap, then wrapping past the end */
	assert_false(cp_probe_between(2, 2, 5));
	assert_true(cp_probe_between(2, 3, 5));
	assert_true(cp_probe_between(2, 5, 5));
	assert_false(cp_probe_between(2, 6, 5));
	assert_true(cp_probe_between(6, 7, 1));
	assert_true(cp_probe_between(6, 0, 1));
	assert_true(cp_probe_between(6, 1, 1));
	assert_false(cp_probe_between(6, 2, 1));
	assert_false(cp_probe_between(6, 6, 1));
}

/* The helpers give what the stores computed by hand before them, bit for bit. */
static void test_hash_bits(void **state)
{
	__u64 x = 42;

	(void)state;
	/* splitmix64 from state 0: its published first output */
	assert_true(cp_splitmix64(0) == 0xe220a8397b1dcdafull);
	for (int k = 0; k < 1000; k++) {
		__u64 h;

		x = cp_splitmix64(x);
		assert_true(cp_hash64(x) == x * 0x9e3779b97f4a7c15ull);
		assert_true(cp_hash_fold(x, 29) == (x ^ (x >> 29)));
		h = x ^ (x >> 31);
		h *= 0xbf58476d1ce4e5b9ull;
		assert_true(cp_hash_mix(x, 31, 29) == (h ^ (h >> 29)));
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
		cmocka_unit_test(test_hash_slot_range),
		cmocka_unit_test(test_probe_step),
		cmocka_unit_test(test_hash_bits),
		cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
