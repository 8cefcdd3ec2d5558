/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cp_deep_stream() and the debug info a hostile tenant writes for it
 * (tenant_parse.c): a DWARF 4 compile unit whose only child is a lexical
 * block holding the function's code, nested in itself 300,000 times. Each
 * block is 5 bytes (an abbreviation code and DW_AT_ranges, one list for
 * all, relative to the unit's base: no relocation per block), so the whole
 * is 1.8 MB. .debug_aranges names the unit, as compilers' do.
 */
#define CP_DEEP_BLOCKS 300000

	.text
	.globl	cp_deep_stream
	.type	cp_deep_stream, @function
cp_deep_stream: /* (buf, longs): the sum of one long per 64-byte line */
	xorl	%eax, %eax
	xorl	%ecx, %ecx
1:	addq	(%rdi,%rcx,8), %rax
	addq	$8, %rcx
	cmpq	%rsi, %rcx
	jb	1b
	ret
.Ldeep_end:
	.size	cp_deep_stream, .Ldeep_end - cp_deep_stream

	.section .debug_abbrev, "", @progbits
.Labbrev:
	.uleb128 1		/* the unit */
	.uleb128 0x11		/* DW_TAG_compile_unit */
	.byte	1		/* children */
	.uleb128 0x03, 0x08	/* DW_AT_name, DW_FORM_string */
	.uleb128 0x11, 0x01	/* DW_AT_low_pc, DW_FORM_addr */
	.uleb128 0x12, 0x06	/* DW_AT_high_pc, DW_FORM_data4 (a length) */
	.uleb128 0, 0
	.uleb128 2		/* a block */
	.uleb128 0x0b		/* DW_TAG_lexical_block */
	.byte	1
	.uleb128 0x55, 0x17	/* DW_AT_ranges, DW_FORM_sec_offset */
	.uleb128 0, 0
	.uleb128 0

	.section .debug_ranges, "", @progbits
.Lranges: /* relative to the unit's DW_AT_low_pc */
	.quad	0, .Ldeep_end - cp_deep_stream
	.quad	0, 0

	.section .debug_info, "", @progbits
.Lcu:
	.long	.Lcu_end - .Lcu_version
.Lcu_version:
	.short	4
	.long	.Labbrev
	.byte	8
	.uleb128 1
	.asciz	"tenant_parse.S"
	.quad	cp_deep_stream
	.long	.Ldeep_end - cp_deep_stream
	.rept	CP_DEEP_BLOCKS
	.uleb128 2
	.long	.Lranges
	.endr
	.fill	CP_DEEP_BLOCKS + 1, 1, 0 /* each block's children end, then the unit's */
.Lcu_end:

	.section .debug_aranges, "", @progbits
	.long	.Laranges_end - .Laranges_version
.Laranges_version:
	.short	2
	.long	.Lcu
	.byte	8, 0
	.long	0		/* the tuples are aligned to their size */
	.quad	cp_deep_stream, .Ldeep_end - cp_deep_stream
	.quad	0, 0
.Laranges_end:

	.section .note.GNU-stack, "", @progbits
