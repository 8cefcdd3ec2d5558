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
 *
 * Stack copies (cacheperf/stack_copy.h): where a stack id's walk stopped
 * short of where its thread started (judged once per id by the unwinder's
 * whole(), and told to BPF in stack_kinds), the walked events of that id
 * come as copies of their registers and stack top instead of counters;
 * cp_stack_drain__copy() unwinds each with the unwinder's CFI walk and
 * keeps the deeper of the two. An id not judged yet is copied too, so the
 * first events of a new stack are not the shallow ones.
 */
#ifndef CP_STACK_DRAIN_H
#define CP_STACK_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include "cacheperf/stack_copy.h"
#include "profile/stack_store.h"

struct cacheperf;
struct cp_stack_drain;

/*
 * Before load: stack copies of @copy_bytes (at most CP_USTACK_BYTES; 0:
 * none, and their maps shrunk to nothing). Returns 0 or a negative errno.
 */
int cp_stack_copies_prepare(struct cacheperf *skel, __u32 copy_bytes);

/* What judges and unwinds stacks for the copies (the symbolizer, live/run.c). */
struct cp_stack_unwinder {
	/* true when the walk @pcs (@nr frames) of process @tgid reached its thread's start */
	bool (*whole)(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr);
	/* the CFI walk of @r into @pcs (at most @max), @r->caller first; 0: none */
	size_t (*unwind)(void *ctx, const struct cp_ustack_record *r, __u64 *pcs, size_t max);
	void *ctx;
};

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
 * taken since the sweep before the previous one used. An id unused at one
 * sweep only is kept until the next: BPF may have made it between the take
 * and the sweep, its counter not taken yet. Returns the ids deleted, or a
 * negative errno.
 */
int cp_stack_drain__sweep(struct cp_stack_drain *sd);

/* Entries whose stack was gone or another's when they were taken. */
__u64 cp_stack_drain__lost(const struct cp_stack_drain *sd);

/* Judges new ids and unwinds copies with @u from now on (copied; NULL: stop). */
void cp_stack_drain__set_unwinder(struct cp_stack_drain *sd, const struct cp_stack_unwinder *u);

/*
 * One stack copy into @out: the instruction charged, then the callers of
 * the CFI walk when it went deeper than the frame-pointer walk of the id
 * (else that walk's), with the counts the event stands for. Returns 0, or
 * -ENOENT when neither walk has a frame (counted lost).
 */
int cp_stack_drain__copy(struct cp_stack_drain *sd, const struct cp_sample_ustack_record *r,
			 struct cp_stack_sample *out);

/* Copies taken, and of them those the CFI walk made deeper. */
struct cp_stack_copy_tally {
	__u64 copies;
	__u64 deeper;
};
struct cp_stack_copy_tally cp_stack_drain__copies(const struct cp_stack_drain *sd);

#endif /* CP_STACK_DRAIN_H */
