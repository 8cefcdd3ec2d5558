/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where to put an allocation function's entry uprobe ("probe
 * placement"). A uprobe replaces an instruction with int3; the kernel then
 * either emulates the original instruction or single-steps a copy of it out
 * of line. Single-stepping costs a second trap: ~14 µs per call in our VM
 * versus ~0.4 µs for an emulated instruction, and glibc's free begins with
 * `test %rdi,%rdi`, which is not emulated.
 *
 * arch/x86/kernel/uprobes.c emulates (branch_setup_xol_ops,
 * push_setup_xol_ops): relative jmp (eb, e9), call (e8) and jcc (7x, 0f 8x)
 * without a 0x66 prefix, `push reg` (50-57, or 41 50-57), and nop (90).
 * Later kernels emulate more nops; we only rely on what every kernel does.
 *
 * So the entry probe goes on the first such instruction of the function's
 * straight-line prologue, provided that before it the argument registers
 * the probe reads are unchanged, rsp changed only by pushes, and no branch
 * inside the function jumps to it (it would fire without a call). A return
 * probe attached at the same offset hijacks *sp as the return address, so
 * when one is needed the stack pointer must be untouched. Otherwise the probe
 * stays at the entry. Pure: bytes in, placement out (Zydis decodes).
 */
#ifndef CP_PROBE_PLACE_H
#define CP_PROBE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "decode/insn_effects.h"

/* Argument registers a probe reads (System V x86-64 order). */
#define CP_ARG_RDI (1u << 0)
#define CP_ARG_RSI (1u << 1)
#define CP_ARG_RDX (1u << 2)
#define CP_ARG_RCX (1u << 3)

#define CP_PLACE_MAX_INSNS 16 /* prologue instructions examined */

struct cp_placement {
	__u32 offset;	 /* bytes from the function's entry */
	__u32 sp_adjust; /* bytes pushed before it: the return address is at sp + this */
	bool emulated;	 /* the kernel emulates the probed instruction */
	const char *why; /* a short reason, for -v: where it went or why it fell back */
};

/*
 * Places the entry probe of a function whose code starts at @code (@len
 * bytes: the whole function if its size is known, so branches into the
 * prologue are seen; at least the prologue). @args is the CP_ARG_* the probe
 * reads; @need_ret says a return probe shares the offset. Always fills @out;
 * returns 0, or -EINVAL when @code cannot be decoded at all, -ENOMEM when
 * its sweep cannot be held (@out is then the entry, not emulated).
 */
int cp_probe_place(const __u8 *code, size_t len, __u32 args, bool need_ret,
		   struct cp_placement *out);

/*
 * Whether the function at link-time address @vaddr, whose code starts at
 * @code (@len bytes), only forwards its call: its first instruction, after
 * an endbr64, is a direct jmp, which keeps the arguments and the return
 * address. *target: where it jumps (a function, or a PLT stub).
 */
bool cp_probe_forwards(const __u8 *code, size_t len, __u64 vaddr, __u64 *target);

#endif /* CP_PROBE_PLACE_H */
