/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call-site table: interns an allocation call site (the allocator's
 * immediate caller, read from the return address at malloc entry, plus the
 * BPF stack id of the rest of the stack) as a small dense id, so each of a
 * million objects carries 8 bytes instead of a stack. Ids start at 1; 0
 * means "unknown". Caller addresses only mean something inside one address
 * space, so there is one table per process (process_objects.h).
 */
#ifndef CP_CALLSITES_H
#define CP_CALLSITES_H

#include <stddef.h>
#include <linux/types.h>

#define CP_MAX_CALLSITES	65536	/* default cap per process */
#define CP_NO_STACK		(-1)	/* stack_id when no stack was captured */

struct cp_callsite {
	__u64 caller;		/* return address into the code that called the allocator */
	__s64 stack_id;		/* id in the BPF stack map, CP_NO_STACK if none */
};

struct cp_callsites;

/* A table for at most @max call sites (0 means CP_MAX_CALLSITES); NULL on failure. */
struct cp_callsites *cp_callsites__new(size_t max);
void cp_callsites__free(struct cp_callsites *cs);

/*
 * The id of (@caller, @stack_id), adding it if new. Returns 0 when the table
 * is full or out of memory (counted in cp_callsites__dropped()): objects
 * then carry an unknown call site rather than being lost.
 */
__u64 cp_callsites__intern(struct cp_callsites *cs, __u64 caller, __s64 stack_id);

/* The call site of @id, or NULL for 0 or an id never handed out. */
const struct cp_callsite *cp_callsites__get(const struct cp_callsites *cs, __u64 id);

size_t cp_callsites__count(const struct cp_callsites *cs);
__u64 cp_callsites__dropped(const struct cp_callsites *cs);

#endif /* CP_CALLSITES_H */
