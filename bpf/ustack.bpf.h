/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A user stack copy for CFI unwinding in user space (struct
 * cp_ustack_record, symbols/unwind.h): the registers the unwinder starts
 * from and up to @want bytes of stack from sp. Used by the allocation
 * probes (a call site's first allocation) and by the walked events whose
 * frame-pointer walk stops short (bpf/stacks.bpf.h).
 */
#ifndef CACHEPERF_USTACK_BPF_H
#define CACHEPERF_USTACK_BPF_H

#include "cacheperf.bpf.h"
#include "cacheperf/alloc.h"

/*
 * Fills @r from @regs (user-mode registers) with @pc as where the walk
 * starts and @sp as the stack pointer there. A stack shallower than @want bytes (at most
 * CP_USTACK_BYTES) is read again for a quarter of it, which a thread's top has; len 0 when nothing
 * could be read.
 */
static __always_inline void cp_ustack_fill(struct cp_ustack_record *r, struct pt_regs *regs,
					   __u32 tgid, __u64 pc, __u64 sp, __u32 want)
{
	r->type = CP_REC_USTACK;
	r->tgid = tgid;
	r->caller = pc;
	r->sp = sp;
	r->bp = regs->bp;
	r->bx = regs->bx;
	r->r12 = regs->r12;
	r->r13 = regs->r13;
	r->r14 = regs->r14;
	r->r15 = regs->r15;
	r->__pad = 0;
	want &= 2 * CP_USTACK_BYTES - 1;
	if (want > CP_USTACK_BYTES)
		want = CP_USTACK_BYTES;
	r->len = want;
	if (!want || bpf_probe_read_user(r->stack, want, (void *)sp)) {
		r->len = want / 4;
		if (!r->len ||
		    bpf_probe_read_user(r->stack, r->len & (CP_USTACK_BYTES - 1), (void *)sp))
			r->len = 0;
	}
}

#endif /* CACHEPERF_USTACK_BPF_H */
