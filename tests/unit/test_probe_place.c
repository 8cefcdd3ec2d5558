// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe placement: real function prologues (glibc 2.36's, as objdump shows
 * them, and typical compiler output) and where the entry probe must go: on
 * the first instruction the kernel emulates, with the argument registers and
 * the return address still where the probe reads them, never on a branch
 * target; otherwise at the entry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "live/probe_place.h"

#define RDI	CP_ARG_RDI
#define RSI	CP_ARG_RSI
#define RDX	CP_ARG_RDX

struct place_case {
	const char *what;
	__u8 code[40];
	size_t len;
	__u32 args;
	bool need_ret;
	__u32 offset;
	__u32 sp_adjust;
	bool emulated;
};

static const struct place_case cases[] = {
	{ "glibc free: test %rdi,%rdi; je -> the je",
	  { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00, 0x55, 0x48, 0x8d, 0x77, 0xf0 },
	  14, RDI, false, 3, 0, true },
	{ "glibc malloc: push %r12 first -> the entry",
	  { 0x41, 0x54, 0x55, 0x53, 0x48, 0x89, 0xfb }, 7, RDI, true, 0, 0, true },
	{ "glibc posix_memalign: cmpb $0,rip-rel; push %r12 -> the push",
	  { 0x80, 0x3d, 0x01, 0x02, 0x14, 0x00, 0x00, 0x41, 0x54, 0x49, 0x89, 0xd4 },
	  12, RDI | RDX, true, 7, 0, true },
	{ "glibc memalign: cmpb; je -> the je",
	  { 0x80, 0x3d, 0x71, 0x0e, 0x14, 0x00, 0x00, 0x74, 0x07, 0xe9, 0x32, 0xf6, 0xff, 0xff,
	    0x66, 0x90, 0x48, 0x83, 0xec, 0x18 },
	  20, RSI, true, 7, 0, true },
	{ "glibc reallocarray: mul clobbers rdx before the jo -> the entry, single-stepped",
	  { 0x48, 0x89, 0xf0, 0x48, 0xf7, 0xe2, 0x48, 0x89, 0xc6, 0x70, 0x05, 0xe9, 0x00, 0x00,
	    0x00, 0x00 },
	  16, RDI | RSI | RDX, true, 0, 0, false },
	{ "same, when rdx is not read: still the mov of rsi into rsi -> the jo",
	  { 0x48, 0x89, 0xf0, 0x48, 0xf7, 0xe2, 0x70, 0x05, 0xe9, 0x00, 0x00, 0x00, 0x00 },
	  13, RDI | RSI, true, 6, 0, true },
	{ "endbr64 then push %rbp -> the push",
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5 }, 8, RDI, true, 4, 0, true },
	{ "sub $0x18,%rsp before any emulated instruction -> the entry",
	  { 0x48, 0x83, 0xec, 0x18, 0x48, 0x85, 0xff, 0x74, 0x02, 0xc3 },
	  10, RDI, false, 0, 0, false },
	{ "mov %rdi,%rbx changes no argument; test; jne -> the jne",
	  { 0x48, 0x89, 0xfb, 0x48, 0x85, 0xff, 0x75, 0x01, 0xc3 }, 9, RDI, false, 6, 0, true },
	{ "xor %edi,%edi clobbers rdi -> the entry",
	  { 0x31, 0xff, 0x74, 0x00 }, 4, RDI, false, 0, 0, false },
	{ "ret before anything emulated -> the entry",
	  { 0x48, 0x85, 0xff, 0xc3 }, 4, RDI, false, 0, 0, false },
	{ "a loop jumps back to the je: skipped; control leaves at it -> the entry",
	  { 0x48, 0x85, 0xff, 0x74, 0x03, 0x90, 0xeb, 0xfb }, 8, RDI, false, 0, 0, false },
	{ "nop after test -> the nop",
	  { 0x48, 0x85, 0xff, 0x90, 0x74, 0x00 }, 6, RDI, false, 3, 0, true },
	{ "66-prefixed nop is not emulated everywhere: the jcc after it",
	  { 0x48, 0x85, 0xff, 0x66, 0x90, 0x74, 0x00 }, 7, RDI, false, 5, 0, true },
	{ "push targeted by a branch, then push: free-like (no return probe) -> second push",
	  { 0x48, 0x85, 0xff, 0x55, 0x53, 0x75, 0xfc }, 7, RDI, false, 4, 8, true },
	{ "the same with a return probe: sp must stay -> the entry",
	  { 0x48, 0x85, 0xff, 0x55, 0x53, 0x75, 0xfc }, 7, RDI, true, 0, 0, false },
	{ "rex.W push is not the kernel's 41 50+r form -> the entry",
	  { 0x48, 0x85, 0xff, 0x48, 0x55, 0xc3 }, 6, RDI, false, 0, 0, false },
	{ "movsb writes rdi and rsi -> the entry",
	  { 0xa4, 0x74, 0x00 }, 3, RDI, false, 0, 0, false },
	{ "empty -> the entry", { 0 }, 0, RDI, false, 0, 0, false },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct place_case *c = &cases[i];
		struct cp_placement pl;

		cp_probe_place(c->code, c->len, c->args, c->need_ret, &pl);
		if (pl.offset != c->offset || pl.sp_adjust != c->sp_adjust ||
		    pl.emulated != c->emulated)
			fail_msg("%s: got +%u sp %u emulated %d (%s), want +%u sp %u emulated %d",
				 c->what, pl.offset, pl.sp_adjust, pl.emulated, pl.why, c->offset,
				 c->sp_adjust, c->emulated);
		assert_non_null(pl.why);
	}
}

struct emu_case {
	__u8 code[8];
	size_t len;
	bool emulated;
	__u32 ilen;
};

/* What arch/x86/kernel/uprobes.c emulates, byte by byte. */
static const struct emu_case emu[] = {
	{ { 0x55 }, 1, true, 1 },			/* push %rbp */
	{ { 0x41, 0x57 }, 2, true, 2 },			/* push %r15 */
	{ { 0x41 }, 1, false, 0 },			/* truncated */
	{ { 0x90 }, 1, true, 1 },			/* nop */
	{ { 0x41, 0x90 }, 2, false, 0 },		/* xchg %eax,%r8d */
	{ { 0xeb, 0x10 }, 2, true, 2 },			/* jmp rel8 */
	{ { 0xe9, 1, 2, 3, 4 }, 5, true, 5 },		/* jmp rel32 */
	{ { 0xe9, 1, 2, 3 }, 4, false, 0 },		/* truncated */
	{ { 0xe8, 1, 2, 3, 4 }, 5, true, 5 },		/* call rel32 */
	{ { 0x74, 0x05 }, 2, true, 2 },			/* je rel8 */
	{ { 0x0f, 0x84, 1, 2, 3, 4 }, 6, true, 6 },	/* je rel32 */
	{ { 0x0f, 0x1f, 0x00 }, 3, false, 0 },		/* nopl: only newer kernels */
	{ { 0x48, 0x85, 0xff }, 3, false, 0 },		/* test %rdi,%rdi */
	{ { 0xc3 }, 1, false, 0 },			/* ret */
	{ { 0x66, 0xe8, 1, 2 }, 4, false, 0 },		/* callw: rejected */
};

static void test_emulated(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(emu) / sizeof(emu[0]); i++) {
		__u32 ilen = 0;

		if (cp_probe_insn_emulated(emu[i].code, emu[i].len, &ilen) != emu[i].emulated)
			fail_msg("case %zu: emulated should be %d", i, emu[i].emulated);
		if (emu[i].emulated)
			assert_int_equal(ilen, emu[i].ilen);
	}
}

struct fwd_case {
	const char *what;
	__u8 code[16];
	size_t len;
	__u64 vaddr;
	bool forwards;
	__u64 target;
};

/* Bytes as objdump shows them in Debian 12's libraries. */
static const struct fwd_case fwd[] = {
	{ "jemalloc's operator delete(void*): jmp free@plt",
	  { 0xe9, 0xeb, 0xaf, 0xf5, 0xff }, 5, 0xae0d0, true, 0x90c0 },
	{ "jemalloc's operator new[]: jmp operator new",
	  { 0xe9, 0x1b, 0xff, 0xff, 0xff }, 5, 0xadf10, true, 0xade30 },
	{ "libstdc++'s operator delete(void*): endbr64; jmp free@plt",
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x87, 0x2f, 0xff, 0xff }, 9, 0xa78d0, true, 0x9a860 },
	{ "jmp rel8 forwards too", { 0xeb, 0x10 }, 2, 0x1000, true, 0x1012 },
	{ "a PLT stub's indirect jmp does not: its target is read at run time",
	  { 0xff, 0x25, 0xe2, 0xa7, 0x17, 0x00 }, 6, 0x9a000, false, 0 },
	{ "test %rdi,%rdi before the jmp: the function does work of its own",
	  { 0x48, 0x85, 0xff, 0xe9, 0, 0, 0, 0 }, 8, 0x1000, false, 0 },
	{ "call, not jmp: the function returns through its own code",
	  { 0xe8, 1, 2, 3, 4 }, 5, 0x1000, false, 0 },
	{ "a conditional jump is not a forward", { 0x74, 0x05 }, 2, 0x1000, false, 0 },
	{ "a truncated jmp", { 0xe9, 1, 2 }, 3, 0x1000, false, 0 },
	{ "two endbr64: the second is no jmp",
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x00 }, 10, 0x1000, false, 0 },
};

static void test_forwards(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++) {
		__u64 target = 0;
		bool got = cp_probe_forwards(fwd[i].code, fwd[i].len, fwd[i].vaddr, &target);

		if (got != fwd[i].forwards || (got && target != fwd[i].target))
			fail_msg("%s: got %d to %#llx, want %d to %#llx", fwd[i].what, got,
				 (unsigned long long)target, fwd[i].forwards,
				 (unsigned long long)fwd[i].target);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_emulated),
		cmocka_unit_test(test_forwards),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
