// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Memory operands of x86-64 instructions, decoded with Zydis. */
#include <string.h>
#include <Zydis/Zydis.h>

#include "decode/decode.h"
#include "decode/insn_effects.h"

static const char *const status_str[CP_OPND_STATUS_NR] = {
	[CP_OPND_OK] = "computable",
	[CP_OPND_NO_MEMORY] = "no memory operand",
	[CP_OPND_NO_ACCESS] = "memory form without an access (lea, nop)",
	[CP_OPND_IMPLICIT] = "only implicit stack accesses",
	[CP_OPND_VSIB] = "VSIB gather or scatter: one address per element",
	[CP_OPND_STRING] = "string instruction: implied and repeated addresses",
	[CP_OPND_UNSUPPORTED] = "unsupported addressing",
	[CP_OPND_UNDECODABLE] = "not a valid instruction",
	[CP_OPND_UNREADABLE] = "instruction bytes unreadable",
};

const char *cp_opnd_status_str(unsigned int status)
{
	return status < CP_OPND_STATUS_NR ? status_str[status] : "unknown";
}

__u64 cp_operand_rip_target(const struct cp_operand *op, __u64 ip)
{
	if (op->status != CP_OPND_OK || op->base != CP_REG_RIP)
		return 0;
	return ip + op->insn_len + (__u64)op->disp;
}

/* Fills @out from a plain memory operand @m of @insn; status is set by the caller. */
static void fill_operand(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *m,
			 struct cp_operand *out)
{
	int base = cp_reg_of(m->mem.base), index = cp_reg_of(m->mem.index);

	if (base < 0 || index < 0) {
		out->status = CP_OPND_UNSUPPORTED;
		return;
	}
	out->base = (__u8)base;
	out->index = (__u8)index;
	out->scale = index != CP_REG_NONE ? m->mem.scale : 0;
	out->disp = m->mem.disp.has_displacement ? m->mem.disp.value : 0;
	if (m->mem.segment == ZYDIS_REGISTER_FS)
		out->seg = CP_SEG_FS;
	else if (m->mem.segment == ZYDIS_REGISTER_GS)
		out->seg = CP_SEG_GS;
	if (m->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
		out->access |= CP_OPND_READ;
	if (m->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
		out->access |= CP_OPND_WRITE;
	out->size = m->size / 8;
	/* pop computes an rsp-based destination after it incremented rsp (Intel SDM, POP) */
	if (insn->mnemonic == ZYDIS_MNEMONIC_POP && out->base == CP_REG_RSP)
		out->disp += insn->operand_width / 8;
	if (insn->address_width == 32)
		out->flags |= CP_OPND_F_ADDR32;
	/*
	 * Zydis says multi-byte nops read their operand; they touch nothing. A
	 * software prefetch stays a read: it moves the line, and PEBS counts it.
	 */
	if (insn->meta.category == ZYDIS_CATEGORY_NOP ||
	    insn->meta.category == ZYDIS_CATEGORY_WIDENOP || !out->access)
		out->status = CP_OPND_NO_ACCESS;
	else
		out->status = CP_OPND_OK;
}

void cp_decode_operand(const __u8 *code, size_t len, struct cp_operand *out)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const ZydisDecodedOperand *mem = NULL;
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	bool hidden = false;

	memset(out, 0, sizeof(*out));
	out->status = CP_OPND_UNDECODABLE;
	if (!len ||
	    !ZYAN_SUCCESS(
		    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &insn, ops)))
		return;
	out->insn_len = insn.length;
	if (insn.meta.category == ZYDIS_CATEGORY_STRINGOP) {
		out->status = CP_OPND_STRING;
		return;
	}
	for (int i = 0; i < insn.operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		if (ops[i].visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN) {
			hidden = true;
			continue;
		}
		if (!mem)
			mem = &ops[i];
	}
	if (!mem) {
		out->status = hidden ? CP_OPND_IMPLICIT : CP_OPND_NO_MEMORY;
		return;
	}
	switch (mem->mem.type) {
	case ZYDIS_MEMOP_TYPE_MEM:
		fill_operand(&insn, mem, out);
		return;
	case ZYDIS_MEMOP_TYPE_AGEN:
		out->status = CP_OPND_NO_ACCESS;
		return;
	case ZYDIS_MEMOP_TYPE_VSIB:
		out->status = CP_OPND_VSIB;
		return;
	default:
		out->status = CP_OPND_UNSUPPORTED;
		return;
	}
}
