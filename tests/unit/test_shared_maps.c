// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shared mappings between processes: a file's bytes given at the first
 * accessing process's addresses. The mappings are maps lines as the kernel
 * writes them, parsed by the real parser; the addresses expected are
 * worked out from their starts and offsets in the comments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/shared_maps.h"

static struct cp_map parse(const char *line)
{
	struct cp_map m;
	const char *path;
	size_t len;

	assert_int_equal(cp_maps_parse_line(line, strlen(line), &m, &path, &len), 0);
	return m;
}

/*
 * Places @tgid's access at @addr of its mapping @m: expects @moved, and the
 * address and lender (0: none) it is given at.
 */
static void expect_place(struct cp_shared_maps *s, __u32 tgid, const struct cp_map *m,
			 __u64 addr, bool moved, __u64 want_addr, __u32 want_lender)
{
	__u32 space = 0;

	assert_int_equal(cp_shared_maps__place(s, tgid, m, &addr, &space), moved);
	assert_int_equal(addr, want_addr);
	assert_int_equal(space, want_lender);
}

/*
 * Process 10 maps /dev/shm/q's first two pages at 0x7f0000001000; process
 * 20 maps it from its second page (offset 0x1000) at 0x7e0000000000.
 * 20's byte 0x7e0000000048 is the file's 0x1048, which 10 has at
 * 0x7f0000002048. 10 lends its addresses (it came first), so its own stay;
 * a byte of 20's past 10's two pages (file 0x3000) stays 20's, counted.
 */
static void test_second_process_takes_the_first_ones_addresses(void **state)
{
	struct cp_shared_maps *s = cp_shared_maps__new();
	struct cp_map a = parse("7f0000001000-7f0000003000 rw-s 00000000 00:1a 4242 "
				"/dev/shm/q");
	struct cp_map b = parse("7e0000000000-7e0000003000 rw-s 00001000 00:1a 4242 "
				"/dev/shm/q");
	struct cp_shared_maps_stats st;

	(void)state;
	expect_place(s, 10, &a, 0x7f0000001010, false, 0x7f0000001010, 0);
	expect_place(s, 20, &b, 0x7e0000000048, true, 0x7f0000002048, 10);
	expect_place(s, 20, &b, 0x7e0000002000, false, 0x7e0000002000, 0);
	cp_shared_maps__stats(s, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.moved, 1);
	assert_int_equal(st.outside, 1);
	cp_shared_maps__free(s);
}

/*
 * Another inode, or the same inode on another device, is another file:
 * each lent by its own first process. An exec of the lender frees its
 * files: the next process to access one lends it.
 */
static void test_files_apart_and_exec(void **state)
{
	struct cp_shared_maps *s = cp_shared_maps__new();
	struct cp_map a = parse("1000-2000 rw-s 00000000 00:01 7 /dev/zero (deleted)");
	struct cp_map b = parse("5000-6000 rw-s 00000000 00:01 8 /dev/zero (deleted)");
	struct cp_map c = parse("9000-a000 rw-s 00000000 08:01 7 /srv/db/buffers");
	/* process 40's mapping of a's file (inode 7 of 00:01) at 0x5000 */
	struct cp_map a40 = parse("5000-6000 rw-s 00000000 00:01 7 /dev/zero (deleted)");

	(void)state;
	expect_place(s, 10, &a, 0x1008, false, 0x1008, 0);
	expect_place(s, 20, &b, 0x5008, false, 0x5008, 0);
	expect_place(s, 30, &c, 0x9008, false, 0x9008, 0);
	expect_place(s, 40, &a40, 0x5008, true, 0x1008, 10);
	cp_shared_maps__forget(s, 10);
	/* b's file is still 20's: 40 is given 20's addresses (the same ones here) */
	expect_place(s, 40, &b, 0x5010, true, 0x5010, 20);
	/* a's file is lent by 40 now, the first to access it after the exec */
	expect_place(s, 40, &a40, 0x5010, false, 0x5010, 0);
	expect_place(s, 10, &a, 0x1010, true, 0x5010, 40);
	cp_shared_maps__free(s);
}

/* Past CP_MAX_SHARED_FILES files the next ones stay each process's own, counted. */
static void test_files_past_the_cap(void **state)
{
	struct cp_shared_maps *s = cp_shared_maps__new();
	struct cp_shared_maps_stats st;

	(void)state;
	for (__u64 ino = 1; ino <= CP_MAX_SHARED_FILES + 1; ino++) {
		struct cp_map m10 = { .start = 0x1000, .end = 0x2000, .inode = ino,
				      .shared = true, .kind = CP_MAP_FILE };
		struct cp_map m20 = m10;
		bool kept = ino <= CP_MAX_SHARED_FILES;

		m20.start = 0x8000;
		m20.end = 0x9000;
		expect_place(s, 10, &m10, 0x1000, false, 0x1000, 0);
		expect_place(s, 20, &m20, 0x8000, kept, kept ? 0x1000 : 0x8000, kept ? 10 : 0);
	}
	cp_shared_maps__stats(s, &st);
	assert_int_equal(st.files, CP_MAX_SHARED_FILES);
	assert_int_equal(st.moved, CP_MAX_SHARED_FILES);
	assert_int_equal(st.full, 2);
	cp_shared_maps__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_process_takes_the_first_ones_addresses),
		cmocka_unit_test(test_files_apart_and_exec),
		cmocka_unit_test(test_files_past_the_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
