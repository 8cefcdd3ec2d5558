/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Instruction decoding for breakpoint sampling: the bytes of one
 * x86-64 instruction in, its memory operand (cacheperf/operand.h) out, or
 * why its address cannot be computed. Pure; Zydis decodes (DESIGN.md:
 * capstone 4 gets store and read-modify-write flags wrong).
 *
 * Which operand: the one explicit memory operand. Hidden ones (push's and
 * call's stack slot) alone make CP_OPND_IMPLICIT; push/pop of a memory
 * operand describe the explicit one. The access is what Zydis says the
 * instruction does to it: `addl $1,-4(%rbp)` and `lock cmpxchg` read and
 * write; a conditional write counts as a write.
 */
#ifndef CP_DECODE_H
#define CP_DECODE_H

#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/operand.h"

#define CP_INSN_MAX_LEN 15 /* the architectural limit */

/*
 * Decodes the instruction at the start of @code (@len bytes available) into
 * @out. Always fills @out: status CP_OPND_OK with the operand, or the reason
 * it is not computable (CP_OPND_UNDECODABLE when the bytes are no valid
 * instruction, also when @len is too short for it).
 */
void cp_decode_operand(const __u8 *code, size_t len, struct cp_operand *out);

/* A short text for @status ("VSIB gather or scatter"), "unknown" if out of range. */
const char *cp_opnd_status_str(unsigned int status);

/* The address a RIP-relative @op at @ip refers to (for reports); 0 if @op is not one. */
__u64 cp_operand_rip_target(const struct cp_operand *op, __u64 ip);

#endif /* CP_DECODE_H */
