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
#define CP_REG_BIT(reg) (1u << (reg))

/* enum cp_reg of a general-purpose register of any width, or of rip; -1 otherwise. */
int cp_reg_of(ZydisRegister reg);

/* CP_REG_BIT()s of the general-purpose registers @insn writes, explicitly or not. */
__u32 cp_insn_regs_written(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops);

/* True when @insn may transfer control: branch, call, return, system call, trap. */
bool cp_insn_transfers(const ZydisDecodedInstruction *insn);

/*
 * What a linear sweep over a function's code found (cp_code_walk()): where
 * its instructions start and which offsets its relative branches reach.
 * Built once per function, it serves every instruction of it.
 */
struct cp_code_walk {
	size_t len;	    /* the function's bytes */
	size_t decoded;	    /* bytes decoded before the end or an undecodable byte */
	bool indirect_jump; /* a jmp through a register or memory: a jump table, maybe */
	__u32 *starts;	    /* offsets of the instructions decoded, ascending */
	size_t nr_starts;
	__u32 *targets;	   /* offsets a relative jump, conditional jump or call reaches, */
	size_t nr_targets; /* ascending, each once, all below len */
};

/*
 * Sweeps the function at @code (@len bytes from its entry, at most 4 GiB)
 * into @out. Linear: it stops at the first undecodable byte (data or
 * padding), which is good enough for compiled code; an indirect jump's
 * targets no sweep can know. Returns 0, or -ENOMEM with @out empty.
 */
int cp_code_walk(const __u8 *code, size_t len, struct cp_code_walk *out);
void cp_code_walk_free(struct cp_code_walk *w);

/* True when a branch of the function reaches offset @off. */
bool cp_code_walk_target(const struct cp_code_walk *w, size_t off);

/*
 * The offset of the instruction that ends at @off (the one before the
 * instruction there); -1 when none does.
 */
long cp_code_walk_prev(const struct cp_code_walk *w, size_t off);

/*
 * True when the kernel emulates, as a uprobe's probed
 * instruction (user/live/probe_place.h), the instruction at @code (@len bytes
 * available); its length goes to @ilen if non-NULL.
 */
bool cp_probe_insn_emulated(const __u8 *code, size_t len, __u32 *ilen);

#endif /* CP_INSN_EFFECTS_H */
