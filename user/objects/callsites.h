/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call-site table: interns an allocation call site (the allocator's
 * immediate caller, read from the return address at malloc entry, plus the
 * BPF stack id of the rest of the stack) as a small dense id, so each of a
 * million objects carries 8 bytes instead of a stack. Ids start at 1; 0
 * means "unknown". Caller addresses only mean something inside one address
 * space, so there is one table per process (objects/objects.h).
 */
#ifndef CP_CALLSITES_H
#define CP_CALLSITES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_MAX_CALLSITES       65536 /* default cap per process */
#define CP_NO_STACK	       (-1)  /* stack_id when no stack was captured */
#define CP_CALLSITE_MAX_FRAMES 32    /* frames per call site: CP_ALLOC_STACK_DEPTH */
/* frames kept per table: 4 MiB, a 32-deep stack for each of 16384 call sites */
#define CP_CALLSITE_FRAMES_CAP (1u << 19)

struct cp_callsite {
	__u64 caller;	 /* return address into the code that called the allocator */
	__s64 stack_id;	 /* id in the BPF stack map, CP_NO_STACK if none */
	__u32 frames_at; /* first of its frames in the table's frame pool */
	__u16 nr_frames; /* return addresses, innermost first; 0: none resolved */
	bool stack_read; /* its stack id was looked up (successfully or not) */
	__u32 same_as;	 /* 0, or the earlier site with the same caller and frames */
};

struct cp_callsites;

/* A table for at most @max call sites (0 means CP_MAX_CALLSITES); NULL on failure. */
struct cp_callsites *cp_callsites__new(size_t max);
void cp_callsites__free(struct cp_callsites *cs);

/*
 * The id of (@caller, @stack_id), adding it if new (for a name of another
 * site, cp_callsites__set_stack(), that site's id). Returns 0 when the table
 * is full or out of memory (counted in cp_callsites__dropped()): objects
 * then carry an unknown call site rather than being lost.
 */
__u64 cp_callsites__intern(struct cp_callsites *cs, __u64 caller, __s64 stack_id);

/*
 * The call site of @id, or NULL for 0 or an id never handed out; for an id
 * cp_callsites__set_stack() made another name of an earlier site (after
 * objects took it), that site.
 */
const struct cp_callsite *cp_callsites__get(const struct cp_callsites *cs, __u64 id);

/* The id @id stands for: itself, or the earlier site it is another name of. */
__u64 cp_callsites__canonical(const struct cp_callsites *cs, __u64 id);

/*
 * The id cp_callsites__intern() gives (@caller, @stack_id), without
 * interning: 0 for a site not in the table.
 */
__u64 cp_callsites__find(const struct cp_callsites *cs, __u64 caller, __s64 stack_id);
/* Whether the table takes another site (its max not reached). */
bool cp_callsites__has_room(const struct cp_callsites *cs);

size_t cp_callsites__count(const struct cp_callsites *cs);
__u64 cp_callsites__dropped(const struct cp_callsites *cs);

/*
 * Gives call site @id the @n return addresses of its stack (innermost
 * first, at most CP_CALLSITE_MAX_FRAMES kept) and marks its stack read; a
 * site's frames are set once, later calls change nothing. Returns 0,
 * -ENOENT for an unknown id, -ENOSPC when the table's frame pool
 * (CP_CALLSITE_FRAMES_CAP) is full: the site then keeps its caller alone
 * (counted in cp_callsites__frames_dropped()).
 */
int cp_callsites__set_frames(struct cp_callsites *cs, __u64 id, const __u64 *ips, size_t n);

/*
 * cp_callsites__set_frames() for call site @id just interned, except that
 * when an earlier site has the same caller and the same frames (the same
 * stack again, under another stack id: cacheperf/alloc.h's stack
 * generations), @id becomes another name of that site: cp_callsites__intern()
 * returns the earlier id for it from then on, and objects that took @id
 * before its frames came resolve to it too (cp_callsites__get(),
 * __canonical()). Returns the id to use, 0 for an unknown @id.
 */
__u64 cp_callsites__set_stack(struct cp_callsites *cs, __u64 id, const __u64 *ips, size_t n);

/* The frames of call site @id (*@n of them), NULL with *@n 0 when it has none. */
const __u64 *cp_callsites__frames(const struct cp_callsites *cs, __u64 id, size_t *n);

/* Stacks not kept: the frame pool was full. */
__u64 cp_callsites__frames_dropped(const struct cp_callsites *cs);

#endif /* CP_CALLSITES_H */
