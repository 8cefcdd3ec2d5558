// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Exit points of a throwing function: bounded control- and register-flow analysis. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "cacheperf/operand.h"
#include "decode/exit_points.h"
#include "decode/insn_effects.h"

#define CP_EXIT_HASH	 (4 * CP_EXIT_MAX_INSNS) /* a power of two */
#define CP_EXIT_INSN_MAX 15
#define CP_EXIT_SLOTS	 8	/* stack slots a walk follows */
#define CP_EXIT_SP_MAX	 0xffff /* what the cookie holds */

enum node_kind {
	K_PLAIN = 0, /* falls through */
	K_JCC,	     /* falls through or goes to target */
	K_JMP,	     /* goes to target */
	K_CALL,	     /* calls, then falls through */
	K_STOP,	     /* never goes on: noreturn call or jump, ud2, hlt, int3 */
	K_RET,
};

struct node {
	__u64 vaddr;  /* 0: free slot */
	__u64 target; /* K_JCC, K_JMP */
	__u8 bytes[CP_EXIT_INSN_MAX];
	__u8 len;
	__u8 kind;
	bool seen; /* coverage walk */
};

/* A value a walk follows: the exit point's register N (1..16), null, or unknown. */
#define V_NULL 32
#define V_UNK  33

struct walk_state {
	__u8 reg[CP_REG_NR]; /* enum cp_reg -> value */
	struct {
		__s64 at; /* sp offset from the exit point's sp */
		__u8 v;
	} slot[CP_EXIT_SLOTS];
	int nr_slots;
	__s64 delta; /* sp now minus sp at the exit point */
};

struct explore {
	const struct cp_exit_code *code;
	ZydisDecoder dec;
	struct node *nodes; /* CP_EXIT_HASH, open addressing */
	__u32 n;
	__u64 *stack; /* work list */
	__u32 sp;
	struct cp_exit_points *out;
};

bool cp_exit_noreturn_name(const char *name)
{
	static const char *const names[] = {
		"__cxa_throw",
		"__cxa_rethrow",
		"_Unwind_Resume",
		"abort",
		"__stack_chk_fail",
		"__assert_fail",
		"exit",
		"_exit",
		"_Exit",
		"__cxa_bad_array_new_length",
		"__cxa_call_terminate",
		"_ZSt9terminatev",
		"__fortify_fail",
		"__chk_fail",
		"pthread_exit",
	};

	if (!name)
		return false;
	if (strstr(name, "__throw_"))
		return true; /* libstdc++'s std::__throw_bad_alloc() and kin */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static struct node *lookup(struct explore *x, __u64 vaddr, bool add)
{
	__u32 h = (__u32)((vaddr * 0x9e3779b97f4a7c15ull) >> 40) & (CP_EXIT_HASH - 1);

	for (__u32 i = 0; i < CP_EXIT_HASH; i++) {
		struct node *nd = &x->nodes[(h + i) & (CP_EXIT_HASH - 1)];

		if (nd->vaddr == vaddr)
			return nd;
		if (!nd->vaddr) {
			if (!add)
				return NULL;
			nd->vaddr = vaddr;
			x->n++;
			return nd;
		}
	}
	return NULL;
}

static int fail(struct explore *x, const char *why, __u64 at)
{
	x->out->why = why;
	x->out->why_at = at;
	return -ENOENT;
}

static int push(struct explore *x, __u64 vaddr)
{
	if (lookup(x, vaddr, false))
		return 0;
	if (x->sp >= CP_EXIT_MAX_INSNS)
		return fail(x, "too much code to follow", vaddr);
	x->stack[x->sp++] = vaddr;
	return 0;
}

static bool decode(const ZydisDecoder *dec, const struct node *nd, ZydisDecodedInstruction *insn,
		   ZydisDecodedOperand *ops)
{
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, nd->bytes, nd->len, insn, ops));
}

/* The direct target of a relative branch at @vaddr, 0 if none. */
static __u64 rel_target(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops,
			__u64 vaddr)
{
	ZyanU64 t;

	if (!(insn->attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
	    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(insn, &ops[0], vaddr, &t)))
		return 0;
	return t;
}

/* Decodes and classifies the instruction at @vaddr; queues where it goes. */
static int explore_one(struct explore *x, __u64 vaddr)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	__u8 buf[CP_EXIT_INSN_MAX];
	enum cp_exit_target tt;
	struct node *nd;
	size_t got;
	__u64 t, to;

	if (lookup(x, vaddr, false))
		return 0;
	if (x->n >= CP_EXIT_MAX_INSNS)
		return fail(x, "too much code to follow", vaddr);
	got = x->code->read(x->code->ctx, vaddr, buf, sizeof(buf));
	if (!got || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x->dec, buf, got, &insn, ops)))
		return fail(x, "undecodable or unreadable code", vaddr);
	nd = lookup(x, vaddr, true);
	if (!nd)
		return -ENOMEM;
	memcpy(nd->bytes, buf, insn.length);
	nd->len = insn.length;
	switch (insn.meta.category) {
	case ZYDIS_CATEGORY_RET:
		if (insn.mnemonic != ZYDIS_MNEMONIC_RET || insn.operand_count_visible)
			return fail(x, "a return that is no plain ret", vaddr);
		nd->kind = K_RET;
		return 0;
	case ZYDIS_CATEGORY_COND_BR:
		t = rel_target(&insn, ops, vaddr);
		if (!t)
			return fail(x, "a conditional branch without a direct target", vaddr);
		nd->kind = K_JCC;
		nd->target = t;
		return push(x, t) ?: push(x, vaddr + insn.length);
	case ZYDIS_CATEGORY_UNCOND_BR:
		t = rel_target(&insn, ops, vaddr);
		if (!t)
			return fail(x, "an indirect jump", vaddr);
		tt = x->code->resolve(x->code->ctx, t, &to);
		if (tt == CP_EXIT_TGT_UNKNOWN)
			return fail(x, "a jump to code not proven", vaddr);
		if (tt == CP_EXIT_TGT_NORETURN) {
			nd->kind = K_STOP;
			return 0;
		}
		nd->kind = K_JMP;
		nd->target = to;
		return push(x, to);
	case ZYDIS_CATEGORY_CALL:
		t = rel_target(&insn, ops, vaddr);
		if (t && x->code->resolve(x->code->ctx, t, &to) == CP_EXIT_TGT_NORETURN) {
			nd->kind = K_STOP;
			return 0;
		}
		nd->kind = K_CALL;
		return push(x, vaddr + insn.length);
	case ZYDIS_CATEGORY_INTERRUPT:
		nd->kind = K_STOP;
		return 0;
	default:
		if (insn.mnemonic == ZYDIS_MNEMONIC_UD2 || insn.mnemonic == ZYDIS_MNEMONIC_HLT) {
			nd->kind = K_STOP;
			return 0;
		}
		nd->kind = K_PLAIN;
		return push(x, vaddr + insn.length);
	}
}

static int slot_find(const struct walk_state *w, __s64 at)
{
	for (int i = 0; i < w->nr_slots; i++)
		if (w->slot[i].at == at)
			return i;
	return -1;
}

static __u8 slot_get(const struct walk_state *w, __s64 at)
{
	int i = slot_find(w, at);

	return i < 0 ? V_UNK : w->slot[i].v;
}

static void slot_set(struct walk_state *w, __s64 at, __u8 v)
{
	int i = slot_find(w, at);

	/* an unaligned or narrower store next to a slot spoils it too */
	for (int j = 0; j < w->nr_slots; j++)
		if (w->slot[j].at > at - 8 && w->slot[j].at < at + 8)
			w->slot[j].v = V_UNK;
	if (i < 0 && w->nr_slots < CP_EXIT_SLOTS)
		i = w->nr_slots++;
	if (i >= 0)
		w->slot[i] = (typeof(w->slot[0])){.at = at, .v = v};
}

/* [rsp + disp] with nothing else: the disp; false for any other memory operand. */
static bool rsp_mem(const ZydisDecodedOperand *op, __s64 *disp)
{
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.base != ZYDIS_REGISTER_RSP ||
	    op->mem.index != ZYDIS_REGISTER_NONE || op->mem.segment == ZYDIS_REGISTER_FS ||
	    op->mem.segment == ZYDIS_REGISTER_GS)
		return false;
	*disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	return true;
}

static bool is_reg64(const ZydisDecodedOperand *op, int *r)
{
	if (op->type != ZYDIS_OPERAND_TYPE_REGISTER || op->size != 64)
		return false;
	*r = cp_reg_of(op->reg.value);
	return *r > CP_REG_NONE && *r < CP_REG_RIP;
}

/* A stack-pointer change @insn makes that a walk follows; false: it cannot. */
static bool walk_sp(struct walk_state *w, const ZydisDecodedInstruction *insn,
		    const ZydisDecodedOperand *ops)
{
	__s64 d;
	int r;

	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
		w->delta -= 8;
		slot_set(w, w->delta, is_reg64(&ops[0], &r) ? w->reg[r] : V_UNK);
		return insn->operand_width == 64;
	case ZYDIS_MNEMONIC_POP:
		if (!is_reg64(&ops[0], &r) || r == CP_REG_RSP)
			return false;
		w->reg[r] = slot_get(w, w->delta);
		w->delta += 8;
		return true;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
			return false;
		d = (__s64)ops[1].imm.value.s;
		w->delta += insn->mnemonic == ZYDIS_MNEMONIC_ADD ? d : -d;
		return true;
	case ZYDIS_MNEMONIC_LEA:
		if (!rsp_mem(&ops[1], &d))
			return false;
		w->delta += d;
		return true;
	default:
		return false;
	}
}

/* Follows a plain instruction's effect on the registers and stack slots; false: lost. */
static bool walk_plain(struct walk_state *w, const ZydisDecodedInstruction *insn,
		       const ZydisDecodedOperand *ops)
{
	__u32 written = cp_insn_regs_written(insn, ops);
	__s64 d;
	int r, s;

	if (written & CP_REG_BIT(CP_REG_RSP))
		return walk_sp(w, insn, ops);
	if (insn->mnemonic == ZYDIS_MNEMONIC_MOV && insn->operand_count_visible == 2) {
		if (is_reg64(&ops[0], &r) && is_reg64(&ops[1], &s)) {
			w->reg[r] = w->reg[s];
			return true;
		}
		if (is_reg64(&ops[0], &r) && rsp_mem(&ops[1], &d)) {
			w->reg[r] = slot_get(w, w->delta + d);
			return true;
		}
		if (rsp_mem(&ops[0], &d) && ops[0].size == 64 && is_reg64(&ops[1], &s)) {
			slot_set(w, w->delta + d, w->reg[s]);
			return true;
		}
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[0].size >= 32 &&
		    ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && !ops[1].imm.value.u) {
			r = cp_reg_of(ops[0].reg.value);
			if (r > CP_REG_NONE && r < CP_REG_RIP) {
				w->reg[r] = V_NULL;
				return true;
			}
		}
	}
	if (insn->mnemonic == ZYDIS_MNEMONIC_XOR && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[0].reg.value == ops[1].reg.value &&
	    ops[0].size >= 32) {
		w->reg[cp_reg_of(ops[0].reg.value)] = V_NULL;
		return true;
	}
	for (int i = 0; i < CP_REG_RIP; i++)
		if (written & CP_REG_BIT(i))
			w->reg[i] = V_UNK;
	for (int i = 0; i < insn->operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    !(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (rsp_mem(&ops[i], &d))
			slot_set(w, w->delta + d, V_UNK);
		else
			w->nr_slots = 0; /* may alias the frame */
	}
	return true;
}

/*
 * Walks from @vaddr (just after an exit point candidate) to a ret: true
 * with the register holding the result then (CP_REG_NONE: null) and the
 * return address's offset from sp at the candidate.
 */
static bool walk(struct explore *x, __u64 vaddr, __u8 *reg, __u32 *sp_off)
{
	static const int clobbered[] = {
		CP_REG_RAX, CP_REG_RCX, CP_REG_RDX, CP_REG_RSI, CP_REG_RDI,
		CP_REG_R8,  CP_REG_R9,	CP_REG_R10, CP_REG_R11,
	};
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	struct walk_state w = {.nr_slots = 0};
	__u8 v;

	for (int i = 0; i < CP_REG_NR; i++)
		w.reg[i] = (__u8)i;
	for (int n = 0; n < CP_EXIT_MAX_WALK; n++) {
		const struct node *nd = lookup(x, vaddr, false);

		if (!nd)
			return false;
		switch (nd->kind) {
		case K_RET:
			v = w.reg[CP_REG_RAX];
			if (w.delta < 0 || w.delta > CP_EXIT_SP_MAX || v == V_UNK ||
			    v == CP_REG_RSP)
				return false;
			*reg = v == V_NULL ? CP_REG_NONE : v;
			*sp_off = (__u32)w.delta;
			return true;
		case K_JMP:
			vaddr = nd->target;
			continue;
		case K_CALL:
			/* System V: the callee keeps rbx, rbp, r12-r15 and the caller's frame */
			for (size_t i = 0; i < sizeof(clobbered) / sizeof(clobbered[0]); i++)
				w.reg[clobbered[i]] = V_UNK;
			vaddr += nd->len;
			continue;
		case K_PLAIN:
			if (!decode(&x->dec, nd, &insn, ops) || !walk_plain(&w, &insn, ops))
				return false;
			vaddr += nd->len;
			continue;
		default:
			return false; /* a jcc: not deterministic; a stop: no ret */
		}
	}
	return false;
}

static const struct cp_exit_point *exit_of(const struct cp_exit_points *o, __u64 vaddr)
{
	for (int i = 0; i < o->n; i++)
		if (o->pts[i].vaddr == vaddr)
			return &o->pts[i];
	return NULL;
}

/* Every emulated jcc or jmp with a direction that reaches ret: an exit point. */
static int find_points(struct explore *x)
{
	for (__u32 i = 0; i < CP_EXIT_HASH; i++) {
		const struct node *nd = &x->nodes[i];
		struct cp_exit_point p = {.vaddr = nd->vaddr};

		if (!nd->vaddr || (nd->kind != K_JCC && nd->kind != K_JMP) ||
		    !cp_probe_insn_emulated(nd->bytes, nd->len, NULL))
			continue;
		p.always = nd->kind == K_JMP;
		p.cond = nd->bytes[0] == 0x0f ? nd->bytes[1] & 0xf : nd->bytes[0] & 0xf;
		p.ret[CP_EXIT_TAKEN] =
			walk(x, nd->target, &p.reg[CP_EXIT_TAKEN], &p.sp_off[CP_EXIT_TAKEN]);
		if (!p.always)
			p.ret[CP_EXIT_FALL] = walk(x, nd->vaddr + nd->len, &p.reg[CP_EXIT_FALL],
						   &p.sp_off[CP_EXIT_FALL]);
		if (!p.ret[CP_EXIT_TAKEN] && !p.ret[CP_EXIT_FALL])
			continue;
		if (x->out->n >= CP_EXIT_MAX_POINTS)
			return fail(x, "too many exit points", nd->vaddr);
		x->out->pts[x->out->n++] = p;
	}
	return 0;
}

/* Fails when some path from @entry reaches a ret without passing an exit point. */
static int check_covered(struct explore *x, __u64 entry)
{
	x->sp = 0;
	x->stack[x->sp++] = entry;
	while (x->sp) {
		struct node *nd = lookup(x, x->stack[--x->sp], false);
		const struct cp_exit_point *p;
		__u64 next[2];
		int nn = 0;

		if (!nd || nd->seen)
			continue;
		nd->seen = true;
		p = exit_of(x->out, nd->vaddr);
		switch (nd->kind) {
		case K_RET:
			return fail(x, "a return path passes no exit point", nd->vaddr);
		case K_JCC:
			if (!p || !p->ret[CP_EXIT_TAKEN])
				next[nn++] = nd->target;
			if (!p || !p->ret[CP_EXIT_FALL])
				next[nn++] = nd->vaddr + nd->len;
			break;
		case K_JMP:
			if (!p)
				next[nn++] = nd->target;
			break;
		case K_STOP:
			break;
		default:
			next[nn++] = nd->vaddr + nd->len;
			break;
		}
		for (int i = 0; i < nn; i++) {
			if (x->sp >= CP_EXIT_MAX_INSNS)
				return fail(x, "too much code to follow", nd->vaddr);
			x->stack[x->sp++] = next[i];
		}
	}
	return 0;
}

int cp_exit_points_find(const struct cp_exit_code *code, __u64 entry, struct cp_exit_points *out)
{
	struct explore x = {.code = code, .out = out};
	int err;

	memset(out, 0, sizeof(*out));
	if (!ZYAN_SUCCESS(
		    ZydisDecoderInit(&x.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	x.nodes = calloc(CP_EXIT_HASH, sizeof(*x.nodes));
	x.stack = calloc(CP_EXIT_MAX_INSNS, sizeof(*x.stack));
	if (!x.nodes || !x.stack) {
		err = -ENOMEM;
		goto out;
	}
	err = push(&x, entry);
	while (!err && x.sp)
		err = explore_one(&x, x.stack[--x.sp]);
	out->insns = x.n;
	if (!err)
		err = find_points(&x);
	if (!err)
		err = check_covered(&x, entry);
	if (err)
		out->n = 0;
out:
	free(x.nodes);
	free(x.stack);
	return err;
}
