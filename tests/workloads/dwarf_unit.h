/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Assembler macros for the hostile tenants' hand-written code and debug
 * info (tenant_parse.S, tenant_dwarf.S): the loop they spend their time in,
 * and one DWARF 4 compile unit: its abbreviation, its header and its
 * .debug_aranges entry. Section offsets are labels (relocated: the C
 * file's own units come first).
 */

/* The sum of %rsi longs at %rdi into %rax (one per 8 bytes), then ret. */
.macro cp_sum_longs
	xorl	%eax, %eax
	xorl	%ecx, %ecx
1:	addq	(%rdi,%rcx,8), %rax
	addq	$8, %rcx
	cmpq	%rsi, %rcx
	jb	1b
	ret
.endm

/* Abbreviation 1: the unit, with children: name, [stmt_list,] low_pc, high_pc (a length). */
.macro cp_unit_abbrev stmt=0
	.uleb128 1
	.uleb128 0x11		/* DW_TAG_compile_unit */
	.byte	1
	.uleb128 0x03, 0x08	/* DW_AT_name, DW_FORM_string */
	.if \stmt
	.uleb128 0x10, 0x17	/* DW_AT_stmt_list, DW_FORM_sec_offset */
	.endif
	.uleb128 0x11, 0x01	/* DW_AT_low_pc, DW_FORM_addr */
	.uleb128 0x12, 0x06	/* DW_AT_high_pc, DW_FORM_data4 */
	.uleb128 0, 0
.endm

/* Abbreviation @code: a DIE of @tag with DW_AT_ranges only, with or without (@children) children. */
.macro cp_ranges_abbrev code, tag, children
	.uleb128 \code, \tag
	.byte	\children
	.uleb128 0x55, 0x17	/* DW_AT_ranges, DW_FORM_sec_offset */
	.uleb128 0, 0
.endm

/* The unit's header up to its DIE's name: its length runs to @end. */
.macro cp_unit_begin abbrev, end, name
	.long	\end - 1f
1:	.short	4		/* DWARF 4 */
	.long	\abbrev
	.byte	8		/* address size */
	.uleb128 1
	.asciz	"\name"
.endm

/* The unit @cu claims [@lo, @lo + @len) in .debug_aranges. */
.macro cp_unit_aranges cu, lo, len
	.pushsection .debug_aranges, "", @progbits
	.long	44
	.short	2
	.long	\cu
	.byte	8, 0
	.long	0		/* the tuples are aligned to their size */
	.quad	\lo, \len
	.quad	0, 0
	.popsection
.endm
