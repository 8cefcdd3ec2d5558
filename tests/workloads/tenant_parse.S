/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cp_deep_stream() and the debug info a hostile tenant writes for it
 * (tenant_parse.c): a DWARF 4 compile unit whose only child is a lexical
 * block holding the function's code, nested in itself 300,000 times. Each
 * block is 5 bytes (an abbreviation code and DW_AT_ranges, one list for
 * all, relative to the unit's base: no relocation per block), so the whole
 * is 1.8 MB. .debug_aranges names the unit, as compilers' do.
 */
#include "dwarf_unit.h"

#define CP_DEEP_BLOCKS 300000

	.text
	.globl	cp_deep_stream
	.type	cp_deep_stream, @function
cp_deep_stream: /* (buf, longs): the sum of one long per 64-byte line */
	cp_sum_longs
.Ldeep_end:
	.size	cp_deep_stream, .Ldeep_end - cp_deep_stream

	.section .debug_abbrev, "", @progbits
.Labbrev:
	cp_unit_abbrev
	cp_ranges_abbrev 2, 0x0b, 1	/* a block: DW_TAG_lexical_block */
	.uleb128 0

	.section .debug_ranges, "", @progbits
.Lranges: /* relative to the unit's DW_AT_low_pc */
	.quad	0, .Ldeep_end - cp_deep_stream
	.quad	0, 0

	.section .debug_info, "", @progbits
.Lcu:
	cp_unit_begin .Labbrev, .Lcu_end, tenant_parse.S
	.quad	cp_deep_stream
	.long	.Ldeep_end - cp_deep_stream
	.rept	CP_DEEP_BLOCKS
	.uleb128 2
	.long	.Lranges
	.endr
	.fill	CP_DEEP_BLOCKS + 1, 1, 0 /* each block's children end, then the unit's */
.Lcu_end:

	cp_unit_aranges .Lcu, cp_deep_stream, .Ldeep_end-cp_deep_stream

	.section .note.GNU-stack, "", @progbits
