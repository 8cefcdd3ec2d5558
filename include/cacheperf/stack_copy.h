/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel <-> user ABI of sample stack copies (bpf/stacks.bpf.h): where
 * the frame-pointer walk of a sampled stack stops short (code without frame
 * pointers on the way, as most distribution libraries are), the event's
 * registers and the top of its stack go to user space instead of the
 * counter map, to be unwound with the modules' CFI (symbols/unwind.h).
 * Which walks are short user space says per stack id in stack_kinds.
 */
#ifndef CACHEPERF_STACK_COPY_H
#define CACHEPERF_STACK_COPY_H

#include "cacheperf/abi.h"
#include "cacheperf/alloc.h"

/*
 * The copies' own ring buffer, ~990 copies (with -p and -- CMD only: copies
 * are off by default with -a); a full one makes the event counted on its
 * frame-pointer walk. The reader is woken when a quarter of it waits.
 */
#define CP_STACK_COPY_RING   (4u << 20)
#define CP_STACK_COPY_WAKEUP (CP_STACK_COPY_RING / 4)

/* What user space found a stack id's frame-pointer walk to be (stack_kinds values). */
enum cp_stack_kind {
	CP_STACK_KIND_WHOLE = 1, /* it reached where the thread started: counted as it is */
	CP_STACK_KIND_SHORT = 2, /* it stopped short: its events are copied */
};
/* An id with no kind yet is copied too, so that user space can tell which it is. */

/*
 * Record CP_REC_SAMPLE_USTACK (the stack_copies ring buffer, live only): one
 * walked event of a stack id whose kind is short or not yet known, with the
 * counts it stands for (what cp_stack_counted() would have added), its
 * registers and the top of its stack; u.caller is the interrupted pc.
 */
struct cp_sample_ustack_record {
	__u32 type; /* CP_REC_SAMPLE_USTACK */
	__u32 tgid;
	__s32 stack_id; /* its frame-pointer walk in sample_stacks */
	__u32 __pad;
	__u64 ip; /* the instruction charged: the stack's first frame */
	struct cp_stack_counts c;
	struct cp_ustack_record u;
};
_Static_assert(sizeof(struct cp_sample_ustack_record) == 64 + sizeof(struct cp_ustack_record),
	       "struct cp_sample_ustack_record is ABI");

#endif /* CACHEPERF_STACK_COPY_H */
