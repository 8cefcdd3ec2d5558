/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The memory operand of one x86-64 instruction, as user space decodes it
 * (user/decode/decode.h, Zydis) and BPF evaluates it: base + index * scale + disp,
 * plus the fs/gs base, from the registers *before* the instruction runs. A
 * HW_BREAKPOINT_X event delivers exactly those (the breakpoint traps before
 * the instruction executes), so the address is exact, not a guess.
 *
 * cp_operand_ea() is pure and inline: bpf/breakpoint.bpf.c, bpf/soft_tick.bpf.c (the
 * no-PMU tick source) and the unit tests all run this one function; the tick
 * source's operands whose base was overwritten (CP_OPND_F_BASE_LOADED) go
 * through cp_operand_base_slot() and cp_operand_ea_from() instead.
 */
#ifndef CACHEPERF_OPERAND_H
#define CACHEPERF_OPERAND_H

#include "cacheperf/types.h"

/* Registers an address is built from; CP_REG_NONE: no such part. */
enum cp_reg {
	CP_REG_NONE = 0,
	CP_REG_RAX,
	CP_REG_RCX,
	CP_REG_RDX,
	CP_REG_RBX,
	CP_REG_RSP,
	CP_REG_RBP,
	CP_REG_RSI,
	CP_REG_RDI,
	CP_REG_R8,
	CP_REG_R9,
	CP_REG_R10,
	CP_REG_R11,
	CP_REG_R12,
	CP_REG_R13,
	CP_REG_R14,
	CP_REG_R15,
	CP_REG_RIP, /* as a base: RIP-relative, counted from the next instruction */
	CP_REG_NR,
};

/* Segment override that adds a base: in 64-bit mode only fs and gs have one. */
enum cp_seg {
	CP_SEG_NONE = 0,
	CP_SEG_FS, /* thread-local storage (glibc) */
	CP_SEG_GS,
};

/* Why an instruction's address cannot be computed (cp_operand.status). */
enum cp_opnd_status {
	CP_OPND_OK = 0,
	CP_OPND_NO_MEMORY,   /* no memory operand at all */
	CP_OPND_NO_ACCESS,   /* a memory form that touches no memory: lea, nopw 0(%rax) */
	CP_OPND_IMPLICIT,    /* only implicit stack accesses: push, pop, call, ret */
	CP_OPND_VSIB,	     /* gathers and scatters: one address per vector element */
	CP_OPND_STRING,	     /* movs, stos, cmps...: rsi/rdi-implied, rep repeats */
	CP_OPND_UNSUPPORTED, /* MIB (MPX) operands, a base or index that is no GPR */
	CP_OPND_UNDECODABLE, /* the bytes are no valid instruction */
	CP_OPND_UNREADABLE,  /* the bytes could not be read from the target */
	CP_OPND_STATUS_NR,
};

/* cp_operand.access */
#define CP_OPND_READ  (1u << 0)
#define CP_OPND_WRITE (1u << 1) /* also conditional writes (cmpxchg, cmov) */
#define CP_OPND_RMW   (CP_OPND_READ | CP_OPND_WRITE)

/* cp_operand.flags */
#define CP_OPND_F_ADDR32 (1u << 0) /* 0x67 prefix: the address wraps at 4 GiB */
/*
 * The base register no longer holds the base (soft skid, user/decode/skid.h:
 * `mov -8(%rbp),%rax; mov (%rax),%rax`): its value is the 8 bytes at
 * @base_from + @base_disp, the slot it was loaded from just before
 * (cp_operand_base_slot()); cp_operand_ea() refuses such an operand.
 */
#define CP_OPND_F_BASE_LOADED (1u << 1)
/*
 * The registers hold what the instruction's next run will use, not what it
 * used (soft skid, user/decode/skid.h: a chase, `mov (%rdx),%rdx` or `mov
 * (%rdx,%rax,1),%eax` in a loop whose way back to it leaves its base alone
 * and at most extends and shifts its index): the index is first taken as
 * its low 32 bits, zero- or sign-extended (CP_OPND_F_IDX_ZEXT32,
 * CP_OPND_F_IDX_SEXT32), then shifted left by @index_shl, as that way back
 * does. The address is the next access's of the same instruction.
 */
#define CP_OPND_F_NEXT_RUN   (1u << 2)
#define CP_OPND_F_IDX_ZEXT32 (1u << 3)
#define CP_OPND_F_IDX_SEXT32 (1u << 4)

/* One decoded memory operand. A map value of BPF (struct cp_bp_insn): ABI. */
struct cp_operand {
	__s64 disp;    /* displacement, sign-extended */
	__u8 status;   /* enum cp_opnd_status; the rest is valid only when CP_OPND_OK */
	__u8 base;     /* enum cp_reg */
	__u8 index;    /* enum cp_reg */
	__u8 scale;    /* 1, 2, 4 or 8 when there is an index */
	__u8 seg;      /* enum cp_seg */
	__u8 access;   /* CP_OPND_READ | CP_OPND_WRITE */
	__u8 insn_len; /* bytes: RIP-relative addresses count from the next instruction */
	__u8 flags;    /* CP_OPND_F_* */
	__u16 size;    /* bytes accessed (1..64), 0 when the decoder does not say */
	/* CP_OPND_F_BASE_LOADED: the base's slot; CP_REG_RIP counts from the access's address */
	__u8 base_from; /* enum cp_reg */
	__u8 index_shl; /* CP_OPND_F_NEXT_RUN: the index's shift, 0..31 */
	__s32 base_disp;
};
_Static_assert(sizeof(struct cp_operand) == 24, "struct cp_operand is ABI");

/*
 * The x86-64 struct pt_regs, field for field: what perf hands a perf_event
 * program as ctx->regs. The kernel's and the uapi's copies name the fields
 * differently (ax / rax), so operand code reads this one; bpf/breakpoint.bpf.c
 * checks the layout against vmlinux.h.
 */
struct cp_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
_Static_assert(sizeof(struct cp_regs) == 21 * 8, "struct cp_regs is x86-64 pt_regs");

/* The value of register @reg (enum cp_reg) in @r; 0 for CP_REG_NONE and unknown ones. */
CP_INLINE __u64 cp_reg_value(const struct cp_regs *r, __u32 reg)
{
	switch (reg) {
	case CP_REG_RAX:
		return r->ax;
	case CP_REG_RCX:
		return r->cx;
	case CP_REG_RDX:
		return r->dx;
	case CP_REG_RBX:
		return r->bx;
	case CP_REG_RSP:
		return r->sp;
	case CP_REG_RBP:
		return r->bp;
	case CP_REG_RSI:
		return r->si;
	case CP_REG_RDI:
		return r->di;
	case CP_REG_R8:
		return r->r8;
	case CP_REG_R9:
		return r->r9;
	case CP_REG_R10:
		return r->r10;
	case CP_REG_R11:
		return r->r11;
	case CP_REG_R12:
		return r->r12;
	case CP_REG_R13:
		return r->r13;
	case CP_REG_R14:
		return r->r14;
	case CP_REG_R15:
		return r->r15;
	case CP_REG_RIP:
		return r->ip;
	default:
		return 0;
	}
}

/*
 * The address of operand @op when its base's value is @base (a
 * RIP-relative operand's: the next instruction's address), its index
 * taken from @r, @seg_base added for a segment. Returns 0 with *@ea set.
 */
CP_INLINE int cp_operand_ea_from(const struct cp_operand *op, const struct cp_regs *r, __u64 base,
				 __u64 seg_base, __u64 *ea)
{
	__u64 a = (__u64)op->disp + base;

	if (op->index != CP_REG_NONE) {
		__u64 i = cp_reg_value(r, op->index);

		if (op->flags & CP_OPND_F_IDX_ZEXT32)
			i = (__u32)i;
		else if (op->flags & CP_OPND_F_IDX_SEXT32)
			i = (__u64)(__s64)(__s32)i;
		a += (i << (op->index_shl & 31)) * op->scale;
	}
	/* the effective address wraps at the address size; the segment base is added after */
	if (op->flags & CP_OPND_F_ADDR32)
		a = (__u32)a;
	if (op->seg != CP_SEG_NONE)
		a += seg_base;
	*ea = a;
	return 0;
}

/*
 * The address operand @op accesses when the instruction at r->ip runs with
 * registers @r (taken before it runs). @seg_base is the fs or gs base the
 * operand names (op->seg; ignored for CP_SEG_NONE): the caller knows where
 * to find it (BPF: task->thread.fsbase). Returns 0 with *@ea set, or -1 when
 * @op is not computable (op->status; a base loaded from a slot: see
 * cp_operand_base_slot()).
 */
CP_INLINE int cp_operand_ea(const struct cp_operand *op, const struct cp_regs *r, __u64 seg_base,
			    __u64 *ea)
{
	__u64 base = 0;

	if (op->status != CP_OPND_OK || (op->flags & CP_OPND_F_BASE_LOADED))
		return -1;
	if (op->base == CP_REG_RIP)
		base = r->ip + op->insn_len;
	else if (op->base != CP_REG_NONE)
		base = cp_reg_value(r, op->base);
	return cp_operand_ea_from(op, r, base, seg_base, ea);
}

/*
 * CP_OPND_F_BASE_LOADED: where the 8 bytes that are @op's base are, with
 * registers @r (r->ip: the access's address).
 */
CP_INLINE __u64 cp_operand_base_slot(const struct cp_operand *op, const struct cp_regs *r)
{
	__u64 from = op->base_from == CP_REG_RIP ? r->ip : cp_reg_value(r, op->base_from);

	return from + (__u64)(__s64)op->base_disp;
}

#endif /* CACHEPERF_OPERAND_H */
