/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether a tenant's CFI (.eh_frame with its .eh_frame_hdr search table, or
 * .debug_frame) stays within what libdw can execute in bounded memory.
 * libdw sizes a frame's register table by the largest register number a
 * CFA program names (cfi.c, enough_registers(): up to 2^28 registers of 8
 * bytes), and copies that table for each DW_CFA_remember_state still open:
 * one DW_CFA_undefined of register 50,331,648 costs 384 MiB, a million
 * remember_states a few GiB. So, before libdw ever executes a file's CFI,
 * every entry is walked the way libdw walks it (dwarf_next_cfi()), every
 * DW_CFA_* instruction decoded with its operands, and refused when
 *
 *  - a register (an operand, the CIE's return-address register, DW_OP_regx,
 *    DW_OP_bregx or DW_OP_regval_type in an expression) is above
 *    CP_CFI_MAX_REGNO;
 *  - DW_CFA_remember_state nests deeper than CP_CFI_MAX_REMEMBER;
 *  - a length, an operand or a CIE pointer leaves its entry or section, a
 *    CIE pointer or a search-table entry lands where no entry starts (libdw
 *    would parse bytes the walk never saw), or the layout is one this check
 *    does not follow (an augmentation string longer than
 *    CP_CFI_MAX_AUGMENTATION, a search table encoded otherwise than linkers
 *    write it).
 *
 * An opcode libdw does not know ends a program: libdw stops executing there.
 * Pure and iterative: bounded by the section's size, one bit of scratch per
 * byte of it (where entries start), no recursion.
 */
#ifndef CP_CFI_CHECK_H
#define CP_CFI_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * The highest DWARF register number of x86-64 (System V psABI, "DWARF
 * Register Number Mapping"): 0-16 general registers and the return address,
 * 17-32 xmm0-15, 33-48 st0-7 and mm0-7, 49-65 flags, segment, fs/gs bases
 * and control words, 67-82 xmm16-31, 118-125 k0-7, and APX's r16-r31 at
 * 130-145. With it a frame's table is 146 x 8 bytes.
 */
#define CP_CFI_MAX_REGNO 145
/* DW_CFA_remember_state open at once: compilers nest one or two. */
#define CP_CFI_MAX_REMEMBER 64
/* "zPLRSB" and such; longer strings are not followed. */
#define CP_CFI_MAX_AUGMENTATION 16

enum cp_cfi_verdict {
	CP_CFI_OK = 0,
	CP_CFI_BAD_REGISTER, /* a register number above CP_CFI_MAX_REGNO */
	CP_CFI_TOO_DEEP,     /* remember_state nested beyond CP_CFI_MAX_REMEMBER */
	CP_CFI_MALFORMED,    /* out of its entry or section, or not followed */
	CP_CFI_NOMEM,
};

/* One CFI section, as the ELF file has it. */
struct cp_cfi_section {
	const __u8 *data;
	size_t size;
	__u64 vaddr; /* sh_addr: where .eh_frame_hdr's table points */
	bool eh;     /* .eh_frame (CIE pointers relative, id 0), else .debug_frame */
};

/* .eh_frame_hdr; data NULL when the file has none. */
struct cp_cfi_hdr {
	const __u8 *data;
	size_t size;
	__u64 vaddr;
};

/*
 * The verdict on @sec (little-endian, 64-bit ELF) and, for .eh_frame, the
 * search table of @hdr (NULL: none) that libdw would take FDE offsets from.
 * Pure.
 */
enum cp_cfi_verdict cp_cfi_check(const struct cp_cfi_section *sec, const struct cp_cfi_hdr *hdr);

/* "register number out of range", ...: for logs and tests. */
const char *cp_cfi_verdict_name(enum cp_cfi_verdict v);

#endif /* CP_CFI_CHECK_H */
