/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stack generations of the allocation stack maps (cacheperf/alloc.h): when
 * to end a generation and when to empty the map of the one before. Pure:
 * live/run.c does what it says with the maps and the .bss knob.
 *
 * An allocation stack map never replaces a bucket once taken (bpf/fp_walk.bpf.h),
 * so without emptying it fills after some thousand distinct stacks and then,
 * bucket by bucket, every new stack fails (-EEXIST). Emptying it under
 * running probes would let an id name one stack in an event and another in
 * the map by the time user space reads it. So stacks go to two maps by
 * generation: a generation ends once CP_STACK_GEN_FILL of its map's buckets
 * were read (a new stack then collides at most that often); the next one
 * takes new stacks into the other map, which is empty; and once
 * CP_STACK_GEN_SETTLE_NS passed (a probe that read the old generation
 * finished long ago) and the ring buffer was read up to then, every event
 * of the old generation has had its stack read, and its map is emptied.
 * A generation does not end before the map of the one before is empty.
 * While that map is empty (cp_stack_gen_spare()), it takes the stacks whose
 * bucket in the current map holds another stack, as stacks of the next
 * generation: they stay there when it begins.
 */
#ifndef CP_STACK_GEN_H
#define CP_STACK_GEN_H

#include <stdbool.h>
#include <linux/types.h>

/* a generation ends when its stacks read reach an eighth of its map's entries */
#define CP_STACK_GEN_FILL_DIV 8
/* time for the probes of an ended generation to finish and their events to be read */
#define CP_STACK_GEN_SETTLE_NS 100000000ull

struct cp_stack_gen {
	__u32 gen;	  /* the generation new stacks go to */
	__u32 limit;	  /* stacks read that end a generation */
	__u32 reads;	  /* distinct stacks read of the current generation */
	__u32 next_reads; /* of the next generation (the spare map) */
	__u64 ended_ns;	  /* when the previous generation ended; 0: its map is empty */
	__u64 ends;	  /* generations ended */
	__u64 missing;	  /* stacks read whose id was not in the map: lost */
};

enum cp_stack_gen_step {
	CP_STACK_GEN_WAIT,  /* nothing to do */
	CP_STACK_GEN_END,   /* end the generation: cp_stack_gen_ended() */
	CP_STACK_GEN_EMPTY, /* empty the previous generation's map: cp_stack_gen_emptied() */
};

/* Generation 0 of maps of @map_entries stacks each. */
void cp_stack_gen_init(struct cp_stack_gen *g, __u32 map_entries);

/*
 * User space read stack @stack_id (CP_ALLOC_STACK_ID()) for a new call site;
 * @found: the map had it. Counts it against its generation's fill.
 */
void cp_stack_gen_read(struct cp_stack_gen *g, __s64 stack_id, bool found);

/*
 * What to do at @now_ns, when the ring buffer was last read to its end at
 * @drained_ns.
 */
enum cp_stack_gen_step cp_stack_gen_step(const struct cp_stack_gen *g, __u64 now_ns,
					 __u64 drained_ns);

/* The generation ended at @now_ns: the next one is g->gen. */
void cp_stack_gen_ended(struct cp_stack_gen *g, __u64 now_ns);

/* The previous generation's map was emptied. */
void cp_stack_gen_emptied(struct cp_stack_gen *g);

/* The next generation's map is empty: it may take the stacks the current one refuses. */
static inline bool cp_stack_gen_spare(const struct cp_stack_gen *g)
{
	return !g->ended_ns;
}

/* The map of the generation of @stack_id holds even (0) or odd (1) generations. */
static inline __u32 cp_stack_gen_map(__s64 stack_id)
{
	return (__u32)((__u64)stack_id >> 32) & 1;
}

#endif /* CP_STACK_GEN_H */
