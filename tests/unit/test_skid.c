// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Skid correction (user/decode/skid.c): which instruction a tick on an instruction
 * without a memory operand is charged to, from the code of its function.
 * Each case is a small function, assembled by hand (bytes from `as` and
 * `objdump -d`), and the offset of the ticked instruction Y.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

#include "decode/decode.h"
#include "decode/insn_effects.h"
#include "decode/skid.h"

#define MAX_CODE	32

struct skid_case {
	const char *what;
	__u8 code[MAX_CODE];
	size_t len;
	size_t y_off;
	enum cp_skid_verdict verdict;
	__u32 prev_off;		/* CP_SKID_CHARGE: where P is */
	__u8 base, index, access;
	/* P overwrote its base: the slot Q loaded it from (CP_OPND_F_BASE_LOADED); 0: none */
	__u8 base_from;
	__s32 base_disp;
	/* a chase: CP_OPND_F_NEXT_RUN and what the way back does to the index; 0: none */
	__u8 next_flags, index_shl;
};

static const struct skid_case cases[] = {
	/* tests/workloads/conflict's loop: the load at the loop's top, ticks on the add */
	{ "add after mov (%rcx),%rdi in a loop -> the load",
	  { 0x31, 0xf6,				/* 0: xor %esi,%esi */
	    0x48, 0x8b, 0x39,			/* 2: mov (%rcx),%rdi (loop top) */
	    0x48, 0x01, 0xfe,			/* 5: add %rdi,%rsi  <- Y */
	    0x48, 0x01, 0xd9,			/* 8: add %rbx,%rcx */
	    0xff, 0xca,				/* b: dec %edx */
	    0x75, 0xf3,				/* d: jne 2 */
	    0xc3 }, 16, 5, CP_SKID_CHARGE, 2, CP_REG_RCX, CP_REG_NONE, CP_OPND_READ, 0, 0, 0, 0 },
	{ "the instruction after a register add -> no access before it",
	  { 0x31, 0xf6, 0x48, 0x8b, 0x39, 0x48, 0x01, 0xfe, 0x48, 0x01, 0xd9, 0xff, 0xca,
	    0x75, 0xf3, 0xc3 }, 16, 8, CP_SKID_PREV_NO_ACCESS, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "the loop's own jne reaches Y: the load may not have run just before",
	  { 0x48, 0x8b, 0x07,			/* 0: mov (%rdi),%rax */
	    0x48, 0x83, 0xc0, 0x01,		/* 3: add $1,%rax  <- Y, loop top */
	    0xff, 0xca,				/* 7: dec %edx */
	    0x75, 0xf8,				/* 9: jne 3 */
	    0xc3 }, 12, 3, CP_SKID_BRANCH_TARGET, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "mov (%rax),%rax: the base is gone",
	  { 0x90, 0x48, 0x8b, 0x00, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 9, 4,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "mov (%rdi,%rcx,8),%rcx: the index is gone",
	  { 0x90, 0x48, 0x8b, 0x0c, 0xcf, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 10, 5,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "lock cmpxchg %rcx,(%rax) writes rax (hidden operand)",
	  { 0x90, 0xf0, 0x48, 0x0f, 0xb1, 0x08, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 11, 6,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "push 8(%rsp): rsp-relative, and push moves rsp",
	  { 0x90, 0xff, 0x74, 0x24, 0x08, 0x89, 0xc3, 0xc3 }, 8, 5,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "pop %rbx: only the implicit stack access",
	  { 0x90, 0x5b, 0x89, 0xc3, 0xc3 }, 5, 2, CP_SKID_PREV_NO_ACCESS, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "mov 0x100(%rip),%eax -> RIP-relative, charged",
	  { 0x90, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x83, 0xc0, 0x01, 0xc3 }, 11, 7,
	  CP_SKID_CHARGE, 1, CP_REG_RIP, CP_REG_NONE, CP_OPND_READ, 0, 0, 0, 0 },
	{ "store mov %rsi,(%rdi,%rax,8), then add $1,%rax -> the store",
	  { 0x90, 0x48, 0x89, 0x34, 0xc7, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 10, 5,
	  CP_SKID_CHARGE, 1, CP_REG_RDI, CP_REG_RAX, CP_OPND_WRITE, 0, 0, 0, 0 },
	{ "call *(%rax): Y runs when the callee returns",
	  { 0x90, 0xff, 0x10, 0x89, 0xc3, 0xc3 }, 6, 3, CP_SKID_PREV_TRANSFER, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "jmp *%rax anywhere in the function: a jump table could reach Y",
	  { 0x48, 0x8b, 0x07, 0x48, 0x83, 0xc0, 0x01, 0xff, 0xe0 }, 9, 3,
	  CP_SKID_INDIRECT_JUMP, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "Y at the entry: no instruction before it",
	  { 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 5, 0, CP_SKID_AT_ENTRY, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "Y inside an instruction of the walk",
	  { 0x48, 0x8b, 0x39, 0x48, 0x01, 0xfe, 0xc3 }, 7, 1, CP_SKID_NOT_BOUNDARY, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "the add of x++ (load, add, store): the load, a read-modify-write",
	  { 0x48, 0x8b, 0x07,			/* 0: mov (%rdi),%rax */
	    0x48, 0x83, 0xc0, 0x01,		/* 3: add $1,%rax  <- Y */
	    0x48, 0x89, 0x07,			/* 7: mov %rax,(%rdi) */
	    0xc3 }, 11, 3, CP_SKID_CHARGE, 0, CP_REG_RDI, CP_REG_NONE, CP_OPND_RMW, 0, 0, 0, 0 },
	{ "Y past the function",
	  { 0x48, 0x8b, 0x39, 0xc3 }, 4, 4, CP_SKID_NOT_BOUNDARY, 0, 0, 0, 0, 0, 0, 0, 0 },
	/* #31: a load that overwrote its base, which the instruction before loaded */
	{ "-O0 pointer load: mov -8(%rbp),%rax; mov (%rax),%rax -> the load, base from the slot",
	  { 0x55,				/* 0: push %rbp */
	    0x48, 0x89, 0xe5,			/* 1: mov %rsp,%rbp */
	    0x48, 0x8b, 0x45, 0xf8,		/* 4: mov -0x8(%rbp),%rax */
	    0x48, 0x8b, 0x00,			/* 8: mov (%rax),%rax */
	    0x48, 0x8d, 0x50, 0x01,		/* b: lea 0x1(%rax),%rdx  <- Y */
	    0x5d, 0xc3 }, 17, 11, CP_SKID_CHARGE, 8, CP_REG_RAX, CP_REG_NONE, CP_OPND_READ,
	  CP_REG_RBP, -8, 0, 0 },
	{ "a global pointer: mov 0x100(%rip),%rax; mov (%rax),%rax -> the slot counts from P",
	  { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, /* 0: mov 0x100(%rip),%rax */
	    0x48, 0x8b, 0x00,			/* 7: mov (%rax),%rax */
	    0x48, 0x83, 0xc0, 0x01,		/* a: add $1,%rax  <- Y */
	    0xc3 }, 15, 10, CP_SKID_CHARGE, 7, CP_REG_RAX, CP_REG_NONE, CP_OPND_READ,
	  CP_REG_RIP, 0x100, 0, 0 },
	{ "an index survives: mov 0x10(%rsp),%rdi; mov 8(%rdi,%rcx,8),%rdi",
	  { 0x48, 0x8b, 0x7c, 0x24, 0x10, 0x48, 0x8b, 0x7c, 0xcf, 0x08, 0x48, 0x83, 0xc0, 0x01,
	    0xc3 }, 15, 10, CP_SKID_CHARGE, 5, CP_REG_RDI, CP_REG_RCX, CP_OPND_READ, CP_REG_RSP,
	  0x10, 0, 0 },
	{ "Q loads 4 bytes (mov -8(%rbp),%eax): not the whole base",
	  { 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x00, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 11, 6,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "Q is itself a chase (mov (%rax),%rax twice): its slot is gone too",
	  { 0x48, 0x8b, 0x00, 0x48, 0x8b, 0x00, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 11, 6,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "a loop reaches P: Q may not have run just before it",
	  { 0x48, 0x8b, 0x45, 0xf8,		/* 0: mov -0x8(%rbp),%rax */
	    0x48, 0x8b, 0x00,			/* 4: mov (%rax),%rax  (loop top) */
	    0x48, 0x83, 0xc0, 0x01,		/* 7: add $1,%rax  <- Y */
	    0xff, 0xca,				/* b: dec %edx */
	    0x75, 0xf5,				/* d: jne 4 */
	    0xc3 }, 16, 7, CP_SKID_BRANCH_TARGET, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "divq (%rax) after the reload: it writes rdx too",
	  { 0x48, 0x8b, 0x45, 0xf8, 0x48, 0xf7, 0x30, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 12, 7,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "Q through %fs: (mov %fs:-8(%rbp),%rax): a segment's slot is not followed",
	  { 0x64, 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x00, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 13, 8,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "Q from a register (mov %rbx,%rax): no slot",
	  { 0x48, 0x89, 0xd8, 0x48, 0x8b, 0x00, 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 11, 6,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "Q from an absolute address (movabs 0x1000,%rax): no base register",
	  { 0x48, 0xa1, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x48, 0x8b, 0x00, 0x48,
	    0x83, 0xc0, 0x01, 0xc3 }, 18, 13, CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	/* #31: a chase in a loop, the access's next run (tests/workloads/chase's loops) */
	{ "p = p->next until stop: the tick on the load of stop is the chase's next run",
	  { 0x48, 0x8b, 0x12,			/* 0: mov (%rdx),%rdx (loop top) */
	    0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,	/* 3: mov 0x100(%rip),%eax  <- Y */
	    0x85, 0xc0,				/* 9: test %eax,%eax */
	    0x74, 0xf3,				/* b: je 0 */
	    0xc3 }, 14, 3, CP_SKID_CHARGE, 0, CP_REG_RDX, CP_REG_NONE, CP_OPND_READ, 0, 0,
	  CP_OPND_F_NEXT_RUN, 0 },
	{ "i = next[i] (-O2 with 64-byte nodes): the index zero-extended, shifted by 6",
	  { 0x89, 0xc0,				/* 0: mov %eax,%eax (loop top) */
	    0x48, 0xc1, 0xe0, 0x06,		/* 2: shl $0x6,%rax */
	    0x8b, 0x04, 0x02,			/* 6: mov (%rdx,%rax,1),%eax */
	    0x8b, 0x0d, 0x00, 0x01, 0x00, 0x00,	/* 9: mov 0x100(%rip),%ecx  <- Y */
	    0x85, 0xc9,				/* f: test %ecx,%ecx */
	    0x74, 0xed,				/* 11: je 0 */
	    0xc3 }, 20, 9, CP_SKID_CHARGE, 6, CP_REG_RDX, CP_REG_RAX, CP_OPND_READ, 0, 0,
	  CP_OPND_F_NEXT_RUN | CP_OPND_F_IDX_ZEXT32, 6 },
	{ "while (p) p = p->next: test, jne back to the load",
	  { 0x48, 0x8b, 0x52, 0x08, 0x48, 0x85, 0xd2, 0x75, 0xf7, 0xc3 }, 10, 4, CP_SKID_CHARGE, 0,
	  CP_REG_RDX, CP_REG_NONE, CP_OPND_READ, 0, 0, CP_OPND_F_NEXT_RUN, 0 },
	{ "an int index sign-extended by cltq on the way back",
	  { 0x48, 0x98,				/* 0: cltq (loop top) */
	    0x8b, 0x04, 0x82,			/* 2: mov (%rdx,%rax,4),%eax */
	    0x85, 0xc0,				/* 5: test %eax,%eax  <- Y */
	    0x75, 0xf7,				/* 7: jne 0 */
	    0xc3 }, 10, 5, CP_SKID_CHARGE, 2, CP_REG_RDX, CP_REG_RAX, CP_OPND_READ, 0, 0,
	  CP_OPND_F_NEXT_RUN | CP_OPND_F_IDX_SEXT32, 0 },
	{ "the way back moves the base (add $8,%rdx): not the next run's",
	  { 0x48, 0x8b, 0x12, 0x48, 0x83, 0xc2, 0x08, 0xeb, 0xf7 }, 9, 3, CP_SKID_ADDR_WRITTEN,
	  0, 0, 0, 0, 0, 0, 0, 0 },
	{ "a forward exit before the jump back: the way back is not straight",
	  { 0x48, 0x8b, 0x12, 0x48, 0x85, 0xd2, 0x74, 0x02, 0xeb, 0xf6, 0xc3 }, 11, 3,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "the way back adds to the index (add $1,%eax): not followed",
	  { 0x83, 0xc0, 0x01, 0x8b, 0x04, 0x82, 0x90, 0xeb, 0xf7 }, 9, 6, CP_SKID_ADDR_WRITTEN,
	  0, 0, 0, 0, 0, 0, 0, 0 },
	{ "a global list's head loaded before the loop (gcc -O1): the reload is not the way in",
	  { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, /* 0: mov 0x100(%rip),%rax */
	    0x48, 0x8b, 0x00,			/* 7: mov (%rax),%rax (loop top) */
	    0x48, 0x39, 0xf8,			/* a: cmp %rdi,%rax  <- Y */
	    0x75, 0xf8,				/* d: jne 7 */
	    0xc3 }, 16, 10, CP_SKID_CHARGE, 7, CP_REG_RAX, CP_REG_NONE, CP_OPND_READ, 0, 0,
	  CP_OPND_F_NEXT_RUN, 0 },
	{ "loop back: it writes rcx, the index",
	  { 0x48, 0x8b, 0x04, 0xc8, 0x90, 0xe2, 0xf9, 0xc3 }, 8, 4, CP_SKID_ADDR_WRITTEN, 0, 0, 0,
	  0, 0, 0, 0, 0 },
	{ "xbegin back: it branches only when a transaction aborts",
	  { 0x48, 0x8b, 0x12, 0x90, 0xc7, 0xf8, 0xf6, 0xff, 0xff, 0xff, 0xc3 }, 11, 3,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "a shift before the extension (shl $3,%rax; mov %eax,%eax): not followed",
	  { 0x48, 0xc1, 0xe0, 0x03, 0x89, 0xc0, 0x8b, 0x04, 0x02, 0x90, 0xeb, 0xf4 }, 12, 9,
	  CP_SKID_ADDR_WRITTEN, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct skid_case *c = &cases[i];
		struct cp_skid sk, kept_sk;
		enum cp_skid_verdict v = cp_skid_find(c->code, c->len, NULL, c->y_off, &sk);
		struct cp_code_walk walk;

		print_message("# %s: %s\n", c->what, cp_skid_verdict_str(v));
		assert_int_equal(v, c->verdict);
		/* a sweep kept for the function (the soft source's) decides the same */
		assert_int_equal(cp_code_walk(c->code, c->len, &walk), 0);
		assert_int_equal(cp_skid_find(c->code, c->len, &walk, c->y_off, &kept_sk), v);
		cp_code_walk_free(&walk);
		if (v == CP_SKID_CHARGE)
			assert_memory_equal(&kept_sk, &sk, sizeof(sk));
		if (v != CP_SKID_CHARGE)
			continue;
		assert_int_equal(sk.prev_off, c->prev_off);
		assert_int_equal(sk.op.status, CP_OPND_OK);
		assert_int_equal(sk.op.base, c->base);
		assert_int_equal(sk.op.index, c->index);
		assert_int_equal(sk.op.access, c->access);
		/* P ends where Y starts: what a RIP-relative address counts from */
		assert_int_equal(sk.prev_off + sk.op.insn_len, c->y_off);
		assert_int_equal(!!(sk.op.flags & CP_OPND_F_BASE_LOADED), c->base_from != 0);
		assert_int_equal(sk.op.base_from, c->base_from);
		assert_int_equal(sk.op.base_disp, c->base_disp);
		assert_int_equal(sk.op.flags & (CP_OPND_F_NEXT_RUN | CP_OPND_F_IDX_ZEXT32 |
						CP_OPND_F_IDX_SEXT32),
				 c->next_flags);
		assert_int_equal(sk.op.index_shl, c->index_shl);
	}
}

/*
 * Ticks on an instruction with an access of its own (cp_skid_charge()): a
 * load or a read-modify-write gives them to the access before it; a store
 * keeps them (a full store buffer holds it there); a frame access after a
 * frame access keeps them, after any other access gives them; an
 * rbp-based access in a function that keeps no frame pointer is no frame
 * access.
 */
static void test_charge_own(void **state)
{
	static const struct {
		const char *what;
		__u8 code[16];
		size_t len, y_off;
		enum cp_skid_verdict verdict;
		__u32 prev_off;
	} cases[] = {
		{ "mov (%rdi),%rax; mov (%rsi),%rcx: the load before",
		  { 0x48, 0x8b, 0x07, 0x48, 0x8b, 0x0e, 0xc3 }, 7, 3, CP_SKID_CHARGE, 0 },
		{ "mov (%rdi),%rax; mov %rax,(%rsi): a copy, the load's miss holds the store",
		  { 0x48, 0x8b, 0x07, 0x48, 0x89, 0x06, 0xc3 }, 7, 3, CP_SKID_CHARGE, 0 },
		{ "mov %rax,(%rdi); mov %rcx,(%rsi): the second store keeps them",
		  { 0x48, 0x89, 0x07, 0x48, 0x89, 0x0e, 0xc3 }, 7, 3, CP_SKID_OWN_STORE, 0 },
		{ "addq $1,(%rdi); mov %rcx,(%rsi): after a read-modify-write too",
		  { 0x48, 0x83, 0x07, 0x01, 0x48, 0x89, 0x0e, 0xc3 }, 8, 4, CP_SKID_OWN_STORE, 0 },
		{ "mov (%rdi),%rax; addq $1,(%rsi): the load before",
		  { 0x48, 0x8b, 0x07, 0x48, 0x83, 0x06, 0x01, 0xc3 }, 8, 3, CP_SKID_CHARGE, 0 },
		{ "mov -8(%rbp),%rax; addl $1,-4(%rbp) in a framed function: both hit",
		  { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x45, 0xf8, 0x83, 0x45, 0xfc, 0x01, 0x5d,
		    0xc3 }, 14, 8, CP_SKID_FRAME_PAIR, 0 },
		{ "mov %rax,(%rdi); mov %eax,-4(%rbp) in a framed function: the shared store",
		  { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0x07, 0x89, 0x45, 0xfc, 0x5d, 0xc3 }, 12, 7,
		  CP_SKID_CHARGE, 4 },
		{ "mov (%rdi),%rax; mov -8(%rbp),%rcx without a frame pointer: the load before",
		  { 0x48, 0x8b, 0x07, 0x48, 0x8b, 0x4d, 0xf8, 0xc3 }, 8, 3, CP_SKID_CHARGE, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_operand y;
		struct cp_skid sk;
		enum cp_skid_verdict v;

		cp_decode_operand(cases[i].code + cases[i].y_off, cases[i].len - cases[i].y_off, &y);
		assert_int_equal(y.status, CP_OPND_OK);
		v = cp_skid_charge(cases[i].code, cases[i].len, NULL, cases[i].y_off, &y, &sk);
		print_message("# %s: %s\n", cases[i].what, cp_skid_verdict_str(v));
		assert_int_equal(v, cases[i].verdict);
		if (v == CP_SKID_CHARGE)
			assert_int_equal(sk.prev_off, cases[i].prev_off);
	}
}

/*
 * The address on_tick computes for a chase's next run, from the registers
 * of the tick on Y (the load's result already in its register): for i =
 * next[i], the index's low 32 bits shifted as the loop does before the
 * load (garbage in the upper half is what `mov %eax,%eax` clears); for
 * cltq, a negative int index goes below the base.
 */
static void test_next_run_ea(void **state)
{
	static const __u8 index[] = { 0x89, 0xc0, 0x48, 0xc1, 0xe0, 0x06, 0x8b, 0x04, 0x02, 0x8b,
				      0x0d, 0x00, 0x01, 0x00, 0x00, 0x85, 0xc9, 0x74, 0xed, 0xc3 },
			  sext[] = { 0x48, 0x98, 0x8b, 0x04, 0x82, 0x85, 0xc0, 0x75, 0xf7, 0xc3 },
			  chase[] = { 0x48, 0x8b, 0x12, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x85,
				      0xc0, 0x74, 0xf3, 0xc3 };
	struct cp_regs regs = { .dx = 0x10000, .ax = 0xffffffff00000005ull };
	struct cp_skid sk;
	__u64 ea = 0;

	(void)state;
	assert_int_equal(cp_skid_find(index, sizeof(index), NULL, 9, &sk), CP_SKID_CHARGE);
	assert_int_equal(cp_operand_ea(&sk.op, &regs, 0, &ea), 0);
	assert_int_equal(ea, 0x10000 + (5 << 6));

	regs.ax = 0xfffffffe; /* eax = -2 */
	assert_int_equal(cp_skid_find(sext, sizeof(sext), NULL, 5, &sk), CP_SKID_CHARGE);
	assert_int_equal(cp_operand_ea(&sk.op, &regs, 0, &ea), 0);
	assert_int_equal(ea, 0x10000 - 8);

	/* p = p->next: rdx at the tick is the next node, the address itself */
	regs.dx = 0x7f0000123440ull;
	assert_int_equal(cp_skid_find(chase, sizeof(chase), NULL, 3, &sk), CP_SKID_CHARGE);
	assert_int_equal(cp_operand_ea(&sk.op, &regs, 0, &ea), 0);
	assert_int_equal(ea, 0x7f0000123440ull);
}

/*
 * The address on_tick computes for a load that overwrote its base: the
 * registers of the tick on Y (rax already the loaded value) with ip set
 * to P's; the base is the 8 bytes at the slot (rbp - 8, P + 0x100 for the
 * RIP-relative global pointer, rsp + 16), then P's displacement and index.
 */
static void test_base_loaded_ea(void **state)
{
	static const __u8 fp[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b,
				   0x00, 0x48, 0x8d, 0x50, 0x01, 0x5d, 0xc3 },
			  rip[] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x48, 0x8b, 0x00,
				    0x48, 0x83, 0xc0, 0x01, 0xc3 },
			  idx[] = { 0x48, 0x8b, 0x7c, 0x24, 0x10, 0x48, 0x8b, 0x7c, 0xcf, 0x08,
				    0x48, 0x83, 0xc0, 0x01, 0xc3 };
	const __u64 entry = 0x401000;
	struct cp_regs regs = { .bp = 0x7ffd1000, .ax = 0xdead };
	struct cp_skid sk;
	__u64 ea;

	(void)state;
	assert_int_equal(cp_skid_find(fp, sizeof(fp), NULL, 11, &sk), CP_SKID_CHARGE);
	regs.ip = entry + sk.prev_off;
	/* rax holds what P loaded, not its base: the plain address is refused */
	assert_int_equal(cp_operand_ea(&sk.op, &regs, 0, &ea), -1);
	assert_int_equal(cp_operand_base_slot(&sk.op, &regs), 0x7ffd1000 - 8);
	assert_int_equal(cp_operand_ea_from(&sk.op, &regs, 0x5000, 0, &ea), 0);
	assert_int_equal(ea, 0x5000);

	assert_int_equal(cp_skid_find(rip, sizeof(rip), NULL, 10, &sk), CP_SKID_CHARGE);
	regs.ip = entry + sk.prev_off;
	/* objdump: 0x100(%rip) from the end of Q, which is where P starts */
	assert_int_equal(cp_operand_base_slot(&sk.op, &regs), entry + 7 + 0x100);

	/* mov 0x10(%rsp),%rdi; mov 8(%rdi,%rcx,8),%rdi: slot rsp + 16, then 8 + rcx * 8 */
	assert_int_equal(cp_skid_find(idx, sizeof(idx), NULL, 10, &sk), CP_SKID_CHARGE);
	regs = (struct cp_regs){ .ip = entry + sk.prev_off, .sp = 0x7ffd2000, .cx = 3,
				 .di = 0xdead };
	assert_int_equal(cp_operand_base_slot(&sk.op, &regs), 0x7ffd2000 + 0x10);
	assert_int_equal(cp_operand_ea_from(&sk.op, &regs, 0x9000, 0, &ea), 0);
	assert_int_equal(ea, 0x9000 + 8 + 3 * 8);
}

/*
 * cp_skid_stack_access(): accesses of the function's own frame, whose
 * ticks a stalled access before them may take. Unoptimised code's loop
 * counter after a store to a shared line: `mov %rax,(%rdx); addq
 * $1,-8(%rbp)` in a function that keeps a frame pointer (endbr64 first or
 * not); rbp-based in a function that uses rbp for data is no frame access,
 * an rsp-based one always is, an indexed one never.
 */
static void test_stack_access(void **state)
{
	static const __u8 framed[] = {
		0xf3, 0x0f, 0x1e, 0xfa,			/* 0: endbr64 */
		0x55,					/* 4: push %rbp */
		0x48, 0x89, 0xe5,			/* 5: mov %rsp,%rbp */
		0x48, 0x89, 0x02,			/* 8: mov %rax,(%rdx) */
		0x48, 0x83, 0x45, 0xf8, 0x01,		/* b: addq $1,-0x8(%rbp)  <- Y */
		0x5d, 0xc3,
	};
	/* the same without the prologue: rbp is any register there */
	const __u8 *bare = framed + 8;
	const size_t bare_len = sizeof(framed) - 8;
	static const __u8 rsp_load[] = { 0x48, 0x8b, 0x44, 0x24, 0x08 }, /* mov 8(%rsp),%rax */
			  indexed[] = { 0x48, 0x8b, 0x44, 0xcd, 0x08 },	/* mov 8(%rbp,%rcx,8),%rax */
			  no_mov[] = { 0x55, 0x48, 0x83, 0xec, 0x10, 0xc3 },
			  fs_load[] = { 0x64, 0x48, 0x8b, 0x45, 0xf8 };
	struct cp_operand y, op;
	struct cp_skid sk;

	(void)state;
	cp_decode_operand(framed + 11, sizeof(framed) - 11, &y);
	assert_int_equal(y.base, CP_REG_RBP);
	assert_true(cp_skid_stack_access(framed, sizeof(framed), &y));
	assert_true(cp_skid_stack_access(framed + 4, sizeof(framed) - 4, &y));
	assert_false(cp_skid_stack_access(bare, bare_len, &y));
	cp_decode_operand(rsp_load, sizeof(rsp_load), &op);
	assert_true(cp_skid_stack_access(bare, bare_len, &op));
	cp_decode_operand(indexed, sizeof(indexed), &op);
	assert_false(cp_skid_stack_access(framed, sizeof(framed), &op));
	/* push %rbp; sub $16,%rsp: no frame pointer set up */
	assert_false(cp_skid_stack_access(no_mov, sizeof(no_mov), &y));
	/* mov %fs:-8(%rbp),%rax: thread-local, not the frame */
	cp_decode_operand(fs_load, sizeof(fs_load), &op);
	assert_false(cp_skid_stack_access(framed, sizeof(framed), &op));
	/* a base read back from its slot is no frame access, whatever its slot */
	op = y;
	op.flags |= CP_OPND_F_BASE_LOADED;
	assert_false(cp_skid_stack_access(framed, sizeof(framed), &op));
	/* the prologue alone is enough to tell (endbr64, push, mov: 16 bytes at most) */
	assert_true(cp_skid_stack_access(framed, 16, &y));
	/* the store before the counter: charged, and no frame access itself */
	assert_int_equal(cp_skid_find(framed, sizeof(framed), NULL, 11, &sk), CP_SKID_CHARGE);
	assert_int_equal(sk.prev_off, 8);
	assert_int_equal(sk.op.access, CP_OPND_WRITE);
	assert_false(cp_skid_stack_access(framed, sizeof(framed), &sk.op));
}

/*
 * The address on_tick computes for a charged tick: the registers of the
 * tick on Y with ip set to P's (bpf/soft_tick.bpf.c) give exactly what P
 * accessed. RIP-relative: Y's address + disp.
 */
static void test_rip_relative_ea(void **state)
{
	static const __u8 code[] = { 0x90, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x83, 0xc0, 0x01,
				     0xc3 };
	const __u64 entry = 0x401000, y = entry + 7;
	struct cp_regs regs = { .ip = y };
	struct cp_skid sk;
	__u64 ea;

	(void)state;
	assert_int_equal(cp_skid_find(code, sizeof(code), NULL, 7, &sk), CP_SKID_CHARGE);
	regs.ip = entry + sk.prev_off;
	assert_int_equal(cp_operand_ea(&sk.op, &regs, 0, &ea), 0);
	assert_int_equal(ea, y + 0x100);	/* objdump: 0x100(%rip) # Y + 0x100 */
}

/* cp_skid_stored_back(): is the load at offset 0 the read half of a read-modify-write? */
struct rmw_case {
	const char *what;
	__u8 code[MAX_CODE];
	size_t len;
	bool rmw;
};

static const struct rmw_case rmw_cases[] = {
	/* tests/workloads/false_sharing's worker, as gcc -O2 makes `c->count++` */
	{ "mov (%rdi),%rax; add $1,%rax; mov %rax,(%rdi)",
	  { 0x48, 0x8b, 0x07, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x89, 0x07, 0xc3 }, 11, true },
	{ "RIP-relative: mov 0x100(%rip),%eax; add $1,%eax; mov %eax,0xf7(%rip), one target",
	  { 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,	/* 0: the target is 6 + 0x100 */
	    0x83, 0xc0, 0x01,			/* 6 */
	    0x89, 0x05, 0xf7, 0x00, 0x00, 0x00,	/* 9: 15 + 0xf7 = 0x106 */
	    0xc3 }, 16, true },
	{ "the store goes 8 bytes further: mov %rax,8(%rdi)",
	  { 0x48, 0x8b, 0x07, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x89, 0x47, 0x08, 0xc3 }, 12, false },
	{ "the base moves before the store: add $8,%rdi",
	  { 0x48, 0x8b, 0x07, 0x48, 0x83, 0xc7, 0x08, 0x48, 0x89, 0x07, 0xc3 }, 11, false },
	{ "a branch before the store: je may leave the line",
	  { 0x48, 0x8b, 0x07, 0x74, 0x03, 0x48, 0x89, 0x07, 0xc3 }, 9, false },
	{ "a narrower store: mov %eax,(%rdi) writes 4 of the 8 bytes read",
	  { 0x48, 0x8b, 0x07, 0x48, 0x83, 0xc0, 0x01, 0x89, 0x07, 0xc3 }, 10, false },
	{ "mov (%rax),%rax: the load replaces its own base",
	  { 0x48, 0x8b, 0x00, 0x48, 0x89, 0x00, 0xc3 }, 7, false },
	{ "a store at offset 0 is no load: mov %rax,(%rdi); mov %rax,(%rdi)",
	  { 0x48, 0x89, 0x07, 0x48, 0x89, 0x07, 0xc3 }, 7, false },
	{ "the store the 9th instruction after the load: past CP_SKID_RMW_SCAN (8)",
	  { 0x48, 0x8b, 0x07, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	    0x48, 0x89, 0x07, 0xc3 }, 15, false },
	{ "the store the 8th: within it",
	  { 0x48, 0x8b, 0x07, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	    0x48, 0x89, 0x07, 0xc3 }, 14, true },
};

/*
 * -O0's `c->count++`: the load overwrote its base, read from the slot
 * -8(%rbp) (CP_OPND_F_BASE_LOADED), and the code reloads it from there
 * before storing back: a read-modify-write, a global pointer's RIP-relative
 * slot too. Not when the slot is or may be written in between (through
 * another register, which may point at it), nor when the base comes back
 * from another slot, nor when the load's index moved.
 */
static void test_stored_back_reloaded(void **state)
{
	static const struct {
		const char *what;
		__u8 code[32];
		size_t len;
		__u8 access;
		size_t y;	/* the lea after the load */
	} cases[] = {
		{ "mov -8(%rbp),%rax; mov (%rax),%rax; lea 1(%rax),%rdx; mov -8(%rbp),%rax; "
		  "mov %rdx,(%rax)",
		  { 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x00, 0x48, 0x8d, 0x50, 0x01,
		    0x48, 0x8b, 0x45, 0xf8, 0x48, 0x89, 0x10, 0xc3 }, 19, CP_OPND_RMW, 7 },
		{ "a global pointer: mov 0x100(%rip),%rax ... mov 0xf2(%rip),%rax, the same slot",
		  { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x48, 0x8b, 0x00, 0x48, 0x8d, 0x50, 0x01,
		    0x48, 0x8b, 0x05, 0xf2, 0x00, 0x00, 0x00, 0x48, 0x89, 0x10, 0xc3 }, 25,
		  CP_OPND_RMW, 10 },
		{ "... with mov %rcx,-8(%rbp) before the reload: another pointer",
		  { 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x00, 0x48, 0x8d, 0x50, 0x01,
		    0x48, 0x89, 0x4d, 0xf8, 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x89, 0x10, 0xc3 }, 23,
		  CP_OPND_READ, 7 },
		{ "... reloaded from -16(%rbp): another slot",
		  { 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x00, 0x48, 0x8d, 0x50, 0x01,
		    0x48, 0x8b, 0x45, 0xf0, 0x48, 0x89, 0x10, 0xc3 }, 19, CP_OPND_READ, 7 },
		{ "... with mov -16(%rbp),%rcx; mov %rsi,(%rcx) before the reload: rcx may be &p",
		  { 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x00, 0x48, 0x8d, 0x50, 0x01,
		    0x48, 0x8b, 0x4d, 0xf0, 0x48, 0x89, 0x31,
		    0x48, 0x8b, 0x45, 0xf8, 0x48, 0x89, 0x10, 0xc3 }, 26, CP_OPND_READ, 7 },
		{ "mov (%rax,%rcx,8),%rax ... inc %rcx before the store: the index moved",
		  { 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8b, 0x04, 0xc8, 0x48, 0x8d, 0x50, 0x01,
		    0x48, 0xff, 0xc1, 0x48, 0x8b, 0x45, 0xf8, 0x48, 0x89, 0x14, 0xc8, 0xc3 }, 24,
		  CP_OPND_READ, 8 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_skid sk;

		print_message("# %s\n", cases[i].what);
		/* Y is the lea after the load */
		assert_int_equal(cp_skid_find(cases[i].code, cases[i].len, NULL, cases[i].y, &sk),
				 CP_SKID_CHARGE);
		assert_true(sk.op.flags & CP_OPND_F_BASE_LOADED);
		assert_int_equal(sk.op.access, cases[i].access);
	}
}

static void test_stored_back(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rmw_cases) / sizeof(rmw_cases[0]); i++) {
		const struct rmw_case *c = &rmw_cases[i];
		struct cp_operand op;

		print_message("# %s\n", c->what);
		cp_decode_operand(c->code, c->len, &op);
		assert_int_equal(op.status, CP_OPND_OK);
		assert_int_equal(cp_skid_stored_back(c->code, c->len, 0, &op), c->rmw);
	}
}

static void test_applies(void **state)
{
	(void)state;
	assert_true(cp_skid_applies(CP_OPND_NO_MEMORY));
	assert_true(cp_skid_applies(CP_OPND_NO_ACCESS));	/* lea, nop */
	assert_true(cp_skid_applies(CP_OPND_IMPLICIT));	/* push, call */
	assert_false(cp_skid_applies(CP_OPND_OK));		/* its own access */
	assert_false(cp_skid_applies(CP_OPND_STRING));	/* may be the stalling one */
	assert_false(cp_skid_applies(CP_OPND_VSIB));
	assert_false(cp_skid_applies(CP_OPND_UNREADABLE));
	assert_string_equal(cp_skid_verdict_str(CP_SKID_VERDICT_NR), "unknown");
}

/* dl_iterate_phdr(): the path of the C library this test runs on */
static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so")) {
		*(const char **)data = info->dlpi_name;
		return 1;
	}
	return 0;
}

/* A function of a library: its offset in .text and its size. */
struct func {
	size_t off, len;
};

/*
 * The .text of the ELF file at @path, read whole (its size to @len), and
 * its functions as .dynsym names them (to @funcs, @nr_funcs).
 */
static __u8 *read_text(const char *path, size_t *len, struct func **funcs, size_t *nr_funcs)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	GElf_Shdr text_sh = {0};
	Elf_Scn *scn = NULL;
	__u8 *text = NULL;
	size_t shstrndx;
	Elf *elf;

	assert_true(fd >= 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".text"))
			text_sh = sh;
	}
	assert_true(text_sh.sh_size > 0);
	text = malloc(text_sh.sh_size);
	assert_non_null(text);
	assert_int_equal(pread(fd, text, text_sh.sh_size, (off_t)text_sh.sh_offset),
			 (ssize_t)text_sh.sh_size);
	*len = text_sh.sh_size;
	*funcs = NULL;
	*nr_funcs = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		*funcs = calloc(sh.sh_size / sh.sh_entsize, sizeof(**funcs));
		assert_non_null(*funcs);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_size && sym.st_value >= text_sh.sh_addr &&
			    sym.st_value + sym.st_size <= text_sh.sh_addr + text_sh.sh_size)
				(*funcs)[(*nr_funcs)++] =
					(struct func){sym.st_value - text_sh.sh_addr, sym.st_size};
		}
	}
	elf_end(elf);
	close(fd);
	return text;
}

/* What the sweep of @nr bytes at @code found, and the same from full decoding. */
struct walk_counts {
	size_t decoded, insns, targets;
	bool indirect;
};

/*
 * Sweeps @nr bytes at @code both ways and asserts they agree: the sweep
 * (minimal mode, raw immediates) against Zydis's full decoding, the
 * targets computed by ZydisCalcAbsoluteAddress() from the decoded operand,
 * an indirect jump as a jmp whose operand is no immediate.
 */
static struct walk_counts walk_both(const ZydisDecoder *dec, const __u8 *code, size_t nr)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct walk_counts c = { 0 };
	ZydisDecodedInstruction insn;
	struct cp_code_walk w;
	__u8 *want;

	assert_int_equal(cp_code_walk(code, nr, &w), 0);
	want = calloc(nr, 1);
	assert_non_null(want);
	while (c.decoded < nr && ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + c.decoded,
								     nr - c.decoded, &insn, ops))) {
		ZyanU64 to;

		assert_true(c.insns < w.nr_starts);
		assert_int_equal(w.starts[c.insns++], c.decoded);
		if ((insn.meta.category == ZYDIS_CATEGORY_COND_BR ||
		     insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		     insn.meta.category == ZYDIS_CATEGORY_CALL) &&
		    (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], c.decoded, &to)) && to < nr)
			want[to] = 1;
		else if (insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR &&
			 ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
			c.indirect = true;
		c.decoded += insn.length;
	}
	assert_int_equal(w.nr_starts, c.insns);
	assert_int_equal(w.decoded, c.decoded);
	assert_int_equal(w.indirect_jump, c.indirect);
	for (size_t i = 0; i < nr; i++) {
		if (!want[i])
			continue;
		assert_true(c.targets < w.nr_targets);
		assert_int_equal(w.targets[c.targets++], i);
	}
	assert_int_equal(w.nr_targets, c.targets);
	free(want);
	cp_code_walk_free(&w);
	return c;
}

/*
 * The sweep decodes lengths and raw immediates only (Zydis's minimal mode),
 * and agrees with full decoding (walk_both()) over every function the C
 * library exports in .dynsym, and over its whole .text, swept on from each
 * undecodable byte: that holds the local and IFUNC implementations too (the
 * AVX and EVEX string functions).
 */
static void test_walk_agrees_with_full_decoding(void **state)
{
	size_t len = 0, nr_funcs = 0, insns = 0, targets = 0, indirect_funcs = 0, off = 0;
	struct walk_counts all = { 0 };
	const char *libc = NULL;
	struct func *funcs;
	ZydisDecoder dec;
	__u8 *text;

	(void)state;
	dl_iterate_phdr(find_libc, &libc);
	assert_non_null(libc);
	text = read_text(libc, &len, &funcs, &nr_funcs);
	assert_true(ZYAN_SUCCESS(
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)));
	for (size_t f = 0; f < nr_funcs; f++) {
		struct walk_counts c = walk_both(&dec, text + funcs[f].off, funcs[f].len);

		insns += c.insns;
		targets += c.targets;
		indirect_funcs += c.indirect;
	}
	print_message("# %s: %zu functions (%zu with an indirect jump), %zu instructions, %zu "
		      "branch targets\n",
		      libc, nr_funcs, indirect_funcs, insns, targets);
	/* the C library exports thousands of functions: the test saw them */
	assert_true(nr_funcs > 1000 && insns > 100000 && targets > 10000 && indirect_funcs > 0);
	while (off < len) {
		struct walk_counts c = walk_both(&dec, text + off, len - off);

		all.insns += c.insns;
		all.targets += c.targets;
		off += c.decoded + 1; /* past the undecodable byte */
	}
	print_message("# its whole .text: %zu instructions, %zu branch targets\n", all.insns,
		      all.targets);
	assert_true(all.insns > insns && all.targets > targets);
	free(funcs);
	free(text);
}

/*
 * Which jmps a sweep takes for an indirect jump (a jump table, maybe):
 * through a register or memory, never xabort (a jmp by Zydis's category,
 * with an imm8 that is no target) nor a relative jmp.
 */
static void test_walk_indirect_jumps(void **state)
{
	static const struct {
		const char *what;
		__u8 code[8];
		size_t len;
		bool indirect;
	} cases[] = {
		{"xabort $0xff; ret", {0xc6, 0xf8, 0xff, 0xc3}, 4, false},
		{"jmp .+2; ret", {0xeb, 0x00, 0xc3}, 3, false},
		{"jmp *%rax", {0xff, 0xe0}, 2, true},
		{"jmp *0x0(%rip)", {0xff, 0x25, 0x00, 0x00, 0x00, 0x00}, 6, true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_code_walk w;

		print_message("# %s\n", cases[i].what);
		assert_int_equal(cp_code_walk(cases[i].code, cases[i].len, &w), 0);
		assert_int_equal(w.decoded, cases[i].len);
		assert_int_equal(w.indirect_jump, cases[i].indirect);
		cp_code_walk_free(&w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_rip_relative_ea),
		cmocka_unit_test(test_base_loaded_ea),
		cmocka_unit_test(test_next_run_ea),
		cmocka_unit_test(test_charge_own),
		cmocka_unit_test(test_stack_access),
		cmocka_unit_test(test_stored_back),
		cmocka_unit_test(test_stored_back_reloaded),
		cmocka_unit_test(test_applies),
		cmocka_unit_test(test_walk_agrees_with_full_decoding),
		cmocka_unit_test(test_walk_indirect_jumps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
