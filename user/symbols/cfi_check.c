// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A bounded, iterative check of CFI before libdw executes it (cfi_check.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/cfi_check.h"

/* DWARF's CFA instructions (DWARF 5, 6.4.2) and GNU's, as libdw knows them. */
enum {
	CFA_ADVANCE_LOC = 0x40,
	CFA_OFFSET = 0x80,
	CFA_RESTORE = 0xc0,
	CFA_NOP = 0x00,
	CFA_SET_LOC = 0x01,
	CFA_ADVANCE_LOC1 = 0x02,
	CFA_ADVANCE_LOC2 = 0x03,
	CFA_ADVANCE_LOC4 = 0x04,
	CFA_OFFSET_EXTENDED = 0x05,
	CFA_RESTORE_EXTENDED = 0x06,
	CFA_UNDEFINED = 0x07,
	CFA_SAME_VALUE = 0x08,
	CFA_REGISTER = 0x09,
	CFA_REMEMBER_STATE = 0x0a,
	CFA_RESTORE_STATE = 0x0b,
	CFA_DEF_CFA = 0x0c,
	CFA_DEF_CFA_REGISTER = 0x0d,
	CFA_DEF_CFA_OFFSET = 0x0e,
	CFA_DEF_CFA_EXPRESSION = 0x0f,
	CFA_EXPRESSION = 0x10,
	CFA_OFFSET_EXTENDED_SF = 0x11,
	CFA_DEF_CFA_SF = 0x12,
	CFA_DEF_CFA_OFFSET_SF = 0x13,
	CFA_VAL_OFFSET = 0x14,
	CFA_VAL_OFFSET_SF = 0x15,
	CFA_VAL_EXPRESSION = 0x16,
	CFA_MIPS_ADVANCE_LOC8 = 0x1d,
	CFA_GNU_WINDOW_SAVE = 0x2d,
	CFA_GNU_ARGS_SIZE = 0x2e,
	CFA_GNU_NEGATIVE_OFFSET_EXTENDED = 0x2f,
};

/* Pointer encodings (DW_EH_PE_*): the low nibble is the format. */
enum {
	PE_ABSPTR = 0x00,
	PE_ULEB128 = 0x01,
	PE_UDATA2 = 0x02,
	PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04,
	PE_SLEB128 = 0x09,
	PE_SDATA2 = 0x0a,
	PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10,
	PE_DATAREL = 0x30,
	PE_OMIT = 0xff,
};

/* A cursor over bytes; a read past the end fails and keeps failing. */
struct rd {
	const __u8 *p, *end;
	bool bad;
};

static bool rd_skip(struct rd *r, __u64 n)
{
	if (r->bad || n > (__u64)(r->end - r->p)) {
		r->bad = true;
		return false;
	}
	r->p += n;
	return true;
}

static __u64 rd_le(struct rd *r, unsigned int n)
{
	__u64 v = 0;

	if (!rd_skip(r, n))
		return 0;
	for (unsigned int i = 0; i < n; i++)
		v |= (__u64)r->p[(int)i - (int)n] << (8 * i);
	return v;
}

/* ULEB128 of at most 10 bytes (libdw's limit); saturates at 2^64 - 1. */
static __u64 rd_uleb(struct rd *r)
{
	__u64 v = 0;

	for (unsigned int shift = 0; shift < 70; shift += 7) {
		__u64 bits;

		if (!rd_skip(r, 1))
			return 0;
		bits = r->p[-1] & 0x7f;
		if (shift >= 64 || (shift > 57 && bits >> (64 - shift)))
			v = bits ? UINT64_MAX : v;
		else
			v |= bits << shift;
		if (!(r->p[-1] & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static void rd_sleb(struct rd *r)
{
	rd_uleb(r); /* only its length matters here */
}

/* A register operand: within x86-64's set, or the check fails. */
static bool reg_ok(struct rd *r, enum cp_cfi_verdict *v)
{
	__u64 reg = rd_uleb(r);

	if (!r->bad && reg > CP_CFI_MAX_REGNO) {
		*v = CP_CFI_BAD_REGISTER;
		return false;
	}
	return !r->bad;
}

/* Skips one value of pointer encoding @enc; false when not followed. */
static bool skip_encoded(struct rd *r, __u8 enc)
{
	if (enc == PE_OMIT)
		return true;
	if ((enc & 0x70) == 0x50) /* aligned: never written for x86-64 */
		return false;
	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return rd_skip(r, 8);
	case PE_UDATA2:
	case PE_SDATA2:
		return rd_skip(r, 2);
	case PE_UDATA4:
	case PE_SDATA4:
		return rd_skip(r, 4);
	case PE_ULEB128:
	case PE_SLEB128:
		rd_uleb(r);
		return !r->bad;
	default:
		return false;
	}
}

/*
 * One DWARF expression (DW_CFA_*expression's block): each operation decoded
 * with its operands, registers checked. Blocks inside (DW_OP_entry_value,
 * DW_OP_implicit_value) are skipped whole: libdw's unwinder evaluates
 * neither.
 */
static enum cp_cfi_verdict check_expr(const __u8 *p, __u64 len)
{
	struct rd r = {.p = p, .end = p + len};
	enum cp_cfi_verdict v = CP_CFI_MALFORMED;

	while (r.p < r.end && !r.bad) {
		__u8 op = *r.p++;

		if (op >= 0x30 && op <= 0x6f) /* lit0-31, reg0-31 */
			continue;
		if (op >= 0x70 && op <= 0x8f) { /* breg0-31 */
			rd_sleb(&r);
			continue;
		}
		switch (op) {
		case 0x06:	    /* deref */
		case 0x12 ... 0x14: /* dup, drop, over */
		case 0x16 ... 0x22: /* swap .. plus */
		case 0x24 ... 0x27: /* shl, shr, shra, xor */
		case 0x29 ... 0x2e: /* eq .. ne */
		case 0x96:	    /* nop */
		case 0x97:	    /* push_object_address */
		case 0x9b:	    /* form_tls_address */
		case 0x9c:	    /* call_frame_cfa */
		case 0x9f:	    /* stack_value */
		case 0xe0:	    /* GNU_push_tls_address */
		case 0xf0:	    /* GNU_uninit */
			break;
		case 0x08: /* const1u */
		case 0x09: /* const1s */
		case 0x15: /* pick */
		case 0x94: /* deref_size */
		case 0x95: /* xderef_size */
			rd_skip(&r, 1);
			break;
		case 0x0a: /* const2u */
		case 0x0b: /* const2s */
		case 0x28: /* bra */
		case 0x2f: /* skip */
		case 0x98: /* call2 */
			rd_skip(&r, 2);
			break;
		case 0x0c: /* const4u */
		case 0x0d: /* const4s */
		case 0x99: /* call4 */
		case 0x9a: /* call_ref */
		case 0xfa: /* GNU_parameter_ref */
		case 0xfd: /* GNU_variable_value */
			rd_skip(&r, 4);
			break;
		case 0x03: /* addr */
		case 0x0e: /* const8u */
		case 0x0f: /* const8s */
			rd_skip(&r, 8);
			break;
		case 0x10: /* constu */
		case 0x11: /* consts */
		case 0x23: /* plus_uconst */
		case 0x91: /* fbreg */
		case 0x93: /* piece */
		case 0xa1: /* addrx */
		case 0xa2: /* constx */
		case 0xa8: /* convert */
		case 0xa9: /* reinterpret */
		case 0xf7: /* GNU_convert */
		case 0xf9: /* GNU_reinterpret */
		case 0xfb: /* GNU_addr_index */
		case 0xfc: /* GNU_const_index */
			rd_uleb(&r);
			break;
		case 0x90: /* regx */
			if (!reg_ok(&r, &v))
				return v;
			break;
		case 0x92: /* bregx */
			if (!reg_ok(&r, &v))
				return v;
			rd_sleb(&r);
			break;
		case 0xa5: /* regval_type */
		case 0xf5: /* GNU_regval_type */
			if (!reg_ok(&r, &v))
				return v;
			rd_uleb(&r);
			break;
		case 0x9d: /* bit_piece */
			rd_uleb(&r);
			rd_uleb(&r);
			break;
		case 0x9e: /* implicit_value */
		case 0xa3: /* entry_value */
		case 0xf3: /* GNU_entry_value */
			rd_skip(&r, rd_uleb(&r));
			break;
		case 0xa0: /* implicit_pointer */
		case 0xf2: /* GNU_implicit_pointer */
			rd_skip(&r, 4);
			rd_sleb(&r);
			break;
		case 0xa4: /* const_type */
		case 0xf4: /* GNU_const_type */
			rd_uleb(&r);
			if (rd_skip(&r, 1))
				rd_skip(&r, r.p[-1]);
			break;
		case 0xa6: /* deref_type */
		case 0xa7: /* xderef_type */
		case 0xf6: /* GNU_deref_type */
			rd_skip(&r, 1);
			rd_uleb(&r);
			break;
		default: /* unknown, or GNU_encoded_addr: libdw refuses it too */
			return CP_CFI_MALFORMED;
		}
	}
	return r.bad ? CP_CFI_MALFORMED : CP_CFI_OK;
}

/* A DWARF block (ULEB128 length, bytes) holding an expression. */
static enum cp_cfi_verdict check_block(struct rd *r)
{
	__u64 len = rd_uleb(r);
	const __u8 *start = r->p;

	if (!rd_skip(r, len))
		return CP_CFI_MALFORMED;
	return check_expr(start, len);
}

/*
 * A CFA program (a CIE's initial instructions or an FDE's), every
 * instruction decoded. @fde_enc: the encoding of DW_CFA_set_loc's operand.
 */
static enum cp_cfi_verdict check_program(const __u8 *p, const __u8 *end, __u8 fde_enc)
{
	struct rd r = {.p = p, .end = end};
	enum cp_cfi_verdict v = CP_CFI_MALFORMED;
	unsigned int depth = 0;

	while (r.p < r.end && !r.bad) {
		__u8 op = *r.p++;

		switch (op & 0xc0) {
		case CFA_ADVANCE_LOC:
		case CFA_RESTORE: /* the register is in the low 6 bits: < 64 */
			continue;
		case CFA_OFFSET:
			rd_uleb(&r);
			continue;
		}
		switch (op) {
		case CFA_NOP:
		case CFA_GNU_WINDOW_SAVE: /* SPARC's: registers 8-31 */
			break;
		case CFA_SET_LOC:
			if (!skip_encoded(&r, fde_enc))
				return CP_CFI_MALFORMED;
			break;
		case CFA_ADVANCE_LOC1:
			rd_skip(&r, 1);
			break;
		case CFA_ADVANCE_LOC2:
			rd_skip(&r, 2);
			break;
		case CFA_ADVANCE_LOC4:
			rd_skip(&r, 4);
			break;
		case CFA_MIPS_ADVANCE_LOC8:
			rd_skip(&r, 8);
			break;
		case CFA_DEF_CFA_OFFSET:
		case CFA_DEF_CFA_OFFSET_SF:
		case CFA_GNU_ARGS_SIZE:
			rd_uleb(&r);
			break;
		case CFA_RESTORE_EXTENDED:
		case CFA_UNDEFINED:
		case CFA_SAME_VALUE:
		case CFA_DEF_CFA_REGISTER:
			if (!reg_ok(&r, &v))
				return v;
			break;
		case CFA_OFFSET_EXTENDED:
		case CFA_OFFSET_EXTENDED_SF:
		case CFA_DEF_CFA:
		case CFA_DEF_CFA_SF:
		case CFA_VAL_OFFSET:
		case CFA_VAL_OFFSET_SF:
		case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
			if (!reg_ok(&r, &v))
				return v;
			rd_uleb(&r);
			break;
		case CFA_REGISTER:
			if (!reg_ok(&r, &v) || !reg_ok(&r, &v))
				return v;
			break;
		case CFA_REMEMBER_STATE:
			if (++depth > CP_CFI_MAX_REMEMBER)
				return CP_CFI_TOO_DEEP;
			break;
		case CFA_RESTORE_STATE:
			if (depth)
				depth--;
			break;
		case CFA_DEF_CFA_EXPRESSION:
			v = check_block(&r);
			if (v)
				return v;
			break;
		case CFA_EXPRESSION:
		case CFA_VAL_EXPRESSION:
			if (!reg_ok(&r, &v))
				return v;
			v = check_block(&r);
			if (v)
				return v;
			v = CP_CFI_MALFORMED;
			break;
		default:
			/* libdw stops executing at an opcode it does not know */
			return CP_CFI_OK;
		}
	}
	return r.bad ? CP_CFI_MALFORMED : CP_CFI_OK;
}

/* One entry's header, as dwarf_next_cfi() reads it. */
struct entry {
	bool cie;
	__u64 cie_off;	  /* FDEs: the CIE's offset */
	const __u8 *body; /* after the CIE id / pointer */
	const __u8 *end;  /* the entry's end */
	__u64 next;	  /* the next entry's offset */
};

/* 1: the entry at @off; 0: the end (a zero length, or no room for one); -1: malformed. */
static int entry_at(const struct cp_cfi_section *sec, __u64 off, struct entry *e)
{
	struct rd r = {.p = sec->data + off, .end = sec->data + sec->size};
	unsigned int osz = 4;
	__u64 len, id, pos;

	if (off >= sec->size || sec->size - off <= 4)
		return 0;
	len = rd_le(&r, 4);
	if (len == 0xffffffffu) {
		osz = 8;
		len = rd_le(&r, 8);
		if (r.bad)
			return -1;
	}
	if (len == 0)
		return 0;
	if (len > (__u64)(r.end - r.p) || len < osz + 1)
		return -1;
	e->end = r.p + len;
	e->next = (__u64)(e->end - sec->data);
	pos = (__u64)(r.p - sec->data);
	id = rd_le(&r, osz);
	e->body = r.p;
	if (sec->eh) {
		e->cie = id == 0;
		if (!e->cie && (id > pos || pos <= osz))
			return -1;
		e->cie_off = pos - id;
	} else {
		e->cie = id == (osz == 4 ? 0xffffffffull : UINT64_MAX);
		e->cie_off = id;
	}
	return 1;
}

/* What an FDE needs of its CIE. */
struct cie {
	__u8 fde_enc;
	bool sized;	   /* "z": FDEs have augmentation data */
	const __u8 *insns; /* initial instructions */
	__u64 ra;	   /* return-address register */
};

/* The CIE header of @e, as dwarf_next_cfi() parses it. */
static enum cp_cfi_verdict parse_cie(const struct entry *e, struct cie *c)
{
	struct rd r = {.p = e->body, .end = e->end};
	const __u8 *aug, *aug_data;
	__u64 aug_size = 0;
	__u8 version;
	size_t aug_len;

	*c = (struct cie){.fde_enc = PE_ABSPTR};
	version = (__u8)rd_le(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return CP_CFI_MALFORMED;
	aug = r.p;
	aug_len = strnlen((const char *)aug, (size_t)(r.end - r.p));
	if (aug_len == (size_t)(r.end - r.p) || aug_len > CP_CFI_MAX_AUGMENTATION)
		return CP_CFI_MALFORMED;
	r.p += aug_len + 1;
	if (version == 4 && (rd_le(&r, 1) != 8 || rd_le(&r, 1) != 0))
		return CP_CFI_MALFORMED;    /* libdw takes 8-byte addresses, no segments */
	if (aug[0] == 'e' && aug[1] == 'h') /* g++ 2's: a pointer first */
		return CP_CFI_MALFORMED;
	rd_uleb(&r); /* code alignment */
	rd_sleb(&r); /* data alignment */
	c->ra = version == 1 ? rd_le(&r, 1) : rd_uleb(&r);
	if (r.bad)
		return CP_CFI_MALFORMED;
	if (c->ra > CP_CFI_MAX_REGNO)
		return CP_CFI_BAD_REGISTER;
	aug_data = r.p;
	c->sized = aug[0] == 'z';
	if (c->sized) {
		aug_size = rd_uleb(&r);
		aug_data = r.p;
		if (r.bad || aug_size > (__u64)(r.end - r.p))
			return CP_CFI_MALFORMED;
	}
	for (size_t i = c->sized; c->sized && i < aug_len; i++) {
		if (aug[i] == 'L') {
			rd_skip(&r, 1);
		} else if (aug[i] == 'R') {
			c->fde_enc = (__u8)rd_le(&r, 1);
		} else if (aug[i] == 'P') {
			__u8 enc = (__u8)rd_le(&r, 1);

			if (!r.bad && !skip_encoded(&r, enc))
				return CP_CFI_MALFORMED;
		} else if (aug[i] != 'S') {
			break; /* libdw stops there too */
		}
	}
	if (r.bad || (c->sized && r.p > aug_data + aug_size))
		return CP_CFI_MALFORMED;
	c->insns = c->sized ? aug_data + aug_size : r.p;
	return CP_CFI_OK;
}

/* An FDE whose CIE is @c: its addresses, augmentation data, then instructions. */
static enum cp_cfi_verdict check_fde(const struct entry *e, const struct cie *c)
{
	struct rd r = {.p = e->body, .end = e->end};
	__u8 range_enc = c->fde_enc & 0x0f;

	if (c->fde_enc == PE_OMIT || !skip_encoded(&r, c->fde_enc) || !skip_encoded(&r, range_enc))
		return CP_CFI_MALFORMED;
	if (c->sized && !rd_skip(&r, rd_uleb(&r)))
		return CP_CFI_MALFORMED;
	return check_program(r.p, r.end, c->fde_enc);
}

#define BIT(map, off) ((map)[(off) / 8] & (1u << ((off) % 8)))

/* The CIE at @off, an entry start the walk saw. */
static enum cp_cfi_verdict cie_at(const struct cp_cfi_section *sec, const __u8 *starts, __u64 off,
				  struct cie *c)
{
	struct entry e;

	if (off >= sec->size || !BIT(starts, off) || entry_at(sec, off, &e) != 1 || !e.cie)
		return CP_CFI_MALFORMED;
	return parse_cie(&e, c);
}

/* An encoded value of the .eh_frame_hdr at @r (vaddr @base for pcrel and datarel). */
static bool hdr_value(struct rd *r, __u8 enc, const __u8 *start, __u64 base, __u64 *out)
{
	__u64 rel = 0;
	const __u8 *at = r->p;

	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		rel = base + (__u64)(at - start);
		break;
	case PE_DATAREL:
		rel = base;
		break;
	default:
		return false;
	}
	switch (enc & 0x0f) {
	case PE_UDATA4:
		*out = rd_le(r, 4);
		break;
	case PE_SDATA4:
		*out = (__u64)(__s64)(__s32)rd_le(r, 4);
		break;
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		*out = rd_le(r, 8);
		break;
	default:
		return false;
	}
	*out += rel;
	return !r->bad && !(enc & 0x80);
}

/*
 * .eh_frame_hdr's search table, where libdw's binary search takes FDE
 * offsets from (fde.c): each must be an FDE the walk saw. A table libdw
 * would not use (none, another .eh_frame's, malformed) is fine.
 */
static enum cp_cfi_verdict check_hdr(const struct cp_cfi_section *sec, const __u8 *starts,
				     const struct cp_cfi_hdr *hdr)
{
	struct rd r = {.p = hdr->data, .end = hdr->data + hdr->size};
	__u8 frame_enc, count_enc, table_enc;
	__u64 frame, count;

	if (hdr->size < 4 || hdr->data[0] != 1)
		return CP_CFI_OK;
	r.p += 4;
	frame_enc = hdr->data[1];
	count_enc = hdr->data[2];
	table_enc = hdr->data[3];
	if (frame_enc == PE_OMIT)
		return CP_CFI_OK;
	if (!hdr_value(&r, frame_enc, hdr->data, hdr->vaddr, &frame))
		return CP_CFI_MALFORMED;
	if (count_enc == PE_OMIT)
		return CP_CFI_OK;
	if (!hdr_value(&r, count_enc, hdr->data, hdr->vaddr, &count))
		return CP_CFI_MALFORMED;
	if (!count || table_enc == PE_OMIT || (table_enc & ~0x08) == PE_ULEB128 ||
	    frame != sec->vaddr)
		return CP_CFI_OK;
	/* what every linker writes; anything else is not followed */
	if (table_enc != (PE_DATAREL | PE_SDATA4))
		return CP_CFI_MALFORMED;
	if (count > (__u64)(r.end - r.p) / 8)
		return CP_CFI_OK; /* libdw refuses the whole CFI */
	for (__u64 i = 0; i < count; i++) {
		__u64 off, fde;
		struct entry e;

		rd_skip(&r, 4); /* the initial location */
		fde = hdr->vaddr + (__u64)(__s64)(__s32)rd_le(&r, 4);
		off = fde - sec->vaddr;
		if (off >= sec->size || !BIT(starts, off) || entry_at(sec, off, &e) != 1 || e.cie)
			return CP_CFI_MALFORMED;
	}
	return CP_CFI_OK;
}

/*
 * Two walks, as libdw's linear search walks (to the first zero length):
 * the first marks where entries start and checks the CIEs, the second the
 * FDEs against their CIEs (a .debug_frame CIE may follow its FDEs).
 */
enum cp_cfi_verdict cp_cfi_check(const struct cp_cfi_section *sec, const struct cp_cfi_hdr *hdr)
{
	enum cp_cfi_verdict v = CP_CFI_OK;
	__u8 *starts;
	struct entry e;
	struct cie c;
	__u64 off;
	int r;

	if (!sec->data || !sec->size)
		return CP_CFI_OK;
	starts = calloc(sec->size / 8 + 1, 1);
	if (!starts)
		return CP_CFI_NOMEM;
	for (off = 0; !v && (r = entry_at(sec, off, &e)) != 0; off = e.next) {
		if (r < 0)
			v = CP_CFI_MALFORMED;
		else if (e.cie && !(v = parse_cie(&e, &c)))
			v = check_program(c.insns, e.end, c.fde_enc);
		if (!v)
			starts[off / 8] |= (__u8)(1u << (off % 8));
	}
	for (off = 0; !v && entry_at(sec, off, &e) == 1; off = e.next)
		if (!e.cie && !(v = cie_at(sec, starts, e.cie_off, &c)))
			v = check_fde(&e, &c);
	if (!v && sec->eh && hdr && hdr->data)
		v = check_hdr(sec, starts, hdr);
	free(starts);
	return v;
}

const char *cp_cfi_verdict_name(enum cp_cfi_verdict v)
{
	switch (v) {
	case CP_CFI_OK:
		return "ok";
	case CP_CFI_BAD_REGISTER:
		return "register number out of range";
	case CP_CFI_TOO_DEEP:
		return "remember_state nested too deep";
	case CP_CFI_MALFORMED:
		return "malformed";
	case CP_CFI_NOMEM:
		return "out of memory";
	}
	return "?";
}
