/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The frame-pointer walk of user stacks in BPF (bpf/fp_walk.bpf.h: samples,
 * ticks, breakpoint hits and allocation sites) and the stack maps it keeps
 * them in, as pure rules that BPF and the unit tests share.
 *
 * The walk is the project's own, not bpf_get_stackid()'s: the kernel's walk
 * (perf_callchain_user()) reads the frame at whatever the last saved frame
 * pointer is, 0 included, and that read faults. A fault costs 4-5 us in this
 * VM, ten times a whole 10-frame walk. This walk stops where a frame pointer
 * cannot be one: null, misaligned, below the frame it came from (a chain
 * only goes up the stack), or past user space.
 *
 * A walk is kept once in its map under its bucket, a hash of its frames
 * masked to the map's power-of-two size; the bucket is the stack id. A
 * bucket held by another walk is never replaced (as in the kernel's stack
 * map without BPF_F_REUSE_STACKID), so an id never names two stacks while
 * something points at it: the walk goes to the next of its CP_STACK_PROBES
 * buckets, and is a drop (-EEXIST) only when all of them hold other walks.
 * User space deletes the ids nothing uses.
 */
#ifndef CACHEPERF_STACK_WALK_H
#define CACHEPERF_STACK_WALK_H

#include "cacheperf/abi.h"
#include "cacheperf/alloc.h"
#include "cacheperf/types.h"

_Static_assert((CP_MAX_SAMPLE_STACKS & (CP_MAX_SAMPLE_STACKS - 1)) == 0 &&
		       (CP_MAX_ALLOC_STACKS & (CP_MAX_ALLOC_STACKS - 1)) == 0,
	       "stack ids are a hash masked to the maps' sizes");
_Static_assert(CP_STACK_DEPTH == CP_ALLOC_STACK_DEPTH, "one walk fills both kinds of map");

/* Above the highest user address of x86-64 (5-level paging: 2^56 - one page). */
#define CP_USER_ADDR_END (1ull << 56)

/* One frame record: the caller's frame pointer, then the return address. */
struct cp_fp_frame {
	__u64 next;
	__u64 ret;
};

/*
 * True when @fp can be a frame record to read: not null, 8-byte aligned,
 * at or above @floor (the stack pointer for the first frame, the end of the
 * frame record before it after that) and its 16 bytes in user space.
 */
CP_INLINE bool cp_fp_frame_ok(__u64 fp, __u64 floor)
{
	return fp && !(fp & 7) && fp >= floor && fp < CP_USER_ADDR_END - sizeof(struct cp_fp_frame);
}

/*
 * The bucket (stack id) of a walk in a map of @buckets entries (a power of
 * two): its CP_STACK_DEPTH frames, zero past the last, mixed 64 bits at a
 * time (a multiply and a fold per frame; every frame, with no branch, so
 * that the verifier walks one way through).
 */
CP_INLINE __u32 cp_stack_bucket(const __u64 *pcs, __u32 buckets)
{
	__u64 h = 0x9e3779b97f4a7c15ull;

#ifdef __bpf__
#pragma unroll /* straight code: cheaper to verify than a loop's iterations */
#endif
	for (int i = 0; i < CP_STACK_DEPTH; i++) {
		h = (h ^ pcs[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h *= 0xc4ceb9fe1a85ec53ull;
	return (__u32)(h >> 32) & (buckets - 1);
}

/*
 * The buckets a walk may take, its hash's first (cp_stack_bucket()): with
 * n of the map's b buckets held, all of them are with odds (n/b)^4, where
 * one bucket alone lost a stack with odds n/b (one in 270 for a short run's
 * ~60 stacks, all of its events). Four: each costs a failed insert and a
 * compare, only where the buckets before were held.
 */
#define CP_STACK_PROBES 4

/* Probe @k (0 .. CP_STACK_PROBES - 1) of a walk whose first bucket is @home. */
CP_INLINE __u32 cp_stack_probe(__u32 home, __u32 k, __u32 buckets)
{
	return (home + k) & (buckets - 1);
}

#endif /* CACHEPERF_STACK_WALK_H */
