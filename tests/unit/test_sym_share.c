// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sharing one parsed ELF file across processes: a process address to the
 * file's link-time address through its PT_LOAD segments, which mappings may
 * be shared, and the file key (device, inode) a maps line and a stat() agree on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <cmocka.h>

#include "symbols/sym_share.h"

/*
 * A shared library laid out as ld does it: headers and text at file offset =
 * link address, the data segment one page further in memory than in the
 * file (the RELRO gap).
 */
static const struct cp_sym_load lib[] = {
	{ .offset = 0, .filesz = 0x28000, .vaddr = 0 },
	{ .offset = 0x28000, .filesz = 0x155000, .vaddr = 0x28000 },
	{ .offset = 0x1e6e30, .filesz = 0x5000, .vaddr = 0x1e7e30 },
};

static void test_pie_text_and_data(void **state)
{
	__u64 vaddr = 0;

	(void)state;
	/* text mapped at its file offset 0x28000: ip - start + offset */
	assert_int_equal(cp_sym_link_addr(lib, 3, 0x7f0000028000, 0x7f000017d000, 0x28000,
					  0x7f0000028123, &vaddr), 0);
	assert_int_equal(vaddr, 0x28123);
	/* the data segment's page holds file offset 0x1e6e40: 0x10 into the segment */
	assert_int_equal(cp_sym_link_addr(lib, 3, 0x7f00001e7000, 0x7f00001ec000, 0x1e6000,
					  0x7f00001e7e40, &vaddr), 0);
	assert_int_equal(vaddr, 0x1e7e30 + 0x10);
	/* that page's first bytes are the file's before the segment: placed by it still */
	assert_int_equal(cp_sym_link_addr(lib, 3, 0x7f00001e7000, 0x7f00001ec000, 0x1e6000,
					  0x7f00001e7000, &vaddr), 0);
	assert_int_equal(vaddr, 0x1e7e30 - 0xe30);
}

static void test_non_pie_padding_and_outside(void **state)
{
	/* ET_EXEC: linked at 0x400000, mapped where linked; 0x600 bytes of text */
	static const struct cp_sym_load exe[] = {
		{ .offset = 0, .filesz = 0x600, .vaddr = 0x400000 },
		{ .offset = 0x1000, .filesz = 0x2000, .vaddr = 0x401000 },
	};
	__u64 vaddr = 0;

	(void)state;
	assert_int_equal(cp_sym_link_addr(exe, 2, 0x401000, 0x403000, 0x1000, 0x401234, &vaddr),
			 0);
	assert_int_equal(vaddr, 0x401234);
	/* the page padding after the first segment's bytes: that segment's */
	assert_int_equal(cp_sym_link_addr(exe, 2, 0x400000, 0x401000, 0, 0x400800, &vaddr), 0);
	assert_int_equal(vaddr, 0x400800);
	/* outside the mapping, or a mapping of no segment's bytes */
	assert_int_equal(cp_sym_link_addr(exe, 2, 0x401000, 0x403000, 0x1000, 0x403000, &vaddr),
			 -ENOENT);
	assert_int_equal(cp_sym_link_addr(exe, 2, 0x401000, 0x403000, 0x1000, 0x400fff, &vaddr),
			 -ENOENT);
	assert_int_equal(cp_sym_link_addr(exe, 2, 0x500000, 0x501000, 0x5000, 0x500010, &vaddr),
			 -ENOENT);
	assert_int_equal(cp_sym_link_addr(exe, 0, 0x401000, 0x403000, 0x1000, 0x401234, &vaddr),
			 -ENOENT);
}

static void test_shareable_mappings(void **state)
{
	const struct cp_map code = {
		.kind = CP_MAP_FILE, .prot = CP_MAP_READ | CP_MAP_EXEC, .inode = 1234,
		.path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	struct cp_map m;

	(void)state;
	assert_true(cp_sym_map_shareable(&code));
	assert_true(cp_sym_map_servable(&code));
	m = code;
	m.deleted = true;		/* upgraded since it was mapped */
	assert_false(cp_sym_map_shareable(&m));
	/* a tenant's file deleted after dlopen: still the describe server's, through map_files */
	assert_true(cp_sym_map_servable(&m));
	m = code;
	m.prot = CP_MAP_READ;		/* data, not code */
	assert_false(cp_sym_map_shareable(&m));
	assert_false(cp_sym_map_servable(&m));
	m = code;
	m.kind = CP_MAP_VDSO;
	m.path = "[vdso]";
	assert_false(cp_sym_map_shareable(&m));
	assert_false(cp_sym_map_servable(&m));
	m = code;
	m.path = "memfd:jit";		/* no path to open again */
	assert_false(cp_sym_map_shareable(&m));
	assert_false(cp_sym_map_servable(&m));
	m = code;
	m.inode = 0;
	assert_false(cp_sym_map_shareable(&m));
	assert_false(cp_sym_map_servable(&m));
}

static void test_file_keys(void **state)
{
	const struct cp_map m = { .dev_major = 259, .dev_minor = 300, .inode = 42 };
	struct cp_sym_file_key maps = cp_sym_map_key(&m), st;

	(void)state;
	/* what stat() says of the same file: the kernel's dev_t, split the same way */
	st = cp_sym_stat_key(makedev(259, 300), 42);
	assert_true(cp_sym_key_equal(&maps, &st));
	/* another inode, or the same inode number on another device (a container's layer) */
	st = cp_sym_stat_key(makedev(259, 300), 43);
	assert_false(cp_sym_key_equal(&maps, &st));
	st = cp_sym_stat_key(makedev(259, 301), 42);
	assert_false(cp_sym_key_equal(&maps, &st));
	st = cp_sym_stat_key(makedev(0, 300), 42);
	assert_false(cp_sym_key_equal(&maps, &st));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_text_and_data),
		cmocka_unit_test(test_non_pie_padding_and_outside),
		cmocka_unit_test(test_shareable_mappings),
		cmocka_unit_test(test_file_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
