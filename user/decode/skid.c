// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Skid correction: the access before a ticked instruction, found by walking its function. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "decode/decode.h"
#include "decode/insn_effects.h"
#include "decode/skid.h"

static const char *const verdict_str[CP_SKID_VERDICT_NR] = {
	[CP_SKID_CHARGE] = "charged to the access before it",
	[CP_SKID_AT_ENTRY] = "function entry",
	[CP_SKID_NOT_BOUNDARY] = "not on an instruction boundary of the walk",
	[CP_SKID_PREV_NO_ACCESS] = "previous instruction accesses no computable address",
	[CP_SKID_PREV_TRANSFER] = "previous instruction transfers control",
	[CP_SKID_ADDR_WRITTEN] = "previous instruction writes its own address register",
	[CP_SKID_BRANCH_TARGET] = "branch target",
	[CP_SKID_INDIRECT_JUMP] = "function has an indirect jump",
	[CP_SKID_OWN_STORE] = "a store, which waits itself for room",
	[CP_SKID_FRAME_PAIR] = "a stack frame access after another",
};

const char *cp_skid_verdict_str(unsigned int v)
{
	return v < CP_SKID_VERDICT_NR ? verdict_str[v] : "unknown";
}

bool cp_skid_applies(unsigned int status)
{
	return status == CP_OPND_NO_MEMORY || status == CP_OPND_NO_ACCESS ||
	       status == CP_OPND_IMPLICIT;
}

/* True when registers @written (CP_REG_BIT()s) include one of @op's address. */
static bool writes_addr(__u32 written, const struct cp_operand *op)
{
	return (op->base != CP_REG_NONE && op->base != CP_REG_RIP &&
		(written & CP_REG_BIT(op->base))) ||
	       (op->index != CP_REG_NONE && (written & CP_REG_BIT(op->index)));
}

/* A verdict on P at @code (@len bytes), whose decoded operand is @op. */
static enum cp_skid_verdict judge_prev(const ZydisDecoder *dec, const __u8 *code, size_t len,
				       const struct cp_operand *op)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;

	if (op->status != CP_OPND_OK ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code, len, &insn, ops)))
		return CP_SKID_PREV_NO_ACCESS;
	if (cp_insn_transfers(&insn))
		return CP_SKID_PREV_TRANSFER;
	if (writes_addr(cp_insn_regs_written(&insn, ops), op))
		return CP_SKID_ADDR_WRITTEN;
	return CP_SKID_CHARGE;
}

/* True when @insn (@ops) is an 8-byte mov into register @reg (enum cp_reg). */
static bool mov8_into(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops, int reg)
{
	return insn->mnemonic == ZYDIS_MNEMONIC_MOV && insn->operand_count_visible == 2 &&
	       ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[0].size == 64 &&
	       cp_reg_of(ops[0].reg.value) == reg;
}

/*
 * P (at @p_off, operand @op, a load) overwrote its base register B, and
 * the instruction Q just before it loaded B from memory: `mov
 * disp(%B2),%B`, 8 bytes, no index, B2 another register than B (the
 * frame pointer of unoptimised code, rip for a global pointer). Nothing
 * between Q and the tick on Y wrote B2 or that slot (P writes only B), so
 * the slot still holds P's base: @op becomes CP_OPND_F_BASE_LOADED with
 * it, counted from P's address when Q's operand is RIP-relative (Q ends
 * where P starts). False, @op unchanged, for anything else.
 */
static bool base_reloaded(const ZydisDecoder *dec, const __u8 *code, size_t len,
			  const struct cp_code_walk *walk, size_t p_off, struct cp_operand *op)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	struct cp_operand slot;
	long q;

	if (op->status != CP_OPND_OK || op->access != CP_OPND_READ || op->base == CP_REG_NONE ||
	    op->base == CP_REG_RIP || op->base == CP_REG_RSP || op->index == op->base ||
	    op->seg != CP_SEG_NONE || op->flags)
		return false;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + p_off, len - p_off, &insn, ops)) ||
	    (cp_insn_regs_written(&insn, ops) & ~CP_REG_BIT(op->base)))
		return false;
	q = cp_code_walk_prev(walk, p_off);
	if (q < 0 ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + q, len - (size_t)q, &insn, ops)) ||
	    !mov8_into(&insn, ops, op->base))
		return false;
	cp_decode_operand(code + q, len - (size_t)q, &slot);
	if (slot.status != CP_OPND_OK || slot.access != CP_OPND_READ || slot.size != 8 ||
	    slot.base == CP_REG_NONE || slot.base == op->base || slot.index != CP_REG_NONE ||
	    slot.seg != CP_SEG_NONE || slot.flags || slot.disp < INT32_MIN || slot.disp > INT32_MAX)
		return false;
	op->flags |= CP_OPND_F_BASE_LOADED;
	op->base_from = slot.base;
	op->base_disp = (__s32)slot.disp;
	return true;
}

/*
 * How @insn (@ops), on the way back to a chase load, changes @op's index
 * register @reg: into @op's flags and index_shl, as the next run will see
 * it. Only an extension of its low 32 bits (`mov %eax,%eax`, `movslq
 * %eax,%rax`, `cltq`) before any shift left by a constant; false for
 * anything else.
 */
static bool index_step(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops, int reg,
		       struct cp_operand *op)
{
	bool to_reg = insn->operand_count_visible >= 1 &&
		      ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		      cp_reg_of(ops[0].reg.value) == reg;
	bool from_reg = insn->operand_count_visible == 2 &&
			ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			cp_reg_of(ops[1].reg.value) == reg && ops[1].size == 32;
	__u8 ext = 0;

	if (insn->mnemonic == ZYDIS_MNEMONIC_CDQE && reg == CP_REG_RAX)
		ext = CP_OPND_F_IDX_SEXT32;
	else if (to_reg && from_reg && insn->mnemonic == ZYDIS_MNEMONIC_MOV && ops[0].size == 32)
		ext = CP_OPND_F_IDX_ZEXT32;
	else if (to_reg && from_reg && insn->mnemonic == ZYDIS_MNEMONIC_MOVSXD && ops[0].size == 64)
		ext = CP_OPND_F_IDX_SEXT32;
	if (ext) {
		/* one extension, before any shift */
		if ((op->flags & (CP_OPND_F_IDX_ZEXT32 | CP_OPND_F_IDX_SEXT32)) || op->index_shl)
			return false;
		op->flags |= ext;
		return true;
	}
	if (to_reg && insn->mnemonic == ZYDIS_MNEMONIC_SHL && ops[0].size == 64 &&
	    insn->operand_count_visible == 2 && ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
	    op->index_shl + ops[1].imm.value.u <= 31) {
		op->index_shl = (__u8)(op->index_shl + ops[1].imm.value.u);
		return true;
	}
	return false;
}

/* True for jmp and the conditional jumps on flags: not loop, jrcxz or xbegin. */
static bool plain_jump(const ZydisDecodedInstruction *insn)
{
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
	case ZYDIS_MNEMONIC_JB:
	case ZYDIS_MNEMONIC_JBE:
	case ZYDIS_MNEMONIC_JL:
	case ZYDIS_MNEMONIC_JLE:
	case ZYDIS_MNEMONIC_JNB:
	case ZYDIS_MNEMONIC_JNBE:
	case ZYDIS_MNEMONIC_JNL:
	case ZYDIS_MNEMONIC_JNLE:
	case ZYDIS_MNEMONIC_JNO:
	case ZYDIS_MNEMONIC_JNP:
	case ZYDIS_MNEMONIC_JNS:
	case ZYDIS_MNEMONIC_JNZ:
	case ZYDIS_MNEMONIC_JO:
	case ZYDIS_MNEMONIC_JP:
	case ZYDIS_MNEMONIC_JS:
	case ZYDIS_MNEMONIC_JZ:
		return true;
	default:
		return false;
	}
}

/*
 * P (at @p_off, operand @op) overwrote a register of its own address
 * (`mov (%rdx),%rdx`, `mov (%rdx,%rax,1),%eax`): the address it used is
 * gone, but in a loop the registers at the tick on Y (@y_off) are what
 * P's next run starts from. The way from Y back to P: straight on, then
 * one relative jump or taken conditional jump back to P or before it,
 * then straight on to P, CP_SKID_NEXT_SCAN instructions at most, no other
 * control transfer, the base never written, the index at most extended
 * and shifted (index_step()). A conditional jump back is taken to be
 * taken: the loop goes on. @op becomes CP_OPND_F_NEXT_RUN with what
 * the way back does to the index; false, @op unchanged, for anything else.
 */
static bool next_run(const ZydisDecoder *dec, const __u8 *code, size_t len, size_t y_off,
		     size_t p_off, struct cp_operand *op)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	struct cp_operand next = *op;
	bool back = false;
	size_t off = y_off;

	if (op->status != CP_OPND_OK || op->base == CP_REG_RIP || op->flags)
		return false;
	for (int i = 0; i < CP_SKID_NEXT_SCAN && off < len; i++) {
		ZyanU64 target;
		__u32 written;

		if (back && off == p_off) {
			next.flags |= CP_OPND_F_NEXT_RUN;
			*op = next;
			return true;
		}
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + off, len - off, &insn, ops)))
			return false;
		if (cp_insn_transfers(&insn)) {
			if (back || !plain_jump(&insn) ||
			    !(insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
			    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
			    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], off, &target)) ||
			    target > p_off)
				return false;
			back = true;
			off = (size_t)target;
			continue;
		}
		written = cp_insn_regs_written(&insn, ops);
		if (op->base != CP_REG_NONE && (written & CP_REG_BIT(op->base)))
			return false;
		if (op->index != CP_REG_NONE && (written & CP_REG_BIT(op->index)) &&
		    ((written & ~CP_REG_BIT(op->index)) ||
		     !index_step(&insn, ops, op->index, &next)))
			return false;
		off += insn.length;
	}
	return false;
}

/*
 * Where operand @o, decoded at @off, points beside its base: its
 * displacement, counted from the code's start when RIP-relative.
 */
static __s64 place_of(const struct cp_operand *o, size_t off)
{
	return o->disp + (o->base == CP_REG_RIP ? (__s64)(off + o->insn_len) : 0);
}

/* True when @b, decoded at @b_off, accesses the place @a (decoded at @a_off) does. */
static bool same_place(const struct cp_operand *a, size_t a_off, const struct cp_operand *b,
		       size_t b_off)
{
	if (a->base != b->base || a->index != b->index || a->seg != b->seg || a->size != b->size ||
	    !a->size || a->flags != b->flags || (a->index != CP_REG_NONE && a->scale != b->scale))
		return false;
	return place_of(a, a_off) == place_of(b, b_off);
}

/*
 * True unless a write of operand @o (decoded at @o_off) provably misses the
 * 8-byte @slot (counted from @s_off when RIP-relative): only one through
 * the slot's own base register, without index, segment or address-size
 * prefix, to other bytes, does; another register may point anywhere.
 */
static bool may_touch(const struct cp_operand *slot, size_t s_off, const struct cp_operand *o,
		      size_t o_off)
{
	__s64 a, b;

	if (o->base != slot->base || o->index != CP_REG_NONE || o->seg != CP_SEG_NONE || o->flags ||
	    !o->size)
		return true;
	a = place_of(slot, s_off);
	b = place_of(o, o_off);
	return b < a + 8 && a < b + o->size;
}

bool cp_skid_stored_back(const __u8 *code, size_t len, size_t p_off, const struct cp_operand *op)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	size_t off = p_off;
	/*
	 * a load that overwrote its base (CP_OPND_F_BASE_LOADED): the base is
	 * back once reloaded from the same slot (`-O0`'s `x++`: mov
	 * -8(%rbp),%rax; mov (%rax),%rax; lea 1(%rax),%rdx; mov -8(%rbp),%rax;
	 * mov %rdx,(%rax)), as long as neither the slot nor its register changed
	 */
	bool loaded = op->flags & CP_OPND_F_BASE_LOADED, base_ok = !loaded;
	struct cp_operand at = *op, slot = {
					    .status = CP_OPND_OK,
					    .base = op->base_from,
					    .disp = op->base_disp,
					    .size = 8,
					    .access = CP_OPND_READ,
				    };

	at.flags &= (__u8)~CP_OPND_F_BASE_LOADED;
	if (op->status != CP_OPND_OK || op->access != CP_OPND_READ ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return false;
	/* P itself first: it may write its own base (mov (%rax),%rax) */
	for (int i = 0; i <= CP_SKID_RMW_SCAN && off < len; i++) {
		struct cp_operand o;
		__u32 written;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops)))
			return false;
		cp_decode_operand(code + off, len - off, &o);
		if (i && o.status == CP_OPND_OK && (o.access & CP_OPND_WRITE)) {
			if (base_ok && same_place(&at, p_off, &o, off))
				return true;
			if (!base_ok && may_touch(&slot, p_off, &o, off))
				return false;
		}
		/* before the reload: a memory write it cannot place (string, push, scatter) */
		if (i && !base_ok && o.status != CP_OPND_OK && o.status != CP_OPND_NO_MEMORY &&
		    o.status != CP_OPND_NO_ACCESS)
			return false;
		if (cp_insn_transfers(&insn))
			return false;
		written = cp_insn_regs_written(&insn, ops);
		if (!loaded) {
			if (writes_addr(written, op))
				return false;
		} else {
			if ((slot.base != CP_REG_RIP && (written & CP_REG_BIT(slot.base))) ||
			    (op->index != CP_REG_NONE && (written & CP_REG_BIT(op->index))))
				return false;
			if (written & CP_REG_BIT(op->base))
				base_ok = mov8_into(&insn, ops, op->base) &&
					  o.status == CP_OPND_OK && o.access == CP_OPND_READ &&
					  same_place(&slot, p_off, &o, off);
		}
		off += insn.length;
	}
	return false;
}

/* The instruction at @off of @code into @insn, @ops; false past @len or on bad bytes. */
static bool decode_at(const ZydisDecoder *dec, const __u8 *code, size_t len, size_t off,
		      ZydisDecodedInstruction *insn, ZydisDecodedOperand *ops)
{
	return off < len &&
	       ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + off, len - off, insn, ops));
}

/* True when @code starts with [endbr64;] push %rbp; mov %rsp,%rbp. */
static bool keeps_frame_pointer(const ZydisDecoder *dec, const __u8 *code, size_t len)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	size_t off = 0;

	if (!decode_at(dec, code, len, off, &insn, ops))
		return false;
	if (insn.mnemonic == ZYDIS_MNEMONIC_ENDBR64) {
		off += insn.length;
		if (!decode_at(dec, code, len, off, &insn, ops))
			return false;
	}
	if (insn.mnemonic != ZYDIS_MNEMONIC_PUSH || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ops[0].reg.value != ZYDIS_REGISTER_RBP)
		return false;
	off += insn.length;
	return decode_at(dec, code, len, off, &insn, ops) && insn.mnemonic == ZYDIS_MNEMONIC_MOV &&
	       ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       ops[0].reg.value == ZYDIS_REGISTER_RBP &&
	       ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[1].reg.value == ZYDIS_REGISTER_RSP;
}

bool cp_skid_stack_access(const __u8 *code, size_t len, const struct cp_operand *op)
{
	ZydisDecoder dec;

	if (op->status != CP_OPND_OK || op->index != CP_REG_NONE || op->seg != CP_SEG_NONE ||
	    (op->flags & CP_OPND_F_BASE_LOADED))
		return false;
	if (op->base == CP_REG_RSP)
		return true;
	return op->base == CP_REG_RBP &&
	       ZYAN_SUCCESS(
		       ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) &&
	       keeps_frame_pointer(&dec, code, len);
}

enum cp_skid_verdict cp_skid_charge(const __u8 *code, size_t len, const struct cp_code_walk *walk,
				    size_t y_off, const struct cp_operand *y, struct cp_skid *out)
{
	enum cp_skid_verdict v = cp_skid_find(code, len, walk, y_off, out);
	bool own = y->status == CP_OPND_OK, frame;

	if (v != CP_SKID_CHARGE)
		return v;
	frame = own && cp_skid_stack_access(code, len, y);
	/* a load's stall holds the store after it; a store's draining, not */
	if (own && !frame && y->access == CP_OPND_WRITE && out->op.access != CP_OPND_READ)
		return CP_SKID_OWN_STORE;
	if (frame && cp_skid_stack_access(code, len, &out->op))
		return CP_SKID_FRAME_PAIR;
	return v;
}

/* cp_skid_find() with the function's sweep at hand. */
static enum cp_skid_verdict find_walked(const ZydisDecoder *dec, const __u8 *code, size_t len,
					const struct cp_code_walk *walk, size_t y_off,
					struct cp_skid *out)
{
	enum cp_skid_verdict v;
	struct cp_operand as_read;
	bool reloaded;
	long p = cp_code_walk_prev(walk, y_off);

	if (p < 0)
		return CP_SKID_NOT_BOUNDARY;
	memset(out, 0, sizeof(*out));
	cp_decode_operand(code + p, len - (size_t)p, &out->op);
	v = judge_prev(dec, code + p, len - (size_t)p, &out->op);
	as_read = out->op;
	reloaded = v == CP_SKID_ADDR_WRITTEN &&
		   base_reloaded(dec, code, len, walk, (size_t)p, &out->op);
	if (reloaded ||
	    (v == CP_SKID_ADDR_WRITTEN && next_run(dec, code, len, y_off, (size_t)p, &out->op)))
		v = CP_SKID_CHARGE;
	if (v != CP_SKID_CHARGE)
		return v;
	if (walk->decoded < len)
		v = CP_SKID_NOT_BOUNDARY; /* branches past undecodable bytes unseen */
	else if (cp_code_walk_target(walk, y_off))
		v = CP_SKID_BRANCH_TARGET;
	else if (reloaded && cp_code_walk_target(walk, (size_t)p)) {
		/* P's base is the slot's only after Q: in a loop through P, its next run */
		out->op = as_read;
		if (!next_run(dec, code, len, y_off, (size_t)p, &out->op))
			v = CP_SKID_BRANCH_TARGET;
	}
	if (v == CP_SKID_CHARGE && walk->indirect_jump)
		v = CP_SKID_INDIRECT_JUMP;
	out->prev_off = (__u32)p;
	if (v == CP_SKID_CHARGE && cp_skid_stored_back(code, len, (size_t)p, &out->op))
		out->op.access = CP_OPND_RMW;
	return v;
}

enum cp_skid_verdict cp_skid_find(const __u8 *code, size_t len, const struct cp_code_walk *walk,
				  size_t y_off, struct cp_skid *out)
{
	struct cp_code_walk own;
	enum cp_skid_verdict v;
	ZydisDecoder dec;

	if (y_off == 0)
		return CP_SKID_AT_ENTRY;
	if (y_off >= len || len > CP_SKID_MAX_FUNC_BYTES || (walk && walk->len != len) ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return CP_SKID_NOT_BOUNDARY;
	if (walk)
		return find_walked(&dec, code, len, walk, y_off, out);
	if (cp_code_walk(code, len, &own))
		return CP_SKID_NOT_BOUNDARY;
	v = find_walked(&dec, code, len, &own, y_off, out);
	cp_code_walk_free(&own);
	return v;
}
