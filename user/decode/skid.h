/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Skid correction for the no-PMU source (--source soft). A timer interrupt
 * is taken between instructions: when a load stalls, the tick is taken once
 * it completes, on the instruction Y after it, which usually has no memory
 * operand. The access that cost the time is the instruction P that ran just
 * before Y. P's address is still computable, exactly, from the registers of
 * the tick, when:
 *
 *   - P is Y's predecessor in the code: found by decoding the function
 *     holding Y from its entry (x86 cannot be decoded backwards), P ending
 *     exactly where Y starts;
 *   - P ran just before Y: P transfers no control (after a call, Y runs when
 *     the callee returns), no relative branch of the function reaches Y, and
 *     the function has no indirect jump (a jump table could reach Y);
 *   - P does not write a register of its own address (`mov (%rax),%rax`,
 *     `pop`'s rsp): Y has not run, so every other register is as P read it,
 *     and a RIP-relative operand counts from Y, the end of P. Except a load
 *     that overwrote its base, which the instruction just before it loaded
 *     from a slot (`mov -8(%rbp),%rax; mov (%rax),%rax`): the operand then
 *     says where that slot is (CP_OPND_F_BASE_LOADED), and on_tick reads
 *     the base there; exact when nothing else wrote the slot meanwhile (a
 *     stack slot is the thread's own, a global pointer may be swapped).
 *     Or, in a loop, a chase (`mov (%rdx),%rdx`; `i = next[i]`, `mov
 *     (%rdx,%rax,1),%eax`): the registers at the tick are what P's next run
 *     starts from when the way from Y back to P leaves the base alone and
 *     at most extends and shifts the index (CP_OPND_F_NEXT_RUN). The
 *     address is then P's next access, not the one that stalled: the same
 *     instruction's, on the lines its walk goes through.
 *
 * Then the tick on Y is charged to P: the address P accessed, and P's ip,
 * whether Y accesses memory itself or not: a tick on Y says P was the last
 * to retire, and an access of Y's that stalls has its ticks on the
 * instruction after Y (a chase loop's ticks sit on its `mov stop(%rip)`
 * after the stalled load); but for a store Y after a store, which waits at
 * itself when the store buffer is full, and a frame access after another
 * (cp_skid_charge()). Otherwise Y keeps its own access, or stays a
 * time-only marker. What the walk cannot see: jumps into
 * the function from other code (the cold part of a split function jumping
 * back, an exception landing pad); compilers place those after a jump or
 * call, which makes no P. A jump from outside into P itself (after a
 * reloaded base's Q) is not seen either: the slot may then hold another
 * pointer. Pure: the function's bytes in, a verdict out.
 */
#ifndef CP_SKID_H
#define CP_SKID_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/operand.h"
#include "decode/insn_effects.h"

/* Instructions on the way from Y back to a chase load P (CP_OPND_F_NEXT_RUN). */
#define CP_SKID_NEXT_SCAN 16

/* Functions longer than this are not walked: their ticks stay time-only (bounded work). */
#define CP_SKID_MAX_FUNC_BYTES (256u << 10)

/* Why a tick on Y is or is not charged to the access before it. */
enum cp_skid_verdict {
	CP_SKID_CHARGE = 0,	/* charge P: cp_skid.op, cp_skid.prev_off */
	CP_SKID_AT_ENTRY,	/* Y is the function's entry: no instruction before it */
	CP_SKID_NOT_BOUNDARY,	/* the walk from the entry does not reach Y (data, bad bounds) */
	CP_SKID_PREV_NO_ACCESS, /* P has no computable memory access */
	CP_SKID_PREV_TRANSFER,	/* P branches, calls or returns: Y does not follow it */
	CP_SKID_ADDR_WRITTEN,	/* P writes a register its address is built from */
	CP_SKID_BRANCH_TARGET,	/* a branch of the function reaches Y */
	CP_SKID_INDIRECT_JUMP,	/* the function jumps through a register or memory */
	CP_SKID_OWN_STORE, /* Y stores after a store: one finding the store buffer full waits at Y */
	CP_SKID_FRAME_PAIR, /* P and Y both access the function's stack frame: both hit */
	CP_SKID_VERDICT_NR,
};

/* The access a tick is charged to. */
struct cp_skid {
	struct cp_operand op; /* P's memory operand (status CP_OPND_OK) */
	__u32 prev_off;	      /* P's offset from the function's entry */
};

/*
 * True when ticks on an instruction without a computable access of its
 * own, whose operand has status @status, may be skid from the one before:
 * it accesses no memory (no memory operand, lea or nop, or only the stack
 * implicitly). An instruction that accesses memory in a way not computable
 * (string, gather) may be the stalling one itself: no correction. One
 * with a computable access: cp_skid_charge().
 */
bool cp_skid_applies(unsigned int status);

/*
 * Decides whether a tick on the instruction at offset @y_off of the
 * function whose code is @code (@len bytes from its entry: the whole
 * function, so branches after Y are seen) is charged to the instruction
 * before it. Fills @out for CP_SKID_CHARGE. @walk is the function's sweep
 * (cp_code_walk() of the same @code and @len), kept by the caller so the
 * instructions of one function share it; NULL: swept here.
 */
enum cp_skid_verdict cp_skid_find(const __u8 *code, size_t len, const struct cp_code_walk *walk,
				  size_t y_off, struct cp_skid *out);

/*
 * cp_skid_find(), for a ticked instruction Y whose own operand is @y (any
 * status: the caller passes those cp_skid_applies() takes, and accesses),
 * but for two accesses of Y's that keep their ticks: a store (write only)
 * that is no access of its function's stack frame, after a P that writes
 * (a store, a read-modify-write), as a store that finds the store buffer
 * full waits at Y itself (CP_SKID_OWN_STORE); and a frame access after
 * another (CP_SKID_FRAME_PAIR), both hits. A store after a load (a copy
 * loop: the load's miss holds the store), a frame access after any other
 * access, a load or a read-modify-write gives its ticks to P as an
 * instruction without an access does. Pure.
 */
enum cp_skid_verdict cp_skid_charge(const __u8 *code, size_t len, const struct cp_code_walk *walk,
				    size_t y_off, const struct cp_operand *y, struct cp_skid *out);

/*
 * True when @op, the operand of an instruction of the function whose code
 * is @code (@len bytes from its entry), accesses the function's own stack
 * frame: rsp-based, or rbp-based where the function keeps a frame pointer
 * (its code starts with `push %rbp; mov %rsp,%rbp`, an endbr64 before), no
 * index, no segment. Such an access hits in L1 all but always: the ticks on
 * it after a stalled access are the stall's (unoptimised code's `addl
 * $1,-4(%rbp)` after a store to a shared line), and cp_skid_charge()
 * charges them to the access before it when that one is no stack access.
 */
bool cp_skid_stack_access(const __u8 *code, size_t len, const struct cp_operand *op);

/*
 * True when the load at offset @p_off of @code (@len bytes), whose decoded
 * operand is @op (a read, status CP_OPND_OK), is the read half of a
 * read-modify-write: the straight-line code after it, within
 * CP_SKID_RMW_SCAN instructions, stores to the same place (the same
 * operand, or the same RIP-relative target) before anything transfers
 * control or writes a register of the address; for a load that overwrote
 * its base (CP_OPND_F_BASE_LOADED), a store once the base is reloaded from
 * the same slot, with no write before the reload that may touch the slot
 * (any through another register, or one it cannot place) and its register
 * unchanged. `x++` on a volatile or
 * without optimisation compiles to load, add, store; a tick lands on the
 * load or just after it far more often than on the store, and the line is
 * written at every one of those ticks. The load is then counted as a write
 * too (CP_OPND_RMW), as `addq $1,(%rdi)` would be.
 */
#define CP_SKID_RMW_SCAN 8
/* the bytes that hold the load and the instructions scanned (15 at most each) */
#define CP_SKID_RMW_BYTES ((CP_SKID_RMW_SCAN + 1) * 15)
bool cp_skid_stored_back(const __u8 *code, size_t len, size_t p_off, const struct cp_operand *op);

/* A short text for @v ("base register written by the access"), "unknown" if out of range. */
const char *cp_skid_verdict_str(unsigned int v);

#endif /* CP_SKID_H */
