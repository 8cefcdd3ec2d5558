// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The helpers of user/util that replaced per-file copies, each held to what
 * the copies did: callers' outputs (golden reports) depend on it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "util/clock.h"
#include "util/hash.h"
#include "util/path.h"
#include "util/sysfs.h"

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

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_sysfs_readers(void **state)
{
	char root[] = "/tmp/cp_test_util.XXXXXX", path[4200], buf[8];
	DIR *d;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/dir", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/dir/value", root);
	put_file(path, "42\n");
	snprintf(path, sizeof(path), "%s/long", root);
	put_file(path, "0123456789abcdef\n");

	assert_int_equal(cp_sysfs_read_value(root, "dir/value", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "42");
	strcpy(buf, "stale");
	assert_int_equal(cp_sysfs_read_value(root, "/dir/none", buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
	assert_int_equal(cp_sysfs_read_value(root, "long", buf, sizeof(buf)), -EFBIG);
	assert_string_equal(buf, "");

	/* the head of a long file is no error; the newline stays */
	assert_int_equal(cp_sysfs_read_head(root, "long", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0123456");
	assert_int_equal(cp_sysfs_read_head(root, "dir/value", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "42\n");
	assert_int_equal(cp_sysfs_read_head(root, "none", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(cp_sysfs_read_head(root, "long", buf, 0), -EINVAL);

	assert_true(cp_sysfs_dir_exists(root, "dir"));
	assert_true(cp_sysfs_dir_exists(root, "/"));
	assert_false(cp_sysfs_dir_exists(root, "dir/value"));
	assert_false(cp_sysfs_dir_exists(root, "none"));
	d = cp_sysfs_opendir(root, "none");
	assert_null(d);
	assert_int_equal(errno, ENOENT);
	d = cp_sysfs_opendir(root, "dir");
	assert_non_null(d);
	closedir(d);

	snprintf(path, sizeof(path), "%s/dir/value", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dir", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/long", root);
	unlink(path);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_name),
		cmocka_unit_test(test_hash_slot_range),
		cmocka_unit_test(test_probe_step),
		cmocka_unit_test(test_hash_bits),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_sysfs_readers),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
