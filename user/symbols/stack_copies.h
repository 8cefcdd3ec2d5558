/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call sites' stack copies (struct cp_ustack_record), from the moment they
 * arrive to the moment the call site's object event asks for its frames,
 * which follows in the ring buffer: unwinding by CFI (symbols/unwind.h) is
 * done then, and only when the frame-pointer walk did not reach the
 * program's start. A ring of CP_STACK_COPIES: the oldest is overwritten,
 * so a copy whose event was lost does not stay. Pure.
 */
#ifndef CP_STACK_COPIES_H
#define CP_STACK_COPIES_H

#include <stdbool.h>
#include <linux/types.h>

#include "cacheperf/alloc.h"

#define CP_STACK_COPIES 64

struct cp_stack_copies {
	unsigned int next;
	bool used[CP_STACK_COPIES];
	struct cp_ustack_record r[CP_STACK_COPIES];
};

/* Keeps @r until its call site asks for it. */
void cp_stack_copies_put(struct cp_stack_copies *c, const struct cp_ustack_record *r);

/* The copy kept for call site @caller of @tgid, its slot freed; NULL if none is kept. */
const struct cp_ustack_record *cp_stack_copies_take(struct cp_stack_copies *c, __u32 tgid,
						    __u64 caller);

#endif /* CP_STACK_COPIES_H */
