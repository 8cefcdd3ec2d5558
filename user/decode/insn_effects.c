// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Register writes, control transfers and branch targets of decoded instructions. */
#include <string.h>

#include "cacheperf/operand.h"
#include "decode/insn_effects.h"

int cp_reg_of(ZydisRegister reg)
{
	static const ZydisRegister gprs[] = {
		ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
		ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
		ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
		ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
	};
	ZydisRegister r;

	if (reg == ZYDIS_REGISTER_NONE)
		return CP_REG_NONE;
	if (reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP)
		return CP_REG_RIP;
	r = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	for (size_t i = 0; i < sizeof(gprs) / sizeof(gprs[0]); i++)
		if (gprs[i] == r)
			return CP_REG_RAX + (int)i;
	return -1;
}

__u32 cp_insn_regs_written(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops)
{
	__u32 mask = 0;

	for (int i = 0; i < insn->operand_count; i++) {
		int r;

		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		r = cp_reg_of(ops[i].reg.value);
		if (r > CP_REG_NONE)
			mask |= CP_REG_BIT(r);
	}
	return mask;
}

bool cp_insn_transfers(const ZydisDecodedInstruction *insn)
{
	switch (insn->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSTEM:
		return true;
	default:
		return false;
	}
}

void cp_code_branches(const ZydisDecoder *dec, const __u8 *code, size_t len, bool *targets,
		      size_t nr, struct cp_code_branches *out)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	struct cp_code_branches res = { 0 };
	size_t off = 0;

	while (off < len) {
		bool branch;
		ZyanU64 target;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + off, len - off, &insn, ops)))
			break;
		branch = insn.meta.category == ZYDIS_CATEGORY_COND_BR ||
			 insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
			 insn.meta.category == ZYDIS_CATEGORY_CALL;
		if (branch && (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], off, &target)) &&
		    target < nr)
			targets[target] = true;
		else if (insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR &&
			 ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
			res.indirect_jump = true;
		off += insn.length;
	}
	res.decoded = off;
	if (out)
		*out = res;
}

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
