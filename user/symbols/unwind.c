// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CFI unwinding of a call site's stack copy with libdw. */
#include <string.h>
#include <elfutils/libdwfl.h>

#include "symbols/sym_dwarf.h"
#include "symbols/unwind.h"

/* DWARF register numbers of x86-64 (System V psABI, figure 3.36). */
enum {
	DW_X86_64_RBX = 3,
	DW_X86_64_RBP = 6,
	DW_X86_64_RSP = 7,
	DW_X86_64_R12 = 12,
	DW_X86_64_NR = 17,
};

/* The walk under way: libdw's callbacks reach it through their argument. */
struct walk {
	const struct cp_ustack_record *r;
	__u64 *ips;
	size_t max, n;
};

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
	const struct walk *w = *(struct walk *const *)arg;
	const struct cp_ustack_record *r = w->r;

	(void)dwfl;
	if (addr < r->sp || addr - r->sp > r->len || r->len - (addr - r->sp) < sizeof(*result))
		return false;
	memcpy(result, r->stack + (addr - r->sp), sizeof(*result));
	return true;
}

/* The caller's state after the allocator returned: its pc, sp and callee-saved registers. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct walk *w = *(struct walk *const *)arg;
	const struct cp_ustack_record *r = w->r;
	Dwarf_Word bx = r->bx, bp_sp[2] = {r->bp, r->sp};
	Dwarf_Word r12_15[4] = {r->r12, r->r13, r->r14, r->r15};

	dwfl_thread_state_register_pc(thread, r->caller);
	return dwfl_thread_state_registers(thread, DW_X86_64_RBX, 1, &bx) &&
	       dwfl_thread_state_registers(thread, DW_X86_64_RBP, 2, bp_sp) &&
	       dwfl_thread_state_registers(thread, DW_X86_64_R12, 4, r12_15);
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/*
 * The Dwfl's state argument: attach_state takes it once per Dwfl, so it
 * points at the walk of the moment (one thread walks: the drain's).
 */
static struct walk *current;

/*
 * Each frame's pc into the walk, up to the first in a thread's start
 * function (cp_unwind_reached_start()): where the frame-pointer walk of
 * the same path ends too, so that a path is one path whichever walk
 * found it (CFI goes on to __libc_start_main_impl and _start). The name
 * comes from the Dwfl being walked: the symbolizer's snapshot may not
 * hold the module yet, and refreshing it here would free this Dwfl.
 */
static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	bool activation = false;
	Dwfl_Module *m;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	w->ips[w->n++] = pc;
	if (!activation)
		pc--; /* a return address: the call is before it */
	m = dwfl_addrmodule(dwfl_thread_dwfl(dwfl_frame_thread(state)), pc);
	if (m && cp_unwind_reached_start(cp_sym_function(m, pc)))
		return DWARF_CB_ABORT;
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

size_t cp_unwind(struct cp_symbolizer *s, const struct cp_ustack_record *r, __u64 *ips, size_t max)
{
	struct walk w = {.r = r, .ips = ips, .max = max};
	Dwfl *dwfl;

	if (!max || !r->len || !r->caller)
		return 0;
	dwfl = cp_symbolizer__process_dwfl(s, (pid_t)r->tgid);
	if (!dwfl)
		return 0;
	if (dwfl_pid(dwfl) < 0 &&
	    !dwfl_attach_state(dwfl, NULL, (pid_t)r->tgid, &callbacks, &current))
		return 0;
	current = &w;
	dwfl_getthread_frames(dwfl, (pid_t)r->tgid, on_frame, &w);
	current = NULL;
	return w.n;
}
