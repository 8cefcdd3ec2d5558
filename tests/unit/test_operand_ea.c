// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pure logic on_breakpoint runs (cacheperf/operand.h,
 * cacheperf/breakpoint.h), compiled here as user space: the effective
 * address from a fake pt_regs and a decoded operand, the L1 set, and the
 * rule that settles an instruction as a conflict.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cacheperf/breakpoint.h"
#include "cacheperf/operand.h"
#include "decode/decode.h"

/* Every register a distinct value: rax = 0x1000, rcx = 0x2000, ... r15 = 0x10000. */
static void fake_regs(struct cp_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->ax = 0x1000;
	r->cx = 0x2000;
	r->dx = 0x3000;
	r->bx = 0x4000;
	r->sp = 0x5000;
	r->bp = 0x6000;
	r->si = 0x7000;
	r->di = 0x8000;
	r->r8 = 0x9000;
	r->r9 = 0xa000;
	r->r10 = 0xb000;
	r->r11 = 0xc000;
	r->r12 = 0xd000;
	r->r13 = 0xe000;
	r->r14 = 0xf000;
	r->r15 = 0x10000;
	r->ip = 0x401000;
	r->orig_ax = 0xdead;	/* no operand ever names these */
	r->flags = 0xbad;
}

/* Each enum cp_reg reads its own pt_regs slot. */
static void test_every_register(void **state)
{
	struct cp_regs r;

	(void)state;
	fake_regs(&r);
	for (__u32 reg = CP_REG_RAX; reg <= CP_REG_R15; reg++)
		assert_int_equal(cp_reg_value(&r, reg), 0x1000 * reg);
	assert_int_equal(cp_reg_value(&r, CP_REG_RIP), 0x401000);
	assert_int_equal(cp_reg_value(&r, CP_REG_NONE), 0);
	assert_int_equal(cp_reg_value(&r, CP_REG_NR), 0);
}

struct ea_case {
	const char *what;
	__u8 code[16];
	size_t len;
	__u64 seg_base;
	__u64 want;
};

/* The same bytes as test_decode.c; addresses worked out from fake_regs(). */
static const struct ea_case ea_cases[] = {
	{ "mov (%rdi),%eax", { 0x8b, 0x07 }, 2, 0, 0x8000 },
	{ "addl $1,-4(%rbp)", { 0x83, 0x45, 0xfc, 0x01 }, 4, 0, 0x6000 - 4 },
	{ "mov 0x1000(%rip),%rcx: next ip + disp", { 0x48, 0x8b, 0x0d, 0x00, 0x10, 0x00, 0x00 },
	  7, 0, 0x401000 + 7 + 0x1000 },
	{ "mov (%rax,%rbx,1),%dl", { 0x8a, 0x14, 0x18 }, 3, 0, 0x1000 + 0x4000 },
	{ "mov 0x8(%rax,%rbx,2),%dx", { 0x66, 0x8b, 0x54, 0x58, 0x08 }, 5, 0,
	  0x1000 + 2 * 0x4000 + 8 },
	{ "mov -0x8(%rax,%rbx,4),%edx", { 0x8b, 0x54, 0x98, 0xf8 }, 4, 0, 0x1000 + 4 * 0x4000 - 8 },
	{ "mov 0x12345678(%r12,%r13,8),%rdx",
	  { 0x4b, 0x8b, 0x94, 0xec, 0x78, 0x56, 0x34, 0x12 }, 8, 0,
	  0xd000 + 8 * 0xe000 + 0x12345678 },
	{ "mov %fs:0xfffffffffffffffc,%eax: fs base - 4",
	  { 0x64, 0x8b, 0x04, 0x25, 0xfc, 0xff, 0xff, 0xff }, 8, 0x7f0000001000, 0x7f0000000ffc },
	{ "mov %fs:(%rax),%rdx", { 0x64, 0x48, 0x8b, 0x10 }, 4, 0x7f0000001000, 0x7f0000002000 },
	{ "mov %gs:0x28,%rax", { 0x65, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00 }, 9,
	  0x7f0000004000, 0x7f0000004028 },
	{ "vmovaps %zmm1,0x40(%rdi,%rcx,8)", { 0x62, 0xf1, 0x7c, 0x48, 0x29, 0x4c, 0xcf, 0x01 },
	  8, 0, 0x8000 + 8 * 0x2000 + 0x40 },
	{ "mov 0x601040,%eax: no segment, the base is ignored",
	  { 0x8b, 0x04, 0x25, 0x40, 0x10, 0x60, 0x00 }, 7, 0x7f0000001000, 0x601040 },
};

static void test_ea_table(void **state)
{
	struct cp_regs r;

	(void)state;
	fake_regs(&r);
	for (size_t i = 0; i < sizeof(ea_cases) / sizeof(ea_cases[0]); i++) {
		const struct ea_case *c = &ea_cases[i];
		struct cp_operand op;
		__u64 ea = 0;

		print_message("# %s\n", c->what);
		cp_decode_operand(c->code, c->len, &op);
		assert_int_equal(cp_operand_ea(&op, &r, c->seg_base, &ea), 0);
		assert_int_equal(ea, c->want);
	}
}

/* A 64-bit negative displacement wraps like the CPU's adder; 0x67 wraps at 4 GiB. */
static void test_ea_wraps(void **state)
{
	struct cp_operand op = { .status = CP_OPND_OK, .base = CP_REG_RSI, .disp = -0x10 };
	struct cp_regs r;
	__u64 ea;

	(void)state;
	fake_regs(&r);
	r.si = 8;
	assert_int_equal(cp_operand_ea(&op, &r, 0, &ea), 0);
	assert_int_equal(ea, 0xfffffffffffffff8ull);
	op.flags = CP_OPND_F_ADDR32;
	r.si = 0x1ffffff00ull;	/* esi = 0xffffff00: only the low half counts */
	op.disp = 0x200;
	op.seg = CP_SEG_FS;
	assert_int_equal(cp_operand_ea(&op, &r, 0x7f0000000000, &ea), 0);
	assert_int_equal(ea, 0x7f0000000000ull + 0x100);
}

static void test_ea_not_computable(void **state)
{
	static const __u8 gather[] = { 0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x88 };
	struct cp_operand op;
	struct cp_regs r;
	__u64 ea = 42;

	(void)state;
	fake_regs(&r);
	cp_decode_operand(gather, sizeof(gather), &op);
	assert_int_equal(cp_operand_ea(&op, &r, 0, &ea), -1);
	assert_int_equal(ea, 42);
}

static void test_l1_set(void **state)
{
	(void)state;
	/* 64 sets of 64-byte lines: 4096 bytes apart is the same set */
	assert_int_equal(cp_l1_set(0x7f0000001043, 64, 64), 1);
	assert_int_equal(cp_l1_set(0x7f0000002043, 64, 64), 1);
	assert_int_equal(cp_l1_set(0x7f0000002083, 64, 64), 2);
	/* a non-power-of-two set count (12 MiB L3 slices and the like) */
	assert_int_equal(cp_l1_set(64 * 49, 64, 48), 1);
	assert_int_equal(cp_l1_set(0x1234, 0, 64), 0);
	assert_int_equal(cp_l1_set(0x1234, 64, 0), 0);
}

/* Fills hist[0..n) with addresses base + i * stride, all written. */
static void walk(struct cp_bp_access *hist, int n, __u64 base, __u64 stride)
{
	memset(hist, 0, CP_BP_HISTORY * sizeof(*hist));
	for (int i = 0; i < n; i++) {
		hist[i].addr = base + (__u64)i * stride;
		hist[i].set = cp_l1_set(hist[i].addr, 64, 64);
		hist[i].time_ns = 1000 + i;
	}
}

/* The first slot at which the rule settles, or -1. */
static int settles_at(const struct cp_bp_access *hist, int n)
{
	for (int i = 0; i < n; i++)
		if (cp_bp_conflict_run(hist, (__u32)i, 64, cp_bp_settle_run(8)))
			return i;
	return -1;
}

static void test_settle_rule(void **state)
{
	struct cp_bp_access hist[CP_BP_HISTORY];

	(void)state;
	/* an 8-way L1 settles on 9 lines of one set, a 12-way one on 13; never under 8 */
	assert_int_equal(cp_bp_settle_run(8), 9);
	assert_int_equal(cp_bp_settle_run(12), 13);
	assert_int_equal(cp_bp_settle_run(4), 8);
	assert_int_equal(cp_bp_settle_run(64), CP_BP_SETTLE_MAX);
	/* a column walk with a 4096-byte stride: the 9th access settles it on 8 ways */
	walk(hist, 64, 0x7f0000000000, 4096);
	assert_int_equal(settles_at(hist, 64), 8);
	/* a padded stride changes the set at every access */
	walk(hist, 64, 0x7f0000000000, 4096 + 64);
	assert_int_equal(settles_at(hist, 64), -1);
	/* a sequential walk of 8-byte elements: 8 accesses per line, never 8 lines */
	walk(hist, 64, 0x7f0000000000, 8);
	assert_int_equal(settles_at(hist, 64), -1);
	/* one hot address: one line */
	walk(hist, 64, 0x7f0000000000, 0);
	assert_int_equal(settles_at(hist, 64), -1);
	/* conflicting accesses, then a slot not written yet: no settle until 9 after it */
	walk(hist, 64, 0x7f0000000000, 4096);
	hist[3].time_ns = 0;
	assert_false(cp_bp_conflict_run(hist, 8, 64, 9));
	assert_int_equal(settles_at(hist, 64), 3 + 9);
	/* two lines of one set, alternating: repeats within the run */
	walk(hist, 64, 0x7f0000000000, 4096);
	for (int i = 0; i < 64; i++)
		hist[i].addr = 0x7f0000000000 + (i & 1) * 4096;
	assert_int_equal(settles_at(hist, 64), -1);
	/* out of range slots never settle */
	walk(hist, 64, 0x7f0000000000, 4096);
	assert_false(cp_bp_conflict_run(hist, CP_BP_HISTORY, 64, 9));
	assert_false(cp_bp_conflict_run(hist, 8, 0, 9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_register),
		cmocka_unit_test(test_ea_table),
		cmocka_unit_test(test_ea_wraps),
		cmocka_unit_test(test_ea_not_computable),
		cmocka_unit_test(test_l1_set),
		cmocka_unit_test(test_settle_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
