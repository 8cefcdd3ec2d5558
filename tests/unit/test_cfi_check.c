// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CFI check (symbols/cfi_check.h) on hand-made .eh_frame and
 * .debug_frame bytes: a good CIE and FDE pass; a huge register (an
 * operand, the return-address register, DW_OP_bregx), remember_state
 * nested too deep, lengths out of the section, CIE pointers and search
 * table entries that land where no entry starts are refused; a zero length
 * ends the walk; an opcode libdw does not know ends a program. Then the
 * check over ELF files a compiler wrote (symbols/cfi_guard.h): hiding
 * leaves libdw no CFI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <cmocka.h>

#include "symbols/cfi_check.h"
#include "symbols/cfi_guard.h"

/* A section being written. */
struct buf {
	__u8 b[4096];
	size_t n;
};

static void put(struct buf *s, const __u8 *p, size_t n)
{
	assert_true(s->n + n <= sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put32(struct buf *s, __u32 v)
{
	__u8 le[4] = {(__u8)v, (__u8)(v >> 8), (__u8)(v >> 16), (__u8)(v >> 24)};

	put(s, le, 4);
}

static void put_at32(struct buf *s, size_t off, __u32 v)
{
	for (int i = 0; i < 4; i++)
		s->b[off + (size_t)i] = (__u8)(v >> (8 * i));
}

/* def_cfa rsp+8; rip at cfa-8: what GCC's CIEs say */
static const __u8 cie_insns[] = {0x0c, 0x07, 0x08, 0x90, 0x01};

/*
 * A CIE ("zR", pcrel|sdata4 FDE addresses), version @version, return
 * address register @ra (one byte), then @insns. Returns its offset.
 */
static size_t cie(struct buf *s, bool eh, __u8 version, __u8 ra, const __u8 *insns, size_t n)
{
	size_t at = s->n;
	__u8 head[] = {version, 'z', 'R', 0, 1, 0x78, ra, 1, 0x1b};

	put32(s, 0);
	put32(s, eh ? 0 : 0xffffffffu);
	put(s, head, sizeof(head));
	put(s, insns, n);
	put_at32(s, at, (__u32)(s->n - at - 4));
	return at;
}

/* An FDE of the CIE at @cie_at, then @insns. Returns its offset. */
static size_t fde(struct buf *s, bool eh, size_t cie_at, const __u8 *insns, size_t n)
{
	size_t at = s->n;

	put32(s, 0);
	put32(s, eh ? (__u32)(s->n - cie_at) : (__u32)cie_at);
	put32(s, 0x1000);	      /* pc begin */
	put32(s, 0x40);		      /* range */
	put(s, (const __u8[]){0}, 1); /* no augmentation data */
	put(s, insns, n);
	put_at32(s, at, (__u32)(s->n - at - 4));
	return at;
}

static enum cp_cfi_verdict check(const struct buf *s, bool eh)
{
	struct cp_cfi_section sec = {s->b, s->n, 0x2000, eh};

	return cp_cfi_check(&sec, NULL);
}

/* One CIE and one FDE with @insns, in .eh_frame then in .debug_frame: both @want. */
static void one_fde(const __u8 *insns, size_t n, enum cp_cfi_verdict want)
{
	for (int eh = 1; eh >= 0; eh--) {
		struct buf s = {0};
		size_t c = cie(&s, eh, 1, 16, cie_insns, sizeof(cie_insns));

		fde(&s, eh, c, insns, n);
		put32(&s, 0);
		assert_int_equal(check(&s, eh), want);
	}
}

#define ONE_FDE(want, ...)                                                                         \
	one_fde((const __u8[]){__VA_ARGS__}, sizeof((const __u8[]){__VA_ARGS__}), want)

static void test_good(void **state)
{
	(void)state;
	/* push rbp; mov rsp, rbp; ... leave: GCC's frame */
	ONE_FDE(CP_CFI_OK, 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x4a, 0x0c, 0x07, 0x08);
	/* remember/restore around a tail, an expression on rbx, args_size */
	ONE_FDE(CP_CFI_OK, 0x0a, 0x41, 0x0e, 0x20, 0x0b, 0x10, 0x03, 0x02, 0x77, 0x10, 0x2e, 0x08);
	/* the highest register x86-64 has (APX's r31) */
	ONE_FDE(CP_CFI_OK, 0x07, 0x91, 0x01);
	one_fde(NULL, 0, CP_CFI_OK);
}

static void test_huge_register(void **state)
{
	struct buf s = {0};

	(void)state;
	/* DW_CFA_undefined 20,971,520: libdw's table would be 320 MiB */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x41, 0x07, 0x80, 0x80, 0x80, 0x0a);
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x07, 0x92, 0x01); /* 146: one past */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x05, 0xff, 0x0f, 0x08);
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x09, 0x03, 0xff, 0x7f);	    /* register's 2nd */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x0c, 0x80, 0x80, 0x04, 0x08); /* def_cfa */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x06, 0xc8, 0x01);		    /* restore_extended */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x14, 0x80, 0x80, 0x80, 0x80, 0x01, 0x02); /* val_offset */
	/* DW_CFA_expression rbx: DW_OP_bregx 1000 0 */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x10, 0x03, 0x04, 0x92, 0xe8, 0x07, 0x00);
	/* DW_CFA_def_cfa_expression: DW_OP_regx 500 */
	ONE_FDE(CP_CFI_BAD_REGISTER, 0x0f, 0x03, 0x90, 0xf4, 0x03);
	/* the CIE's return-address register, and in its initial instructions */
	cie(&s, true, 1, 200, cie_insns, sizeof(cie_insns));
	assert_int_equal(check(&s, true), CP_CFI_BAD_REGISTER);
	s.n = 0;
	cie(&s, true, 1, 16, (const __u8[]){0x08, 0xa0, 0x9c, 0x01}, 4);
	assert_int_equal(check(&s, true), CP_CFI_BAD_REGISTER);
}

static void test_remember_depth(void **state)
{
	__u8 insns[200];

	(void)state;
	memset(insns, 0x0a, sizeof(insns)); /* remember_state */
	one_fde(insns, CP_CFI_MAX_REMEMBER, CP_CFI_OK);
	one_fde(insns, CP_CFI_MAX_REMEMBER + 1, CP_CFI_TOO_DEEP);
	for (size_t i = 1; i < sizeof(insns); i += 2)
		insns[i] = 0x0b; /* each restored: never deeper than one */
	one_fde(insns, sizeof(insns), CP_CFI_OK);
}

static void test_malformed(void **state)
{
	struct buf s = {0};
	size_t c;

	(void)state;
	ONE_FDE(CP_CFI_MALFORMED, 0x07, 0x80);	     /* a ULEB128 cut by the entry's end */
	ONE_FDE(CP_CFI_MALFORMED, 0x0f, 0x10, 0x03); /* a block longer than the entry */
	ONE_FDE(CP_CFI_MALFORMED, 0x0f, 0x01, 0xf1); /* DW_OP_GNU_encoded_addr: not followed */
	ONE_FDE(CP_CFI_MALFORMED, 0x03, 0x01);	     /* advance_loc2 cut */

	/* a length past the section */
	c = cie(&s, true, 1, 16, cie_insns, sizeof(cie_insns));
	fde(&s, true, c, NULL, 0);
	put_at32(&s, c, 0x1000);
	assert_int_equal(check(&s, true), CP_CFI_MALFORMED);
	/* a length too short for its own id */
	put_at32(&s, c, 3);
	assert_int_equal(check(&s, true), CP_CFI_MALFORMED);
	/* a version libdw does not read */
	s.n = 0;
	cie(&s, true, 2, 16, cie_insns, sizeof(cie_insns));
	assert_int_equal(check(&s, true), CP_CFI_MALFORMED);
}

static void test_cie_pointers(void **state)
{
	struct buf s = {0};
	size_t c, f;

	(void)state;
	/* .eh_frame: a pointer before the section's start */
	c = cie(&s, true, 1, 16, cie_insns, sizeof(cie_insns));
	f = fde(&s, true, c, NULL, 0);
	put_at32(&s, f + 4, (__u32)(f + 4 + 8));
	assert_int_equal(check(&s, true), CP_CFI_MALFORMED);
	/* into the middle of the CIE: libdw would read its instructions as a CIE */
	put_at32(&s, f + 4, (__u32)(f + 4 - (c + 2)));
	assert_int_equal(check(&s, true), CP_CFI_MALFORMED);
	/* at the FDE itself: no CIE there */
	put_at32(&s, f + 4, (__u32)(f + 4 - f));
	assert_int_equal(check(&s, true), CP_CFI_MALFORMED);

	/* .debug_frame: a CIE after its FDE is fine, one outside is not */
	s.n = 0;
	f = fde(&s, false, 0, NULL, 0);
	c = cie(&s, false, 3, 16, cie_insns, sizeof(cie_insns));
	put_at32(&s, f + 4, (__u32)c);
	assert_int_equal(check(&s, false), CP_CFI_OK);
	put_at32(&s, f + 4, 0x10000);
	assert_int_equal(check(&s, false), CP_CFI_MALFORMED);
	put_at32(&s, f + 4, (__u32)f); /* itself */
	assert_int_equal(check(&s, false), CP_CFI_MALFORMED);
}

/* A zero length ends the walk, as libdw's: what follows is never read ... */
static void test_terminator(void **state)
{
	struct buf s = {0}, hdr = {0};
	size_t c, f, walked;
	__u8 bad[] = {0x07, 0x80, 0x80, 0x80, 0x0a};

	(void)state;
	c = cie(&s, true, 1, 16, cie_insns, sizeof(cie_insns));
	walked = fde(&s, true, c, NULL, 0);
	put32(&s, 0);
	f = fde(&s, true, c, bad, sizeof(bad));
	assert_int_equal(check(&s, true), CP_CFI_OK);

	/* ... unless .eh_frame_hdr's search table leads there */
	hdr.b[0] = 1;
	hdr.b[1] = 0x1b; /* eh_frame_ptr: pcrel sdata4 */
	hdr.b[2] = 0x03; /* count: udata4 */
	hdr.b[3] = 0x3b; /* table: datarel sdata4 */
	hdr.n = 4;
	put32(&hdr, (__u32)(0x2000 - (0x1000 + 4))); /* .eh_frame at 0x2000, hdr at 0x1000 */
	put32(&hdr, 1);
	put32(&hdr, 0);
	put32(&hdr, (__u32)(0x2000 + f - 0x1000));
	{
		struct cp_cfi_section sec = {s.b, s.n, 0x2000, true};
		struct cp_cfi_hdr h = {hdr.b, hdr.n, 0x1000};

		assert_int_equal(cp_cfi_check(&sec, &h), CP_CFI_MALFORMED);
		/* the walked FDE: fine */
		put_at32(&hdr, 16, (__u32)(0x2000 + walked - 0x1000));
		assert_int_equal(cp_cfi_check(&sec, &h), CP_CFI_OK);
		/* an entry into the middle of one */
		put_at32(&hdr, 16, (__u32)(0x2000 + 6 - 0x1000));
		assert_int_equal(cp_cfi_check(&sec, &h), CP_CFI_MALFORMED);
	}
}

static void test_unknown_opcode_ends(void **state)
{
	(void)state;
	/* libdw stops at 0x3f: the huge register after it never runs */
	ONE_FDE(CP_CFI_OK, 0x3f, 0x07, 0x80, 0x80, 0x80, 0x0a);
	ONE_FDE(CP_CFI_OK, 0x00, 0x00, 0x00);
}

static void test_64bit_lengths(void **state)
{
	struct buf s = {0};
	__u8 head[] = {1, 0, 1, 0x78, 16};

	(void)state;
	put32(&s, 0xffffffffu);
	put32(&s, (__u32)(8 + sizeof(head) + sizeof(cie_insns)));
	put32(&s, 0);
	put32(&s, 0xffffffffu);
	put32(&s, 0xffffffffu);
	put(&s, head, sizeof(head));
	put(&s, cie_insns, sizeof(cie_insns));
	assert_int_equal(check(&s, false), CP_CFI_OK);
	/* the instructions: DW_CFA_undefined, a ULEB128 going on past the end */
	memcpy(s.b + 4 + 8 + 8 + sizeof(head), (const __u8[]){0x07, 0xff, 0xff, 0xff, 0xff}, 5);
	assert_int_equal(check(&s, false), CP_CFI_MALFORMED);
}

/* This test program's own CFI passes; hidden, libdw finds none. */
static void test_guard_elf(void **state)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf *elf;
	Dwarf_CFI *cfi;

	(void)state;
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	assert_non_null(elf);
	assert_int_equal(cp_cfi_guard_check(elf, true), CP_CFI_OK);
	assert_int_equal(cp_cfi_guard_hide(elf), 0);
	cfi = dwarf_getcfi_elf(elf);
	assert_null(cfi);
	elf_end(elf);
	close(fd);
}

/*
 * A plain .debug_frame (gcc -g -fno-asynchronous-unwind-tables keeps its CFI
 * there) passes as it is: it was taken for compressed data, judged
 * malformed, and the module unwound without it.
 */
static void test_guard_plain_debug_frame(void **state)
{
	char path[4096];
	const char *root = getenv("CP_ROOT");
	int fd;
	Elf *elf;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus_elf/seed_debug_frame.so",
		 root ? root : ".");
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	assert_non_null(elf);
	assert_int_equal(cp_cfi_guard_check(elf, false), CP_CFI_OK);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_huge_register),
		cmocka_unit_test(test_remember_depth),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_cie_pointers),
		cmocka_unit_test(test_terminator),
		cmocka_unit_test(test_unknown_opcode_ends),
		cmocka_unit_test(test_64bit_lengths),
		cmocka_unit_test(test_guard_elf),
		cmocka_unit_test(test_guard_plain_debug_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
