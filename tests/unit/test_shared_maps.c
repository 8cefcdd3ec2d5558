// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shared mappings between processes: every access to a shared file given
 * in the file's line space at its offset in the file. The mappings are
 * maps lines as the kernel writes them, parsed by the real parser; the
 * offsets expected are worked out from their starts and offsets in the
 * comments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "profile/shared_maps.h"

/* @line parsed, its path cut as the snapshot keeps it (in one of 4 buffers: a test's maps). */
static struct cp_map parse(const char *line)
{
	static char bufs[4][128];
	static int next;
	char *buf = bufs[next++ % 4];
	struct cp_map m;
	const char *path;
	size_t len;

	snprintf(buf, sizeof(bufs[0]), "%s", line);
	assert_int_equal(cp_maps_parse_line(buf, strlen(buf), &m, &path, &len), 0);
	buf[path - buf + (ptrdiff_t)len] = '\0';
	m.path = path;
	return m;
}

/* Places an access at @addr of mapping @m: expects it at @want_offset of the file of @want_space. */
static void expect_place(struct cp_shared_maps *s, const struct cp_map *m, __u64 addr,
			 __u64 want_offset, __u32 want_space)
{
	__u32 space = 0;

	assert_true(cp_shared_maps__place(s, m, &addr, &space));
	assert_int_equal(addr, want_offset);
	assert_int_equal(space, want_space);
}

/*
 * Process A maps /dev/shm/q's first two pages at 0x7f0000001000; process
 * B maps it from its second page (offset 0x1000) at 0x7e0000000000. A's
 * 0x7f0000002048 and B's 0x7e0000000048 are both the file's byte 0x1048:
 * one line of the file's space, whoever came first. B's 0x7e0000002000 is
 * the file's 0x3000, past what A maps, in the same space. The file is
 * named as maps names it, and mapped up to 0x4000 (B's end).
 */
static void test_processes_meet_at_file_offsets(void **state)
{
	struct cp_shared_maps *s = cp_shared_maps__new();
	struct cp_map a = parse("7f0000001000-7f0000003000 rw-s 00000000 00:1a 4242 /dev/shm/q");
	struct cp_map b = parse("7e0000000000-7e0000003000 rw-s 00001000 00:1a 4242 /dev/shm/q");
	struct cp_shared_maps_stats st;
	struct cp_shared_file f;

	(void)state;
	expect_place(s, &a, 0x7f0000002048, 0x1048, CP_SPACE_FILE_FIRST);
	expect_place(s, &b, 0x7e0000000048, 0x1048, CP_SPACE_FILE_FIRST);
	expect_place(s, &b, 0x7e0000002000, 0x3000, CP_SPACE_FILE_FIRST);
	assert_int_equal(cp_shared_maps__file(s, CP_SPACE_FILE_FIRST, &f), 0);
	assert_string_equal(f.name, "/dev/shm/q");
	assert_int_equal(f.mapped, 0x4000);
	assert_int_equal(cp_shared_maps__file(s, CP_SPACE_FILE_FIRST + 1, &f), -ENOENT);
	cp_shared_maps__stats(s, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.given, 3);
	cp_shared_maps__free(s);
}

/*
 * Another inode, or the same inode on another device, is another file
 * with a space of its own; a deleted file keeps " (deleted)" in its name.
 */
static void test_files_apart(void **state)
{
	struct cp_shared_maps *s = cp_shared_maps__new();
	struct cp_map a = parse("1000-2000 rw-s 00000000 00:01 7 /dev/zero (deleted)");
	struct cp_map b = parse("5000-6000 rw-s 00000000 00:01 8 /dev/zero (deleted)");
	struct cp_map c = parse("9000-a000 rw-s 00000000 08:01 7 /srv/db/buffers");
	struct cp_map a2 = parse("7000-8000 rw-s 00000000 00:01 7 /dev/zero (deleted)");
	struct cp_shared_file f;

	(void)state;
	expect_place(s, &a, 0x1008, 0x8, CP_SPACE_FILE_FIRST);
	expect_place(s, &b, 0x5008, 0x8, CP_SPACE_FILE_FIRST + 1);
	expect_place(s, &c, 0x9008, 0x8, CP_SPACE_FILE_FIRST + 2);
	expect_place(s, &a2, 0x7010, 0x10, CP_SPACE_FILE_FIRST);
	assert_int_equal(cp_shared_maps__file(s, CP_SPACE_FILE_FIRST + 1, &f), 0);
	assert_true(b.deleted);
	assert_string_equal(f.name, "/dev/zero (deleted)");
	cp_shared_maps__free(s);
}

/*
 * Past CP_MAX_SHARED_FILES files the least recently accessed one is
 * dropped (its space is never given again), counted: file 1 was accessed
 * again after the others, so file 2 goes when file CAP + 1 comes; the
 * others keep their spaces; file 2 back is a new file with a new space,
 * and file 1 goes, the coldest by then.
 */
static void test_files_past_the_cap(void **state)
{
	struct cp_shared_maps *s = cp_shared_maps__new();
	struct cp_shared_maps_stats st;
	struct cp_shared_file f;

	(void)state;
	for (__u64 ino = 1; ino <= CP_MAX_SHARED_FILES + 1; ino++) {
		struct cp_map m = { .start = 0x1000, .end = 0x2000, .inode = ino,
				    .shared = true, .kind = CP_MAP_FILE, .path = "/f" };

		if (ino == CP_MAX_SHARED_FILES + 1)
			expect_place(s, &(struct cp_map){ .start = 0x1000, .end = 0x2000,
							  .inode = 1, .path = "/f" },
				     0x1000, 0, CP_SPACE_FILE_FIRST);
		expect_place(s, &m, 0x1000, 0, CP_SPACE_FILE_FIRST + (__u32)ino - 1);
	}
	/* every file kept is found where it was after the index was rebuilt */
	for (__u64 ino = 1; ino <= CP_MAX_SHARED_FILES + 1; ino++)
		if (ino != 2)
			expect_place(s, &(struct cp_map){ .start = 0x1000, .end = 0x2000,
							  .inode = ino, .path = "/f" },
				     0x1008, 8, CP_SPACE_FILE_FIRST + (__u32)ino - 1);
	cp_shared_maps__stats(s, &st);
	assert_int_equal(st.files, CP_MAX_SHARED_FILES);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(cp_shared_maps__file(s, CP_SPACE_FILE_FIRST + 1, &f), -ENOENT);
	/* file 2 again: a new file, a new space; file 1 is the coldest now */
	expect_place(s, &(struct cp_map){ .start = 0x1000, .end = 0x2000, .inode = 2, .path = "/f" },
		     0x1008, 8, CP_SPACE_FILE_FIRST + CP_MAX_SHARED_FILES + 1);
	cp_shared_maps__stats(s, &st);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(cp_shared_maps__file(s, CP_SPACE_FILE_FIRST, &f), -ENOENT);
	assert_int_equal(cp_shared_maps__file(s, CP_SPACE_FILE_FIRST + 2, &f), 0);
	cp_shared_maps__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_processes_meet_at_file_offsets),
		cmocka_unit_test(test_files_apart),
		cmocka_unit_test(test_files_past_the_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
