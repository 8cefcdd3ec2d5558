// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CFI unwinding of a call site's stack copy with libdw. */
#include <errno.h>
#include <string.h>
#include <elfutils/libdwfl.h>

#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_server.h"
#include "symbols/unwind.h"

/* DWARF register numbers of x86-64 (System V psABI, figure 3.36). */
enum {
	DW_X86_64_RBX = 3,
	DW_X86_64_RBP = 6,
	DW_X86_64_RSP = 7,
	DW_X86_64_R12 = 12,
	DW_X86_64_R15 = 15,
};

/* A register's slot in struct cp_unwind_regs, by its DWARF number; NULL: not kept. */
static __u64 *reg_slot(struct cp_unwind_regs *g, unsigned int dw)
{
	switch (dw) {
	case DW_X86_64_RBX:
		return &g->bx;
	case DW_X86_64_RBP:
		return &g->bp;
	case DW_X86_64_RSP:
		return &g->sp;
	default:
		return dw >= DW_X86_64_R12 && dw <= DW_X86_64_R15 ? &g->r12 + (dw - DW_X86_64_R12)
								  : NULL;
	}
}

static const unsigned int kept_regs[] = {DW_X86_64_RBX, DW_X86_64_RBP,	   DW_X86_64_RSP,
					 DW_X86_64_R12, DW_X86_64_R12 + 1, DW_X86_64_R12 + 2,
					 DW_X86_64_R15};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0; /* only ever asked for by tid: dwfl_getthread_frames() */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Stack memory from the copy; anything else (heap, another stack) is not known. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct cp_unwind_walk *w = *(struct cp_unwind_walk *const *)arg;
	const struct cp_ustack_record *r = w->r;

	(void)dwfl;
	if (addr < r->sp || addr - r->sp > r->len || r->len - (addr - r->sp) < sizeof(*result))
		return false;
	memcpy(result, r->stack + (addr - r->sp), sizeof(*result));
	return true;
}

/*
 * The walk's first frame: its pc and the registers known there. A frame
 * handed on (its pc a return address) is looked up at the call, before it,
 * as libdw does for every frame but the first.
 */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct cp_unwind_walk *w = *(struct cp_unwind_walk **)arg;
	struct cp_unwind_regs *g = &w->from;

	dwfl_thread_state_register_pc(thread, g->pc - (g->flags & CP_UNWIND_RET ? 1 : 0));
	for (size_t i = 0; i < sizeof(kept_regs) / sizeof(kept_regs[0]); i++) {
		Dwarf_Word v = *reg_slot(g, kept_regs[i]);

		if ((g->known & (1u << kept_regs[i])) &&
		    !dwfl_thread_state_registers(thread, (int)kept_regs[i], 1, &v))
			return false;
	}
	return true;
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/*
 * The Dwfl's state argument: attach_state takes it once per Dwfl, so it
 * points at the walk of the moment (one thread walks a Dwfl at a time).
 */
static __thread struct cp_unwind_walk *current;

/* Frame @state's registers into @g, @pc its pc (@ret: a return address). */
static void take_regs(Dwfl_Frame *state, __u64 pc, bool ret, struct cp_unwind_regs *g)
{
	*g = (struct cp_unwind_regs){.pc = pc, .flags = CP_UNWIND_KEPT | (ret ? CP_UNWIND_RET : 0)};
	for (size_t i = 0; i < sizeof(kept_regs) / sizeof(kept_regs[0]); i++) {
		Dwarf_Word v;

		if (!dwfl_frame_reg(state, kept_regs[i], &v)) {
			*reg_slot(g, kept_regs[i]) = v;
			g->known |= 1u << kept_regs[i];
		}
	}
}

/*
 * Each frame's pc into the walk, up to the first in a thread's start
 * function (cp_unwind_reached_start(): where the frame-pointer walk of
 * the same path ends too, so that a path is one path whichever walk
 * found it), or the first in a module the walk hands on (its pc kept,
 * its registers in w->next). The first frame of a walk that resumes
 * another is that walk's last: not kept again. The name comes from the
 * Dwfl being walked: the symbolizer's snapshot may not hold the module
 * yet, and refreshing it here would free this Dwfl.
 */
static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct cp_unwind_walk *w = arg;
	bool activation = false, first = !w->frames++;
	Dwfl_Module *m;
	Dwarf_Addr pc, at;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (first && (w->from.flags & CP_UNWIND_KEPT)) {
		at = pc; /* set_initial_registers() gave where to look it up */
	} else {
		w->ips[w->n++] = pc;
		at = activation ? pc : pc - 1; /* a return address: the call is before it */
	}
	m = dwfl_addrmodule(dwfl_thread_dwfl(dwfl_frame_thread(state)), at);
	if (!first && w->hand_on && w->hand_on(m, w->ctx)) {
		take_regs(state, pc, !activation, &w->next);
		w->handed = true;
		return DWARF_CB_ABORT;
	}
	if (m && cp_unwind_reached_start(cp_sym_function(m, at))) {
		w->reached_start = true;
		return DWARF_CB_ABORT;
	}
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

bool cp_unwind_reached_start(const char *function)
{
	static const char *const starts[] = {
		"_start",
		"__libc_start_main",
		"__libc_start_call_main",
		"start_thread",
		"__libc_start_main_impl",
		"clone3",
		"clone",
		"__clone",
		"__clone3",
	};

	/* a versioned name ("__libc_start_main@@GLIBC_2.34") is its function's */
	size_t len = function ? strcspn(function, "@") : 0;

	for (size_t i = 0; function && i < sizeof(starts) / sizeof(starts[0]); i++)
		if (strlen(starts[i]) == len && !strncmp(function, starts[i], len))
			return true;
	return false;
}

void cp_unwind_walk(Dwfl *dwfl, pid_t tid, struct cp_unwind_walk *w)
{
	w->frames = 0;
	w->handed = w->reached_start = false;
	if (w->n >= w->max || !w->r->len || !w->from.pc)
		return;
	if (dwfl_pid(dwfl) < 0 && !dwfl_attach_state(dwfl, NULL, tid, &callbacks, &current))
		return;
	current = w;
	dwfl_getthread_frames(dwfl, tid, on_frame, w);
	current = NULL;
}

/* A module of a process's own Dwfl that the describe server unwinds (a tenant's file). */
static bool remote_module(Dwfl_Module *m, void *ctx)
{
	(void)ctx;
	return m && cp_sym_remote(m);
}

size_t cp_unwind(struct cp_symbolizer *s, const struct cp_ustack_record *r, __u64 *ips, size_t max)
{
	struct cp_unwind_walk w = {
		.r = r,
		.ips = ips,
		.max = max,
		.hand_on = remote_module,
		.from = {.pc = r->caller,
			 .sp = r->sp,
			 .bp = r->bp,
			 .bx = r->bx,
			 .r12 = r->r12,
			 .r13 = r->r13,
			 .r14 = r->r14,
			 .r15 = r->r15,
			 .known = CP_UNWIND_REGS_KEPT},
	};

	if (!max || !r->len || !r->caller)
		return 0;
	/* each hand-over keeps a frame: at most one a frame, whichever side gives it */
	for (size_t hop = 0; hop <= max && w.n < max; hop++) {
		struct cp_sym_remote f;
		__u64 at = w.from.pc - (w.from.flags & CP_UNWIND_RET ? 1 : 0);
		int err = cp_symbolizer__remote_at(s, (pid_t)r->tgid, at, &f);
		Dwfl *dwfl;

		if (!err) {
			/* a tenant's file: its CFI is read in the describe server only */
			if (cp_sym_server_unwind(&f, &w))
				break;
		} else if (err == -ENOENT) {
			dwfl = cp_symbolizer__process_dwfl(s, (pid_t)r->tgid);
			if (!dwfl)
				break;
			cp_unwind_walk(dwfl, (pid_t)r->tgid, &w);
		} else {
			break;
		}
		if (!w.handed || w.reached_start)
			break;
		w.from = w.next;
	}
	return w.n;
}
