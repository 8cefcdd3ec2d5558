// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Instruction decoding: the bytes GNU as 2.40 emits for each instruction in
 * the comment (checked with objdump -d), and the operand an x86 reader
 * derives from the Intel manual: ModRM/SIB parts, the segment prefix, the
 * access the instruction makes, the operand width in bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "decode/decode.h"

#define R	CP_OPND_READ
#define W	CP_OPND_WRITE
#define RMW	CP_OPND_RMW

struct decode_case {
	const char *what;
	__u8 code[16];
	size_t len;
	struct cp_operand want;		/* status, then the fields that matter when OK */
};

#define OK(base_, index_, scale_, disp_, seg_, access_, size_, len_)			\
	{ .status = CP_OPND_OK, .base = CP_REG_##base_, .index = CP_REG_##index_,	\
	  .scale = (scale_), .disp = (disp_), .seg = CP_SEG_##seg_, .access = (access_),	\
	  .size = (size_), .insn_len = (len_) }
#define NOT(status_)	{ .status = CP_OPND_##status_ }

static const struct decode_case cases[] = {
	/* loads and stores */
	{ "mov (%rdi),%eax", { 0x8b, 0x07 }, 2, OK(RDI, NONE, 0, 0, NONE, R, 4, 2) },
	{ "mov %rax,0x10(%rsi)", { 0x48, 0x89, 0x46, 0x10 }, 4,
	  OK(RSI, NONE, 0, 16, NONE, W, 8, 4) },
	{ "mov 0x0(%r13),%rax: r13 as base needs a disp8 of 0", { 0x49, 0x8b, 0x45, 0x00 }, 4,
	  OK(R13, NONE, 0, 0, NONE, R, 8, 4) },
	{ "mov 0x601040,%eax: absolute, SIB without base or index",
	  { 0x8b, 0x04, 0x25, 0x40, 0x10, 0x60, 0x00 }, 7,
	  OK(NONE, NONE, 0, 0x601040, NONE, R, 4, 7) },
	{ "movq %xmm0,(%rsi)", { 0x66, 0x0f, 0xd6, 0x06 }, 4, OK(RSI, NONE, 0, 0, NONE, W, 8, 4) },
	/* read-modify-write */
	{ "addl $1,-4(%rbp)", { 0x83, 0x45, 0xfc, 0x01 }, 4,
	  OK(RBP, NONE, 0, -4, NONE, RMW, 4, 4) },
	{ "incq (%rsp)", { 0x48, 0xff, 0x04, 0x24 }, 4, OK(RSP, NONE, 0, 0, NONE, RMW, 8, 4) },
	{ "lock cmpxchg %rcx,(%rdx): a conditional write is a write",
	  { 0xf0, 0x48, 0x0f, 0xb1, 0x0a }, 5, OK(RDX, NONE, 0, 0, NONE, RMW, 8, 5) },
	/* RIP-relative: the displacement counts from the next instruction */
	{ "mov 0x1000(%rip),%rcx", { 0x48, 0x8b, 0x0d, 0x00, 0x10, 0x00, 0x00 }, 7,
	  OK(RIP, NONE, 0, 0x1000, NONE, R, 8, 7) },
	/* SIB, every scale */
	{ "mov (%rax,%rbx,1),%dl", { 0x8a, 0x14, 0x18 }, 3, OK(RAX, RBX, 1, 0, NONE, R, 1, 3) },
	{ "mov 0x8(%rax,%rbx,2),%dx", { 0x66, 0x8b, 0x54, 0x58, 0x08 }, 5,
	  OK(RAX, RBX, 2, 8, NONE, R, 2, 5) },
	{ "mov -0x8(%rax,%rbx,4),%edx", { 0x8b, 0x54, 0x98, 0xf8 }, 4,
	  OK(RAX, RBX, 4, -8, NONE, R, 4, 4) },
	{ "mov 0x12345678(%r12,%r13,8),%rdx", { 0x4b, 0x8b, 0x94, 0xec, 0x78, 0x56, 0x34, 0x12 },
	  8, OK(R12, R13, 8, 0x12345678, NONE, R, 8, 8) },
	/* thread-local storage */
	{ "mov %fs:0xfffffffffffffffc,%eax: local-exec TLS",
	  { 0x64, 0x8b, 0x04, 0x25, 0xfc, 0xff, 0xff, 0xff }, 8,
	  OK(NONE, NONE, 0, -4, FS, R, 4, 8) },
	{ "mov %fs:(%rax),%rdx: initial-exec TLS", { 0x64, 0x48, 0x8b, 0x10 }, 4,
	  OK(RAX, NONE, 0, 0, FS, R, 8, 4) },
	{ "mov %gs:0x28,%rax", { 0x65, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00 }, 9,
	  OK(NONE, NONE, 0, 0x28, GS, R, 8, 9) },
	/* AVX stores */
	{ "vmovdqu %ymm0,(%rdi)", { 0xc5, 0xfe, 0x7f, 0x07 }, 4,
	  OK(RDI, NONE, 0, 0, NONE, W, 32, 4) },
	{ "vmovaps %zmm1,0x40(%rdi,%rcx,8): EVEX disp8 x 64",
	  { 0x62, 0xf1, 0x7c, 0x48, 0x29, 0x4c, 0xcf, 0x01 }, 8,
	  OK(RDI, RCX, 8, 0x40, NONE, W, 64, 8) },
	/* the stack */
	{ "push 0x8(%rsp): the explicit source, rsp before the push",
	  { 0xff, 0x74, 0x24, 0x08 }, 4, OK(RSP, NONE, 0, 8, NONE, R, 8, 4) },
	{ "pop 0x8(%rsp): the destination's rsp is the one after the pop",
	  { 0x8f, 0x44, 0x24, 0x08 }, 4, OK(RSP, NONE, 0, 16, NONE, W, 8, 4) },
	{ "push %rax: only the implicit stack slot", { 0x50 }, 1, NOT(IMPLICIT) },
	{ "ret", { 0xc3 }, 1, NOT(IMPLICIT) },
	/* no access, or not computable */
	{ "lea 0x8(%rax,%rbx,4),%rcx", { 0x48, 0x8d, 0x4c, 0x98, 0x08 }, 5, NOT(NO_ACCESS) },
	{ "nopw (%rax,%rax,1)", { 0x66, 0x0f, 0x1f, 0x04, 0x00 }, 5, NOT(NO_ACCESS) },
	{ "vpgatherdd %ymm2,(%rax,%ymm1,4),%ymm0", { 0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x88 }, 6,
	  NOT(VSIB) },
	{ "rep movsb", { 0xf3, 0xa4 }, 2, NOT(STRING) },
	{ "stos %eax,%es:(%rdi)", { 0xab }, 1, NOT(STRING) },
	{ "add %rbx,%rax", { 0x48, 0x01, 0xd8 }, 3, NOT(NO_MEMORY) },
	{ "ff ff is no instruction", { 0xff, 0xff }, 2, NOT(UNDECODABLE) },
	{ "mov 0x1000(%rip),%rcx cut after 3 bytes", { 0x48, 0x8b, 0x0d }, 3, NOT(UNDECODABLE) },
	{ "nothing", { 0 }, 0, NOT(UNDECODABLE) },
};

static void test_operand_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct decode_case *c = &cases[i];
		const struct cp_operand *w = &c->want;
		struct cp_operand got;

		print_message("# %s\n", c->what);
		cp_decode_operand(c->code, c->len, &got);
		assert_int_equal(got.status, w->status);
		if (w->status != CP_OPND_OK)
			continue;
		/* the whole operand: unlisted fields (flags, padding) must be 0 */
		if (memcmp(&got, w, sizeof(got)))
			print_message("# got base %u index %u scale %u disp %lld seg %u access %u size %u len %u flags %u\n",
				      got.base, got.index, got.scale, (long long)got.disp, got.seg,
				      got.access, got.size, got.insn_len, got.flags);
		assert_memory_equal(&got, w, sizeof(got));
	}
}

/* 0x67: `mov (%esi),%eax` adds esi, and the address wraps at 4 GiB */
static void test_decode_addr32(void **state)
{
	static const __u8 code[] = { 0x67, 0x8b, 0x06 };
	struct cp_operand op;

	(void)state;
	cp_decode_operand(code, sizeof(code), &op);
	assert_int_equal(op.status, CP_OPND_OK);
	assert_int_equal(op.base, CP_REG_RSI);
	assert_int_equal(op.flags, CP_OPND_F_ADDR32);
	assert_int_equal(op.insn_len, 3);
}

/* Trailing bytes after the instruction do not change it. */
static void test_decode_ignores_what_follows(void **state)
{
	static const __u8 code[] = { 0x8b, 0x07, 0x48, 0x89, 0x46, 0x10, 0xcc };
	struct cp_operand op;

	(void)state;
	cp_decode_operand(code, sizeof(code), &op);
	assert_int_equal(op.status, CP_OPND_OK);
	assert_int_equal(op.insn_len, 2);
	assert_int_equal(op.access, CP_OPND_READ);
}

/* Every status has words for -v and the report. */
static void test_status_text(void **state)
{
	(void)state;
	for (unsigned int s = 0; s < CP_OPND_STATUS_NR; s++)
		assert_true(strlen(cp_opnd_status_str(s)) > 0);
	assert_string_equal(cp_opnd_status_str(CP_OPND_STATUS_NR), "unknown");
}

static void test_rip_target(void **state)
{
	static const __u8 code[] = { 0x48, 0x8b, 0x0d, 0x00, 0x10, 0x00, 0x00 };
	struct cp_operand op;

	(void)state;
	cp_decode_operand(code, sizeof(code), &op);
	/* at 0x401000, 7 bytes long: 0x401007 + 0x1000 */
	assert_int_equal(cp_operand_rip_target(&op, 0x401000), 0x402007);
	cp_decode_operand(cases[0].code, cases[0].len, &op);
	assert_int_equal(cp_operand_rip_target(&op, 0x401000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_operand_table),
		cmocka_unit_test(test_decode_addr32),
		cmocka_unit_test(test_decode_ignores_what_follows),
		cmocka_unit_test(test_status_text),
		cmocka_unit_test(test_rip_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
