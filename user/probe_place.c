// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "probe_place.h"

#define CP_PLACE_PROLOGUE_BYTES	128	/* branch targets beyond this cannot matter */

bool cp_probe_insn_emulated(const __u8 *code, size_t len, __u32 *ilen)
{
	__u32 n = 0;

	if (len < 1)
		return false;
	if (code[0] >= 0x50 && code[0] <= 0x57)
		n = 1;				/* push reg */
	else if (code[0] == 0x41 && len >= 2 && code[1] >= 0x50 && code[1] <= 0x57)
		n = 2;				/* push r8..r15: only REX 41 is accepted */
	else if (code[0] == 0x90)
		n = 1;				/* nop (41 90 would be xchg r8, rax) */
	else if (code[0] == 0xeb || (code[0] >= 0x70 && code[0] <= 0x7f))
		n = 2;				/* jmp rel8, jcc rel8 */
	else if (code[0] == 0xe8 || code[0] == 0xe9)
		n = 5;				/* call rel32, jmp rel32 */
	else if (code[0] == 0x0f && len >= 2 && code[1] >= 0x80 && code[1] <= 0x8f)
		n = 6;				/* jcc rel32 */
	if (!n || n > len)
		return false;
	if (ilen)
		*ilen = n;
	return true;
}

static __u32 arg_bit(ZydisRegister reg)
{
	switch (ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg)) {
	case ZYDIS_REGISTER_RDI:
		return CP_ARG_RDI;
	case ZYDIS_REGISTER_RSI:
		return CP_ARG_RSI;
	case ZYDIS_REGISTER_RDX:
		return CP_ARG_RDX;
	case ZYDIS_REGISTER_RCX:
		return CP_ARG_RCX;
	default:
		return 0;
	}
}

struct insn_effect {
	__u32 args_written;	/* CP_ARG_* bits written */
	bool rsp_written;
	bool transfer;		/* branch, call, return, system call, trap */
};

static void effect_of(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops,
		      struct insn_effect *fx)
{
	memset(fx, 0, sizeof(*fx));
	for (int i = 0; i < insn->operand_count; i++) {
		ZydisRegister r;

		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		r = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, ops[i].reg.value);
		fx->args_written |= arg_bit(r);
		if (r == ZYDIS_REGISTER_RSP)
			fx->rsp_written = true;
	}
	switch (insn->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSTEM:
		fx->transfer = true;
		break;
	default:
		break;
	}
}

/*
 * Marks in @targets[0..CP_PLACE_PROLOGUE_BYTES) every offset a relative
 * branch of the function jumps to. A linear sweep: it stops at the first
 * undecodable byte (data or padding), which is good enough for compiled code.
 */
static void branch_targets(const ZydisDecoder *dec, const __u8 *code, size_t len,
			   bool *targets)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	size_t off = 0;

	while (off < len) {
		ZyanU64 target;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + off, len - off, &insn, ops)))
			break;
		if ((insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		    (insn.meta.category == ZYDIS_CATEGORY_COND_BR ||
		     insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		     insn.meta.category == ZYDIS_CATEGORY_CALL) &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], off, &target)) &&
		    target < CP_PLACE_PROLOGUE_BYTES)
			targets[target] = true;
		off += insn.length;
	}
}

static void at_entry(struct cp_placement *out, const __u8 *code, size_t len, const char *why)
{
	out->offset = 0;
	out->sp_adjust = 0;
	out->emulated = cp_probe_insn_emulated(code, len, NULL);
	out->why = out->emulated ? "entry instruction is emulated" : why;
}

int cp_probe_place(const __u8 *code, size_t len, __u32 args, bool need_ret,
		   struct cp_placement *out)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	bool targets[CP_PLACE_PROLOGUE_BYTES] = { false };
	ZydisDecodedInstruction insn;
	struct insn_effect fx;
	ZydisDecoder dec;
	__u32 off = 0, sp = 0;

	at_entry(out, code, len, "no emulated instruction before the arguments change");
	if (out->emulated)
		return 0;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	branch_targets(&dec, code, len, targets);
	for (int n = 0; n < CP_PLACE_MAX_INSNS && off < len; n++) {
		bool emulated;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops))) {
			if (off == 0) {
				out->why = "entry instruction cannot be decoded";
				return -EINVAL;
			}
			out->why = "undecodable instruction in the prologue";
			return 0;
		}
		emulated = cp_probe_insn_emulated(code + off, len - off, NULL);
		if (off > 0 && emulated && !(off < CP_PLACE_PROLOGUE_BYTES && targets[off]) &&
		    !(need_ret && sp)) {
			out->offset = off;
			out->sp_adjust = sp;
			out->emulated = true;
			out->why = sp ? "first emulated instruction, after pushes" :
					"first emulated instruction";
			return 0;
		}
		effect_of(&insn, ops, &fx);
		if (fx.transfer) {
			out->why = "control leaves the prologue before an emulated instruction";
			return 0;
		}
		if (fx.args_written & args) {
			out->why = "an argument register changes before an emulated instruction";
			return 0;
		}
		if (fx.rsp_written) {
			if (insn.mnemonic != ZYDIS_MNEMONIC_PUSH || need_ret ||
			    insn.operand_width != 64) {
				out->why = "the stack pointer changes before an emulated instruction";
				return 0;
			}
			sp += 8;
		}
		off += insn.length;
	}
	out->why = "no emulated instruction in the prologue";
	return 0;
}
