/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unwinding a call site's stack with CFI, where the frame-pointer walk
 * stops: C++'s operator new in libstdc++ and most distribution libraries
 * keep no frame pointer, so the BPF walk from malloc's return loses every
 * frame above it. BPF copies the caller's registers and the top of its
 * stack at a call site's first allocation (struct cp_ustack_record);
 * libdw's unwinder (dwfl_getthread_frames) then walks the copy with the
 * modules' .eh_frame/.debug_frame, in a Dwfl of the process's own, reading
 * memory from the copy only, as `perf record --call-graph dwarf` does.
 * Frames in a tenant's file are walked by the describe server
 * (sym_server.h), whose Dwfl alone reads that file's CFI: the walk hands
 * the registers over at each crossing. Once per call site, on the drain's
 * thread.
 */
#ifndef CP_UNWIND_H
#define CP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <elfutils/libdwfl.h>

#include "cacheperf/alloc.h"
#include "symbols/symbolizer.h"

/* A frame's registers a walk starts from (x86-64; also a describe server's message). */
struct cp_unwind_regs {
	__u64 pc, sp, bp, bx, r12, r13, r14, r15;
	__u32 known; /* 1 << DWARF register number: those known (rbx 3, rbp 6, rsp 7, r12-15) */
	__u32 flags; /* CP_UNWIND_* */
};

/* The registers a walk keeps (cp_unwind_regs.known): rbx 3, rbp 6, rsp 7, r12-15. */
#define CP_UNWIND_REGS_KEPT (1u << 3 | 1u << 6 | 1u << 7 | 0xfu << 12)

enum {
	CP_UNWIND_RET = 1,  /* @pc is a return address: its frame is looked up at the call */
	CP_UNWIND_KEPT = 2, /* the frame was kept by the walk before: a walk from it resumes */
};

/* One walk over a Dwfl (cp_unwind_walk()), from a frame to where it ends or hands on. */
struct cp_unwind_walk {
	const struct cp_ustack_record *r; /* the stack copy (only its sp, len, stack) */
	struct cp_unwind_regs from;
	__u64 *ips; /* frames found go to ips[n], up to max */
	size_t max, n;
	/* true for a module (NULL: none holds the pc) whose frames another walk does */
	bool (*hand_on)(Dwfl_Module *m, void *ctx);
	void *ctx;
	/* what the walk found */
	struct cp_unwind_regs next; /* handed: the first frame handed on */
	bool handed, reached_start;
	unsigned int frames;
};

/*
 * Walks @dwfl (attached to thread @tid on its first walk) from @w->from:
 * each frame's pc into @w->ips, but @w->from's own when it resumes
 * another walk; ends at a thread's start (reached_start), at @w->max, where
 * CFI ends, or at the first frame in a module @w->hand_on takes (handed,
 * its pc kept and its registers in @w->next). Memory is read from the
 * stack copy only.
 */
void cp_unwind_walk(Dwfl *dwfl, pid_t tid, struct cp_unwind_walk *w);

/*
 * The frames of @r into @ips (at most @max): the caller first (r->caller,
 * as the BPF stack's first entry), then each return address above it, up
 * to the first frame in a thread's start function (cp_unwind_reached_start(),
 * where a whole frame-pointer walk ends too: one path, one stack).
 * Returns how many, 0 when nothing could be unwound (the process is gone,
 * no CFI for the caller).
 */
size_t cp_unwind(struct cp_symbolizer *s, const struct cp_ustack_record *r, __u64 *ips, size_t max);

/*
 * True when a stack whose outermost frame is in @function reached where a
 * thread starts (_start, __libc_start_main, start_thread, clone3): the
 * frame-pointer walk was whole, no CFI unwinding is needed. A symbol
 * version after '@' is not part of the name. Pure.
 */
bool cp_unwind_reached_start(const char *function);

#endif /* CP_UNWIND_H */
