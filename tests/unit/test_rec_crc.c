// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recording checksum is zlib's CRC-32 whatever the path: every length
 * from 0 to 1100 bytes (below, at and past the 64 bytes the folding starts
 * with, whole and partial 16-byte lanes) at every alignment of the buffer,
 * and a 3 MiB buffer, give crc32(0, p, len); and on a CPU with PCLMULQDQ the
 * folding path is the one taken. Known value: "123456789" -> 0xCBF43926.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "record/rec_crc.h"

#define BIG	(3u << 20)

/* The group's state: BIG + 16 bytes of xorshift noise. */
static int make_noise(void **state)
{
	__u8 *p = malloc(BIG + 16);
	__u64 x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; p && i < BIG + 16; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (__u8)(x >> 24);
	}
	*state = p;
	return p ? 0 : -1;
}

static int free_noise(void **state)
{
	free(*state);
	return 0;
}

static void test_check_value(void **state)
{
	(void)state;
	assert_int_equal(cp_rec_crc("123456789", 9), 0xcbf43926u);
	assert_int_equal(cp_rec_crc("", 0), 0);
}

static void test_every_length_and_alignment(void **state)
{
	const __u8 *p = *state;

	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len <= 1100; len++)
			assert_int_equal(cp_rec_crc(p + off, len),
					 (__u32)crc32(0L, p + off, (uInt)len));
}

static void test_large_buffer(void **state)
{
	__u8 *p = *state;
	__u32 before = cp_rec_crc(p, BIG);

	assert_int_equal(before, (__u32)crc32(0L, p, BIG));
	assert_int_equal(cp_rec_crc(p + 7, BIG - 5), (__u32)crc32(0L, p + 7, BIG - 5));
	/* one flipped bit in the middle changes it, to zlib's value again */
	p[BIG / 2] ^= 0x10;
	assert_int_not_equal(cp_rec_crc(p, BIG), before);
	assert_int_equal(cp_rec_crc(p, BIG), (__u32)crc32(0L, p, BIG));
	p[BIG / 2] ^= 0x10;
}

static void test_folds_where_the_cpu_can(void **state)
{
	(void)state;
#if defined(__x86_64__)
	__builtin_cpu_init();
	assert_int_equal(cp_rec_crc_folds(), !!__builtin_cpu_supports("pclmul"));
#else
	assert_false(cp_rec_crc_folds());
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_every_length_and_alignment),
		cmocka_unit_test(test_large_buffer),
		cmocka_unit_test(test_folds_where_the_cpu_can),
	};

	return cmocka_run_group_tests_name("rec_crc", tests, make_noise, free_noise);
}
