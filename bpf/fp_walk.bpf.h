/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one frame-pointer walk of user stacks (the rules in
 * cacheperf/stack_walk.h), for the samples' stacks (bpf/stacks.bpf.h) and
 * the allocation sites' (bpf/alloc.bpf.c): each keeps its walks in a hash
 * map of CP_STACK_DEPTH frames under the walk's bucket, read by user space
 * as it read the kernel's stack maps before (frames zero past the last).
 */
#ifndef CACHEPERF_FP_WALK_BPF_H
#define CACHEPERF_FP_WALK_BPF_H

#include "cacheperf.bpf.h"
#include "cacheperf/stack_walk.h"

/*
 * A walk in the making, per CPU. busy: a program that interrupts a walk on
 * its CPU finds it taken, with plain stores: the interrupting program runs to
 * its end before the interrupted one goes on (perf_event programs run in NMI
 * or interrupt context; uprobe and tracepoint programs are not preempted on
 * these kernels, PREEMPT_NONE, and under full preemption a task preempted
 * between the test and the store could share the walk with another).
 */
struct cp_stack_walk {
	__u64 pcs[CP_STACK_DEPTH];
	__u32 busy;
	__u32 __pad;
};

CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_stack_walk);
} stack_walks SEC(".maps");

/*
 * Walks the user stack whose pc, frame pointer and stack pointer are @ip,
 * @fp and @sp (a user-mode frame) by frame pointers, at most CP_STACK_DEPTH
 * frames, into this CPU's walk, which it marks busy: the walk, or NULL with
 * *@err set, -EFAULT (no pc), -ENOMEM, -EBUSY (a walk on this CPU was
 * interrupted). cp_fp_walk_keep() keeps it and frees it. Apart from the keep
 * so that a caller choosing among maps has the loop verified once, not once
 * per map.
 */
static __always_inline struct cp_stack_walk *cp_fp_walk(__u64 ip, __u64 fp, __u64 sp, long *err)
{
	struct cp_stack_walk *w;
	struct cp_fp_frame f;
	__u32 zero = 0;
	int i;

	*err = -14; /* EFAULT */
	if (!ip)
		return NULL;
	*err = -12; /* ENOMEM */
	w = bpf_map_lookup_elem(&stack_walks, &zero);
	if (!w)
		return NULL;
	*err = -16; /* EBUSY */
	if (w->busy)
		return NULL;
	w->busy = 1;
	/*
	 * Loops with one way through where they can: the verifier walks every
	 * iteration of each, in each program that calls this, and a loop that
	 * ends on a value kept after it multiplies the states of what follows
	 */
	__builtin_memset(w->pcs, 0, sizeof(w->pcs));
	w->pcs[0] = ip;
	for (i = 1; i < CP_STACK_DEPTH; i++) {
		if (!cp_fp_frame_ok(fp, sp) || bpf_probe_read_user(&f, sizeof(f), (void *)fp) ||
		    !f.ret)
			break;
		w->pcs[i] = f.ret;
		sp = fp + sizeof(f);
		fp = f.next;
	}
	return w;
}

/*
 * Keeps walk @w (cp_fp_walk()) in @map (@buckets entries, a power of two,
 * keys __u32 buckets, values CP_STACK_DEPTH frames) and frees @w: the
 * first of its CP_STACK_PROBES buckets (cp_stack_probe()) that holds it or
 * was free, or -EEXIST (each holds another stack), -ENOMEM. One bucket
 * alone lost every event of a stack whose bucket an earlier stack held:
 * ~60 stacks of a short run take one in 270 of 16384 buckets, so a path's
 * whole share went now and then (test_callers' path_a, 512 faults).
 */
static __always_inline long cp_fp_walk_keep(struct cp_stack_walk *w, void *map, __u32 buckets)
{
	__u32 home = cp_stack_bucket(w->pcs, buckets), id = home;
	long ret = -17; /* EEXIST */
	__u64 *have, differ;
	int i, k;

#pragma unroll
	for (k = 0; k < CP_STACK_PROBES; k++) {
		id = cp_stack_probe(home, k, buckets);
		ret = bpf_map_update_elem(map, &id, w->pcs, BPF_NOEXIST);
		if (ret != -17 /* EEXIST */)
			break;
		/* kept before, by this stack or another: the frames say which */
		have = bpf_map_lookup_elem(map, &id);
		differ = !have;
		if (have) {
#pragma unroll
			for (i = 0; i < CP_STACK_DEPTH; i++)
				differ |= have[i] ^ w->pcs[i];
		}
		if (!differ) {
			ret = 0;
			break;
		}
	}
	w->busy = 0;
	if (ret)
		return ret == -17 ? -17 : -12;
	return id;
}

/*
 * The walk of cp_fp_walk() kept in @map (cp_fp_walk_keep()): its bucket or a
 * negative errno. Inline: called from one global function per map.
 */
static __always_inline long cp_fp_walk_kept(void *map, __u32 buckets, __u64 ip, __u64 fp, __u64 sp)
{
	long err;
	struct cp_stack_walk *w = cp_fp_walk(ip, fp, sp, &err);

	return w ? cp_fp_walk_keep(w, map, buckets) : err;
}

#endif /* CACHEPERF_FP_WALK_BPF_H */
