// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "cacheperf/operand.h"
#include "decode/insn_effects.h"
#include "live/probe_place.h"

#define CP_PLACE_PROLOGUE_BYTES 128 /* branch targets beyond this cannot matter */

struct insn_effect {
	__u32 args_written; /* CP_ARG_* bits written */
	bool rsp_written;
	bool transfer; /* branch, call, return, system call, trap */
};

static void effect_of(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops,
		      struct insn_effect *fx)
{
	__u32 w = cp_insn_regs_written(insn, ops);

	fx->args_written = (w & CP_REG_BIT(CP_REG_RDI) ? CP_ARG_RDI : 0) |
			   (w & CP_REG_BIT(CP_REG_RSI) ? CP_ARG_RSI : 0) |
			   (w & CP_REG_BIT(CP_REG_RDX) ? CP_ARG_RDX : 0) |
			   (w & CP_REG_BIT(CP_REG_RCX) ? CP_ARG_RCX : 0);
	fx->rsp_written = w & CP_REG_BIT(CP_REG_RSP);
	fx->transfer = cp_insn_transfers(insn);
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
	bool targets[CP_PLACE_PROLOGUE_BYTES] = {false};
	ZydisDecodedInstruction insn;
	struct cp_code_walk walk;
	struct insn_effect fx;
	ZydisDecoder dec;
	__u32 off = 0, sp = 0;

	at_entry(out, code, len, "no emulated instruction before the arguments change");
	if (out->emulated)
		return 0;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	/* a branch into the prologue would fire the probe without a call */
	if (cp_code_walk(code, len, &walk)) {
		out->why = "out of memory for the sweep of its code";
		return -ENOMEM;
	}
	for (size_t i = 0; i < walk.nr_targets && walk.targets[i] < CP_PLACE_PROLOGUE_BYTES; i++)
		targets[walk.targets[i]] = true;
	cp_code_walk_free(&walk);
	for (int n = 0; n < CP_PLACE_MAX_INSNS && off < len; n++) {
		bool emulated;

		if (!ZYAN_SUCCESS(
			    ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops))) {
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
			out->why = sp ? "first emulated instruction, after pushes"
				      : "first emulated instruction";
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
				out->why =
					"the stack pointer changes before an emulated instruction";
				return 0;
			}
			sp += 8;
		}
		off += insn.length;
	}
	out->why = "no emulated instruction in the prologue";
	return 0;
}

bool cp_probe_forwards(const __u8 *code, size_t len, __u64 vaddr, __u64 *target)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	ZyanU64 abs;
	size_t off = 0;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return false;
	for (int n = 0; n < 2 && off < len; n++) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops)))
			return false;
		if (insn.mnemonic == ZYDIS_MNEMONIC_ENDBR64 && n == 0) {
			off += insn.length;
			continue;
		}
		if (insn.mnemonic != ZYDIS_MNEMONIC_JMP ||
		    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !ops[0].imm.is_relative ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], vaddr + off, &abs)))
			return false;
		*target = abs;
		return true;
	}
	return false;
}
