/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel <-> user ABI of breakpoint sampling (bpf/breakpoint.bpf.c,
 * paper §3.3), and the pure settle rule it applies.
 *
 * Arming an instruction is two steps for user space: put a struct cp_bp_insn
 * (its decoded operand, everything else zero) into the `bp_insns` map under
 * {tgid, ip}, then open HW_BREAKPOINT_X perf events at ip with on_breakpoint
 * attached (per thread with inherit, or per CPU). Disarming is the reverse:
 * close the events, read the entry, delete it. Each hit appends the exact
 * address to the entry's history until CP_BP_HISTORY accesses were seen
 * (state CP_BP_FULL) or CP_BP_SETTLE_RUN consecutive ones settled it as a
 * conflict (CP_BP_CONFLICT); either transition sends one struct cp_bp_event
 * so user space can disarm at once. Hits after that only count as late.
 */
#ifndef CACHEPERF_BREAKPOINT_H
#define CACHEPERF_BREAKPOINT_H

#include "cacheperf/types.h"
#include "cacheperf/abi.h"
#include "cacheperf/operand.h"

#define CP_BP_HISTORY	 64  /* accesses kept per instruction (paper §3.3) */
#define CP_BP_SETTLE_RUN 8   /* consecutive same-set accesses that settle a conflict, at least */
#define CP_BP_SETTLE_MAX 17  /* ... at most: a 16-way L1, plus one */
#define CP_BP_MAX_SETS	 128 /* L1 sets the per-set counts cover (64 on current x86) */
/* armed instructions at once: 4 debug registers per task, several targets, slack for disarming */
#define CP_MAX_BP_INSNS 64

_Static_assert((CP_BP_HISTORY & (CP_BP_HISTORY - 1)) == 0, "history slots are masked");

/* Where an armed instruction stands (cp_bp_insn.state, cp_bp_event.kind). */
enum cp_bp_state {
	CP_BP_ARMED = 0,    /* collecting */
	CP_BP_FULL = 1,	    /* CP_BP_HISTORY accesses collected without settling */
	CP_BP_CONFLICT = 2, /* settled early: a run of accesses on one set */
};

/* One access seen by a breakpoint. time_ns is written last: 0 means not yet written. */
struct cp_bp_access {
	__u64 addr;    /* effective address */
	__u64 time_ns; /* bpf_ktime_get_ns() */
	__u32 tid;
	__u32 set; /* L1 set of addr (targ_l1_line_bytes, targ_l1_sets) */
};
_Static_assert(sizeof(struct cp_bp_access) == 24, "struct cp_bp_access is ABI");

/* Value of the bp_insns map, key struct cp_ip_key {tgid, ip}. */
struct cp_bp_insn {
	struct cp_operand op; /* written by user space when arming */
	__u32 state;	      /* enum cp_bp_state */
	__u32 claimed;	      /* history slots claimed; may pass CP_BP_HISTORY by racing hits */
	__u32 late;	      /* hits after the instruction was full or settled */
	__u32 uncomputable;   /* hits whose address could not be computed */
	__u64 last_ns;	      /* time of the latest hit: expiry is decided on it */
	__u32 set_counts[CP_BP_MAX_SETS];	 /* recorded accesses per L1 set */
	struct cp_bp_access hist[CP_BP_HISTORY]; /* in claim order */
};
_Static_assert(sizeof(struct cp_bp_insn) == 24 + 24 + CP_BP_MAX_SETS * 4 + CP_BP_HISTORY * 24,
	       "struct cp_bp_insn is ABI");

/* Ring-buffer record CP_REC_BP: an armed instruction is done, disarm it. */
struct cp_bp_event {
	__u32 type; /* CP_REC_BP */
	__u32 kind; /* CP_BP_FULL or CP_BP_CONFLICT */
	__u32 tgid;
	__u32 set; /* CP_BP_CONFLICT: the set of the run */
	__u64 ip;
	__u64 time_ns;
};
_Static_assert(sizeof(struct cp_bp_event) == 32, "struct cp_bp_event is ABI");

/* The L1 set of @addr; 0 for a degenerate geometry. */
CP_INLINE __u32 cp_l1_set(__u64 addr, __u32 line_bytes, __u32 sets)
{
	if (!line_bytes || !sets)
		return 0;
	return (__u32)((addr / line_bytes) % sets);
}

/*
 * The run that settles a conflict on an L1 of @ways: one line more than the
 * set holds (the classifier's rule, DESIGN.md), and never fewer than the
 * paper's 8.
 */
CP_INLINE __u32 cp_bp_settle_run(__u32 ways)
{
	__u32 run = ways + 1;

	if (run < CP_BP_SETTLE_RUN)
		run = CP_BP_SETTLE_RUN;
	return run > CP_BP_SETTLE_MAX ? CP_BP_SETTLE_MAX : run;
}

/*
 * The settle rule: true when the @run (cp_bp_settle_run()) accesses ending at history
 * slot @last are all written, land on one L1 set, and each is on a line of
 * its own. Paper §3.3 settles on "8 continuous accesses on the same set";
 * the distinct-line condition is ours: a sequential walk touches one line 8
 * times in a row with 8-byte elements, which is one line (hits), not a
 * conflict. Claim order is the order of the run; a slot another CPU has not
 * written yet fails the test, so racing threads may delay a settle, never
 * fake one.
 */
CP_INLINE bool cp_bp_conflict_run(const struct cp_bp_access *hist, __u32 last, __u32 line_bytes,
				  __u32 run)
{
	__u64 lines[CP_BP_SETTLE_MAX];
	__u32 set;

	if (run > CP_BP_SETTLE_MAX)
		run = CP_BP_SETTLE_MAX;
	if (last + 1 < run || last >= CP_BP_HISTORY || !line_bytes)
		return false;
	set = hist[last].set;
	for (__u32 i = 0; i < CP_BP_SETTLE_MAX; i++) {
		if (i >= run)
			break;
		const struct cp_bp_access *a = &hist[(last - i) & (CP_BP_HISTORY - 1)];

		if (!a->time_ns || a->set != set)
			return false;
		lines[i] = a->addr / line_bytes;
		for (__u32 j = 0; j < i; j++)
			if (lines[j] == lines[i])
				return false;
	}
	return true;
}

#endif /* CACHEPERF_BREAKPOINT_H */
