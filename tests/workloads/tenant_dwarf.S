/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cp_dwarf_loop() and the debug info a hostile tenant writes for it
 * (tenant_dwarf.c), small on disk and costly to read; one kind per binary
 * (tests/e2e/test_tenant_files.sh, docs/security.md):
 *
 *  CP_DWARF_FUNCS  6,000 subprograms all naming one range list of 6,000
 *                  entries (140 KB): an index of the unit's ranges held
 *                  36 million of them, 2.1 GB;
 *  CP_DWARF_INL    one subprogram with 30,000 inlined children, each
 *                  naming one list of 30,000 ranges that miss the loop
 *                  (650 KB): one lookup read 900 million entries, 40 s;
 *  CP_DWARF_LINES  a line program of 4,000,000 one-byte rows (4 MB):
 *                  libdw keeps about 100 bytes a row, 400 MB.
 *
 * The loop lies 1 MB into the function (jumped over), and the unit claims
 * only the loop: no symbol's entry or middle falls in it.
 */
#include "dwarf_unit.h"

#define CP_DWARF_FUNCS_N 6000
#define CP_DWARF_INL_N 30000
#define CP_DWARF_LINES_N 4000000

	.text
	.globl	cp_dwarf_loop
	.type	cp_dwarf_loop, @function
cp_dwarf_loop: /* (buf, longs): the sum of the longs */
	jmp	.Lhot
	.fill	1000000, 1, 0x90
.Lhot:
	cp_sum_longs
.Lend:
	.size	cp_dwarf_loop, .Lend - cp_dwarf_loop
	.fill	64, 1, 0x90
.Lpad_end:

	.section .debug_abbrev, "", @progbits
.Labbrev:
#ifdef CP_DWARF_LINES
	cp_unit_abbrev stmt=1
#else
	cp_unit_abbrev
#endif
#ifdef CP_DWARF_INL
	.uleb128 2, 0x2e	/* the subprogram: DW_TAG_subprogram */
	.byte	1
	.uleb128 0x03, 0x08	/* DW_AT_name */
	.uleb128 0x11, 0x01	/* DW_AT_low_pc */
	.uleb128 0x12, 0x06	/* DW_AT_high_pc */
	.uleb128 0, 0
	cp_ranges_abbrev 3, 0x1d, 0	/* an inlined call: DW_TAG_inlined_subroutine */
#else
	cp_ranges_abbrev 2, 0x2e, 0	/* a subprogram with code */
#endif
	.uleb128 0

#ifndef CP_DWARF_LINES
	.section .debug_ranges, "", @progbits
.Lranges:
#ifdef CP_DWARF_FUNCS
	.rept	CP_DWARF_FUNCS_N
	.quad	0, .Lend - .Lhot	/* relative to the unit's low_pc: the loop */
	.endr
#else
	.rept	CP_DWARF_INL_N
	.quad	.Lend - .Lhot, .Lend - .Lhot + 1	/* past the loop: never it */
	.endr
#endif
	.quad	0, 0
#endif

	.section .debug_info, "", @progbits
.Lcu:
	cp_unit_begin .Labbrev, .Lcu_end, tenant_dwarf.S
#ifdef CP_DWARF_LINES
	.long	.Lline		/* its line program */
#endif
	.quad	.Lhot
	.long	.Lpad_end - .Lhot
#if defined(CP_DWARF_FUNCS)
	.rept	CP_DWARF_FUNCS_N
	.uleb128 2
	.long	.Lranges
	.endr
#elif defined(CP_DWARF_INL)
	.uleb128 2
	.asciz	"cp_dwarf_loop"
	.quad	.Lhot
	.long	.Lend - .Lhot
	.rept	CP_DWARF_INL_N
	.uleb128 3
	.long	.Lranges
	.endr
	.byte	0
#endif
	.byte	0
.Lcu_end:

	cp_unit_aranges .Lcu, .Lhot, .Lend-.Lhot

#ifdef CP_DWARF_LINES
	.section .debug_line, "", @progbits
.Lline:
	.long	.Lline_end - .Lline_v
.Lline_v:
	.short	4
	.long	.Lline_prog - .Lline_hdr
.Lline_hdr:
	.byte	1, 1, 1, -5, 14, 13	/* min insn, max ops, is_stmt, line base, range, opcode base */
	.byte	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
	.byte	0			/* no directories */
	.asciz	"tenant_dwarf.S"
	.byte	0, 0, 0
	.byte	0
.Lline_prog:
	.byte	0, 9, 2			/* DW_LNE_set_address */
	.quad	.Lhot
	.byte	5, 1			/* DW_LNS_advance_line 1 */
	.fill	CP_DWARF_LINES_N, 1, 1	/* DW_LNS_copy: a row each */
	.byte	2			/* DW_LNS_advance_pc */
	.uleb128 .Lend - .Lhot
	.byte	0, 1, 1			/* DW_LNE_end_sequence */
.Lline_end:
#endif

	.section .note.GNU-stack, "", @progbits
