// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * on_breakpoint: a HW_BREAKPOINT_X event fired on an armed instruction
 * (paper §3.3). The trap comes before the instruction runs, so the
 * registers in ctx are the ones it will use and its address is exact:
 * cp_operand_ea() of the operand user space decoded when arming. The access
 * goes into the instruction's history (cacheperf/breakpoint.h), which
 * settles as a conflict on a run of accesses on one L1 set.
 *
 * Not loaded unless asked for ("?perf_event"): the sampling runs never see
 * it. Built with -mcpu=v3 (see the Makefile) for the atomic fetch-and-add
 * and compare-and-swap that claim slots and change state, which need 5.12;
 * only this program uses them.
 */
#include "cpu_cost.bpf.h"
#include "stacks.bpf.h"
#include "cacheperf/breakpoint.h"

_Static_assert(sizeof(struct cp_regs) == sizeof(struct pt_regs), "cp_regs is pt_regs");
_Static_assert(__builtin_offsetof(struct cp_regs, ip) == __builtin_offsetof(struct pt_regs, ip),
	       "cp_regs is pt_regs");
_Static_assert(__builtin_offsetof(struct cp_regs, sp) == __builtin_offsetof(struct pt_regs, sp),
	       "cp_regs is pt_regs");

/* Armed instructions: {tgid, ip} -> state. Entries only from user space: no preallocation. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_BP_INSNS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cp_ip_key);
	__type(value, struct cp_bp_insn);
} bp_insns SEC(".maps");

struct cp_bp_stats bp_stats;
/* L1 data cache geometry for the set of each access (user/machine/geometry.h) */
const volatile __u32 targ_l1_line_bytes = 64;
const volatile __u32 targ_l1_sets = 64;
const volatile __u32 targ_l1_ways = 8;

static __always_inline void cp_bp_done(__u32 tgid, __u64 ip, __u32 kind, __u32 set, __u64 now)
{
	struct cp_cpu_cost *cost;
	struct cp_bp_event *e;

	e = cp_events_reserve(sizeof(*e), CP_RINGBUF_FILL_SAMPLES);
	if (!e) {
		__sync_fetch_and_add(&bp_stats.drop_ringbuf, 1);
		return;
	}
	e->type = CP_REC_BP;
	e->kind = kind;
	e->tgid = tgid;
	e->set = set;
	e->ip = ip;
	e->time_ns = now;
	/*
	 * Wake the reader now, past wakeup.bpf.h's limits: samples before it
	 * wake it only per batch and at most once a millisecond, and until user
	 * space disarms the breakpoint every further hit costs a trap (~10 us)
	 * for nothing. Once per history.
	 */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	cost = cp_cpu_cost();
	if (cost)
		cost->wakeups++;
}

SEC("?perf_event")
int on_breakpoint(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now, ea, seg_base = 0;
	struct cp_ip_key key = {.tgid = pid_tgid >> 32, .__pad = 0};
	struct cp_cpu_cost *cost;
	struct cp_bp_access *a;
	struct cp_bp_insn *v;
	struct cp_regs regs;
	__u32 idx, set;

	__sync_fetch_and_add(&bp_stats.hits, 1);
	cost = cp_cpu_cost();
	if (cost)
		cost->bp_hits++;
	/* fixed-offset 8-byte loads: the only ctx reads the verifier allows */
	__builtin_memcpy(&regs, &ctx->regs, sizeof(regs));
	key.ip = regs.ip;
	v = bpf_map_lookup_elem(&bp_insns, &key);
	if (!v) {
		__sync_fetch_and_add(&bp_stats.not_armed, 1);
		return 0;
	}
	/* every hit of an armed instruction, settled or not: its callers (stacks.bpf.h) */
	cp_stack_walked(ctx, CP_STACK_ARG(key.tgid, CP_STACK_BP_HIT), key.ip, 0);
	if (v->state != CP_BP_ARMED) {
		__sync_fetch_and_add(&v->late, 1);
		__sync_fetch_and_add(&bp_stats.late, 1);
		return 0;
	}
	if (v->op.seg != CP_SEG_NONE)
		seg_base = cp_seg_base(v->op.seg);
	if (cp_operand_ea(&v->op, &regs, seg_base, &ea)) {
		__sync_fetch_and_add(&v->uncomputable, 1);
		__sync_fetch_and_add(&bp_stats.uncomputable, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	v->last_ns = now;
	idx = __sync_fetch_and_add(&v->claimed, 1);
	if (idx >= CP_BP_HISTORY) {
		/* another CPU took the last slot between our state check and here */
		__sync_fetch_and_add(&v->late, 1);
		__sync_fetch_and_add(&bp_stats.late, 1);
		return 0;
	}
	set = cp_l1_set(ea, targ_l1_line_bytes, targ_l1_sets);
	a = &v->hist[idx & (CP_BP_HISTORY - 1)];
	a->addr = ea;
	a->tid = (__u32)pid_tgid;
	a->set = set;
	/* time last: it marks the slot written for cp_bp_conflict_run() on other CPUs */
	asm volatile("" ::: "memory");
	a->time_ns = now;
	if (set < CP_BP_MAX_SETS)
		__sync_fetch_and_add(&v->set_counts[set], 1);
	__sync_fetch_and_add(&bp_stats.recorded, 1);

	if (cp_bp_conflict_run(v->hist, idx, targ_l1_line_bytes, cp_bp_settle_run(targ_l1_ways))) {
		if (__sync_val_compare_and_swap(&v->state, CP_BP_ARMED, CP_BP_CONFLICT) ==
		    CP_BP_ARMED)
			cp_bp_done(key.tgid, key.ip, CP_BP_CONFLICT, set, now);
	} else if (idx == CP_BP_HISTORY - 1) {
		if (__sync_val_compare_and_swap(&v->state, CP_BP_ARMED, CP_BP_FULL) == CP_BP_ARMED)
			cp_bp_done(key.tgid, key.ip, CP_BP_FULL, 0, now);
	}
	return 0;
}
