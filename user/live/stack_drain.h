/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stack drain: moves the per-(instruction, user stack) counters of
 * bpf/stacks.bpf.h into user space once per interval, with each stack id
 * read from the stack map once, and keeps that map from filling up.
 *
 * The stack map never replaces a taken bucket, so an id keeps its frames
 * until user space deletes it: frames read once are kept here while their
 * id is in use, and at the end of each interval (cp_stack_drain__sweep())
 * every id that no counter entry of the interval used is deleted from the
 * map and forgotten. A stack in use stays; one that comes back later is
 * walked into the same bucket again. The one race: a stack whose id is
 * deleted just after the interval's counters were taken, sampled in
 * between and then not again, leaves an entry whose id is gone (or taken
 * by another stack meanwhile); such an entry is counted lost, and another
 * stack's frames are refused because their first frame is not the
 * entry's instruction (or, for a skid tick, one instruction after it).
 */
#ifndef CP_STACK_DRAIN_H
#define CP_STACK_DRAIN_H

#include <stddef.h>
#include "profile/stack_store.h"

struct cacheperf;
struct cp_stack_drain;

/* A drain of @skel's (loaded) stack maps; NULL with errno set on failure. */
struct cp_stack_drain *cp_stack_drain__new(struct cacheperf *skel);
void cp_stack_drain__free(struct cp_stack_drain *sd);

/*
 * Takes up to @cap counter entries from the map (deleting them) and moves
 * those whose stack is known, each with its frames (pcs[0] set to the
 * instruction charged), into @out; how many in *@moved. Returns the number
 * taken (@cap: there may be more), or a negative errno.
 */
int cp_stack_drain__take(struct cp_stack_drain *sd, struct cp_stack_sample *out, size_t cap,
			 size_t *moved);

/*
 * Ends an interval: deletes from the stack map every id that no entry
 * taken since the previous sweep used. Returns the ids deleted, or a
 * negative errno.
 */
int cp_stack_drain__sweep(struct cp_stack_drain *sd);

/* Entries whose stack was gone or another's when they were taken. */
__u64 cp_stack_drain__lost(const struct cp_stack_drain *sd);

#endif /* CP_STACK_DRAIN_H */
