/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a decoded x86-64 instruction does besides its memory access, as the
 * code walkers need it (probe placement, user/live/probe_place.c; skid
 * correction, user/decode/skid.c): which general-purpose registers it writes
 * (hidden operands included: mul's rdx, cmpxchg's rax, push's rsp), whether
 * control may leave the straight line after it, and which offsets of a
 * function its relative branches reach. Pure, over Zydis's decoded form.
 */
#ifndef CP_INSN_EFFECTS_H
#define CP_INSN_EFFECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <Zydis/Zydis.h>

/* Bit of enum cp_reg (cacheperf/operand.h) in a register mask. */
#define CP_REG_BIT(reg)		(1u << (reg))

/* enum cp_reg of a general-purpose register of any width, or of rip; -1 otherwise. */
int cp_reg_of(ZydisRegister reg);

/* CP_REG_BIT()s of the general-purpose registers @insn writes, explicitly or not. */
__u32 cp_insn_regs_written(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops);

/* True when @insn may transfer control: branch, call, return, system call, trap. */
bool cp_insn_transfers(const ZydisDecodedInstruction *insn);

/* What a linear sweep over a function's code found (cp_code_branches()). */
struct cp_code_branches {
	bool indirect_jump;	/* a jmp through a register or memory: a jump table, maybe */
	size_t decoded;		/* bytes decoded before the end or an undecodable byte */
};

/*
 * Sweeps the function at @code (@len bytes from its entry) and marks in
 * @targets[0..@nr) every offset a relative jump, conditional jump or call
 * of it reaches. Linear: it stops at the first undecodable byte (data or
 * padding), which is good enough for compiled code; @out (may be NULL)
 * says how far it got and whether it met an indirect jump, whose targets no
 * sweep can know.
 */
void cp_code_branches(const ZydisDecoder *dec, const __u8 *code, size_t len, bool *targets,
		      size_t nr, struct cp_code_branches *out);

/*
 * True when the kernel emulates, as a uprobe's probed
 * instruction (user/live/probe_place.h), the instruction at @code (@len bytes
 * available); its length goes to @ilen if non-NULL.
 */
bool cp_probe_insn_emulated(const __u8 *code, size_t len, __u32 *ilen);

#endif /* CP_INSN_EFFECTS_H */
