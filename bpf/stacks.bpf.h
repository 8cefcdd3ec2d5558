/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user call stacks of samples, ticks and breakpoint hits. The
 * project's own frame-pointer walk (cp_stack_stored(), the rules in
 * cacheperf/stack_walk.h) puts each distinct stack once in sample_stacks,
 * under its bucket, the stack id; stack_counts counts per (tgid, stack id,
 * instruction) what landed there. Nothing per sample goes to the ring
 * buffer: cp_sample's 64 bytes stay as they are, and user space drains the
 * counters each interval (user/live/stack_drain.h), reads each stack id once
 * and deletes the ids no counter used, so the store does not fill up on a
 * long run (a taken bucket is never replaced: that would give old counters
 * another stack's frames).
 *
 * cp_stack_counted() counts, and counts every failure in stats: drop_stack_map (the hash bucket
 * of this stack is taken: -EEXIST), drop_stack_counts (the counter map is full), no_ustack (no
 * user stack could be read).
 */
#ifndef CACHEPERF_STACKS_BPF_H
#define CACHEPERF_STACKS_BPF_H

#include "cacheperf.bpf.h"
#include "cacheperf/stack_copy.h"
#include "fp_walk.bpf.h"
#include "ustack.bpf.h"
#include "wakeup.bpf.h"

/* The walks by stack id: CP_STACK_DEPTH frames, zero past the last (as a STACK_TRACE map's) */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_SAMPLE_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CP_STACK_DEPTH * sizeof(__u64));
} sample_stacks SEC(".maps");

CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_STACK_COUNTS);
	__type(key, struct cp_stack_key);
	__type(value, struct cp_stack_counts);
} stack_counts SEC(".maps");

/* What user space found each stack id's walk to be (cacheperf/stack_copy.h). */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_SAMPLE_STACKS);
	__type(key, __u32);
	__type(value, __u32);
} stack_kinds SEC(".maps");

/* Stack copies of walked events whose walk is short, for CFI unwinding in user space. */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CP_STACK_COPY_RING);
} stack_copies SEC(".maps");

/*
 * Stack bytes copied with a walked event whose frame-pointer walk is short
 * or not judged yet (--stack-copy-bytes; at most CP_USTACK_BYTES); 0: no
 * copies, every walk counted as it is.
 */
#ifdef CP_DEFINE_SHARED
const volatile __u32 targ_stack_copy_bytes = 0;
struct cp_stack_copy_stats stack_copy_stats;
#endif

/*
 * One event in targ_stack_every has its stack walked and counted, each
 * count then worth targ_stack_every events (chosen at random, so shares stay
 * unbiased): the walk costs 0.3-0.8 us, a few times the rest of a sample's
 * path (docs/stacks.md). A sample the PMU says L1 served is walked
 * CP_STACK_HIT_FACTOR times more rarely (and counts for as many more):
 * most PMU samples are such hits, and their paths matter least. 1: every
 * event; 0: no stacks. Set by --stack-every; 1 here, so test programs count
 * every event.
 */
#ifdef CP_DEFINE_SHARED
const volatile __u32 targ_stack_every = 1;
#else
extern const volatile __u32 targ_stack_every;
#endif

/* What one event adds to its (tgid, stack, ip) counters. */
#define CP_STACK_SAMPLE (1u << 0)
#define CP_STACK_MISS	(1u << 1)
#define CP_STACK_TICK	(1u << 2)
#define CP_STACK_BP_HIT (1u << 3)
#define CP_STACK_L1_HIT (1u << 4) /* the sample's level is known: L1 */
#define CP_STACK_CHOOSE (1u << 5) /* cp_stack_counted() chooses (test programs) */

/* The events an event of @what stands for when chosen: 0 when none is. */
static __always_inline __u32 cp_stack_every_of(__u32 what)
{
	if (targ_stack_every <= 1)
		return targ_stack_every;
	return what & CP_STACK_L1_HIT ? targ_stack_every * CP_STACK_HIT_FACTOR : targ_stack_every;
}

/* True when an event of @what is to have its stack walked and counted. */
static __always_inline bool cp_stack_due(__u32 what)
{
	__u32 n = cp_stack_every_of(what);

	if (n <= 1)
		return n == 1;
	/* a random 32-bit r is under 2^32 / n one time in n: r * n < 2^32, no division */
	return ((__u64)bpf_get_prandom_u32() * n) >> 32 == 0;
}

/*
 * What one chosen event of @what with @weight adds to its stack's counts:
 * each count worth cp_stack_every_of() events (1 with every event walked).
 */
static __always_inline struct cp_stack_counts cp_stack_counts_of(__u32 what, __u64 weight)
{
	__u64 n = cp_stack_every_of(what) ?: 1;

	return (struct cp_stack_counts){
		.samples = what & CP_STACK_SAMPLE ? n : 0,
		.misses = what & CP_STACK_MISS ? n : 0,
		.lat_sum = weight * n,
		.ticks = what & CP_STACK_TICK ? n : 0,
		.bp_hits = what & CP_STACK_BP_HIT ? n : 0,
	};
}

/* What @what (CP_STACK_*) packs with @tgid into cp_stack_counted()'s second argument. */
#define CP_STACK_ARG(tgid, what) (((__u64)(what) << 32) | (__u32)(tgid))

/*
 * Counts one event on its stack: @id is what cp_stack_stored() returned
 * (a negative errno is counted as a drop), @tgid_what is CP_STACK_ARG(),
 * @weight a load latency or 0; each count is worth cp_stack_every_of()
 * events (cp_stack_due() chose this one: the caller did, or, with
 * CP_STACK_CHOOSE, this function does, before anything is counted). A
 * global function, defined once in
 * shared.bpf.c: the verifier checks it apart, once, and its callers see one
 * return value instead of its branches. Called inline, those branches
 * multiplied the states on_mem_sample's window loop is walked with past
 * the verifier's million instructions.
 */
#ifdef CP_DEFINE_SHARED
__noinline int cp_stack_counted(long id, __u64 tgid_what, __u64 ip, __u64 weight)
{
	struct cp_stack_key key = {.tgid = (__u32)tgid_what, .ip = ip};
	static const struct cp_stack_counts zero;
	__u32 what = tgid_what >> 32;
	struct cp_stack_counts *c, add;

	if ((what & CP_STACK_CHOOSE) && !cp_stack_due(what))
		return 0;
	if (id < 0) {
		if (id == -17 /* EEXIST */ || id == -12 /* ENOMEM */)
			__sync_fetch_and_add(&stats.drop_stack_map, 1);
		else
			__sync_fetch_and_add(&stats.no_ustack, 1);
		return 0;
	}
	key.stack_id = (__s32)id;
	c = bpf_map_lookup_elem(&stack_counts, &key);
	if (!c) {
		/* NOEXIST: another CPU may have created it meanwhile; keep theirs */
		bpf_map_update_elem(&stack_counts, &key, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&stack_counts, &key);
		if (!c) {
			__sync_fetch_and_add(&stats.drop_stack_counts, 1);
			return 0;
		}
	}
	/* made here, past the map calls: nothing more to keep across them on the stack */
	add = cp_stack_counts_of(what, weight);
	if (add.samples)
		__sync_fetch_and_add(&c->samples, add.samples);
	if (add.misses)
		__sync_fetch_and_add(&c->misses, add.misses);
	if (add.lat_sum)
		__sync_fetch_and_add(&c->lat_sum, add.lat_sum);
	if (add.ticks)
		__sync_fetch_and_add(&c->ticks, add.ticks);
	if (add.bp_hits)
		__sync_fetch_and_add(&c->bp_hits, add.bp_hits);
	return 1;
}
#else
extern int cp_stack_counted(long id, __u64 tgid_what, __u64 ip, __u64 weight);
#endif

/*
 * The user stack whose pc, frame pointer and stack pointer are @ip, @fp and
 * @sp (a user-mode frame), walked and kept in sample_stacks (cp_fp_walk_kept()):
 * its stack id or a negative errno. A global function: verified once, its
 * loops apart from its callers' states.
 */
#ifdef CP_DEFINE_SHARED
__noinline long cp_stack_stored(__u64 ip, __u64 fp, __u64 sp)
{
	return cp_fp_walk_kept(&sample_stacks, CP_MAX_SAMPLE_STACKS, ip, fp, sp);
}
#else
extern long cp_stack_stored(__u64 ip, __u64 fp, __u64 sp);
#endif

/* x86's user code segment of a 32-bit (compat) task: its frame records are 4-byte words */
#define CP_USER32_CS 0x23

/*
 * The current task's user stack at @ctx's (the interrupted) registers: its
 * stack id; -EFAULT when they are the kernel's (the callers count only
 * user-mode events). A 32-bit task's stack is its pc alone: the walk reads
 * 64-bit frame records.
 */
static __always_inline long cp_stack_id(struct bpf_perf_event_data *ctx)
{
	/* fixed-offset 8-byte loads, the only ctx reads the verifier allows: volatile, not narrowed
	 */
	__u64 cs = *(volatile __u64 *)&ctx->regs.cs;

	if ((cs & 3) != 3)
		return -14; /* EFAULT */
	return cp_stack_stored(ctx->regs.ip, cs == CP_USER32_CS ? 0 : ctx->regs.bp, ctx->regs.sp);
}

/*
 * For perf_event programs: one event in cp_stack_every_of() (cp_stack_due())
 * has its user stack at @ctx walked and counted (cp_stack_counted()); 1
 * when it was, else 0. Global like cp_stack_counted(), so that its caller
 * sees one return value whichever way the choice went; @ctx must be the
 * program's own context (the verifier checks a global function's context
 * argument by its type).
 */
#ifdef CP_DEFINE_SHARED
/*
 * Sends the walked event of stack @id as a copy (cacheperf/stack_copy.h)
 * when user space has not found @id's walk whole: 1 when it did, 0 when the
 * event is to be counted on its walk (whole, or the copies' ring is full).
 */
static __always_inline int cp_stack_copied(struct bpf_perf_event_data *ctx, long id,
					   __u64 tgid_what, __u64 ip, __u64 weight)
{
	__u32 key = (__u32)id;
	struct cp_sample_ustack_record *r;
	__u32 *kind;

	kind = bpf_map_lookup_elem(&stack_kinds, &key);
	if (kind && *kind == CP_STACK_KIND_WHOLE)
		return 0;
	r = bpf_ringbuf_reserve(&stack_copies, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&stack_copy_stats.ring_full, 1);
		return 0;
	}
	r->type = CP_REC_SAMPLE_USTACK;
	r->tgid = (__u32)tgid_what;
	r->stack_id = (__s32)id;
	r->__pad = 0;
	r->ip = ip;
	r->c = cp_stack_counts_of(tgid_what >> 32, weight);
	cp_ustack_fill(&r->u, (struct pt_regs *)&ctx->regs, (__u32)tgid_what,
		       PT_REGS_IP((struct pt_regs *)&ctx->regs),
		       PT_REGS_SP((struct pt_regs *)&ctx->regs), targ_stack_copy_bytes);
	bpf_ringbuf_submit(&r->type, cp_wakeup_flag_of(&stack_copies, CP_STACK_COPY_WAKEUP, 0, 0));
	__sync_fetch_and_add(&stack_copy_stats.copied, 1);
	return 1;
}

__noinline int cp_stack_walked(struct bpf_perf_event_data *ctx, __u64 tgid_what, __u64 ip,
			       __u64 weight)
{
	long id;

	if (!ctx || !cp_stack_due(tgid_what >> 32))
		return 0;
	id = cp_stack_id(ctx);
	if (id >= 0 && targ_stack_copy_bytes && cp_stack_copied(ctx, id, tgid_what, ip, weight))
		return 1;
	return cp_stack_counted(id, tgid_what, ip, weight);
}
#else
extern int cp_stack_walked(struct bpf_perf_event_data *ctx, __u64 tgid_what, __u64 ip,
			   __u64 weight);
#endif

#endif /* CACHEPERF_STACKS_BPF_H */
