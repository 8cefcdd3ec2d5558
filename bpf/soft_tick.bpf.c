// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * on_tick: the no-PMU source (--source soft). A per-CPU cpu-clock event
 * (PERF_COUNT_SW_CPU_CLOCK, --soft-freq per CPU) interrupts whatever runs;
 * for a target interrupted in user mode the tick counts time on the
 * interrupted instruction (memory access or not: the time profile) and,
 * when user space has decoded that instruction's memory operand
 * (soft_insns), becomes a memory sample: the instruction has not run yet,
 * so cp_operand_ea() of the tick's registers is its exact address, as in
 * on_breakpoint. The sample goes down the forward-every-sample path of
 * mem_sample.bpf.h with the access size and read/write, no cache level.
 *
 * Skid: a tick is taken after the instruction that stalled, so it lands on
 * the one after a missing load. When user space found that the one before
 * the ticked instruction is an access whose address registers it left
 * intact (user/decode/skid.h), the descriptor carries
 * that access and its ip (charge_ip): the tick's time and sample go to the
 * access, at the address it used - exact, as the ticked instruction has
 * not run yet. When the access overwrote its own base (`mov -8(%rbp),%rax;
 * mov (%rax),%rax`, pointer loads of unoptimised code, a global pointer
 * followed), the descriptor says where the base was loaded from just
 * before (CP_OPND_F_BASE_LOADED): the tick reads those 8 bytes of the
 * target (a stack slot, a global) for the base. When it overwrote a register
 * of its address in a loop whose way back to it leaves the base alone
 * (CP_OPND_F_NEXT_RUN: a chase), the tick's registers give the address it
 * loads from next: cp_operand_ea() extends and shifts the index as the way
 * back does.
 *
 * An instruction not decoded yet is queued once in soft_pending for user
 * space (user/live/soft_source.c), which notes it the first time and, when it
 * is queued again by a later tick, installs a descriptor or a "no memory
 * operand" marker. A plain hash, not an LRU: an LRU would evict silently,
 * and a full table must be counted (stats.drop_pending); the ip is queued
 * again at its next tick anyway.
 *
 * Each tick reads the user stack once (stacks.bpf.h): a memory sample
 * counts the tick with the sample, another tick the time alone.
 *
 * Not loaded unless --source soft ("?perf_event").
 */
#include "mem_sample.bpf.h"
#include "cacheperf/soft_tick.h"

/* Decoded instructions: {tgid, ip} -> descriptor or marker. Written by user space only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_SOFT_INSNS);
	__type(key, struct cp_ip_key);
	__type(value, struct cp_soft_insn);
} soft_insns SEC(".maps");

/* Instructions waiting to be decoded, taken (and deleted) by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_SOFT_PENDING);
	__type(key, struct cp_ip_key);
	__type(value, struct cp_soft_pending);
} soft_pending SEC(".maps");

/* Queues @key for decoding, once: a second tick finds it there (EEXIST). */
static __always_inline void cp_soft_queue(const struct cp_ip_key *key, __u64 mm, __u64 now)
{
	struct cp_soft_pending v = {.mm = mm, .time_ns = now};
	long ret;

	ret = bpf_map_update_elem(&soft_pending, key, &v, BPF_NOEXIST);
	if (!ret)
		cp_add(&stats.soft_queued, 1);
	else if (ret != -17 /* EEXIST */)
		cp_add(&stats.drop_pending, 1);
}

/* A tick: 1 when it landed on a target (counted in cpu_costs.ticks), else 0. */
static __always_inline int tick(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), mm, ea, seg_base = 0;
	struct cp_ip_key key = {.tgid = pid_tgid >> 32, .__pad = 0}, at;
	struct cp_mem_input s;
	struct cp_soft_insn *v;
	struct cp_ip_counts *c;
	struct cp_cpu_cost *cost;
	struct cp_regs regs;

	if (!cp_mem_wanted(key.tgid))
		return 0; /* not a target's: no tick of the budget's */
	cost = cp_cpu_cost();
	if (cost)
		cost->ticks++;
	/* fixed-offset 8-byte loads: the only ctx reads the verifier allows */
	__builtin_memcpy(&regs, &ctx->regs, sizeof(regs));
	/* a tick in a system call or an interrupt: kernel time, no user instruction */
	if (!cp_soft_user_mode(regs.cs)) {
		cp_add(&stats.ticks_kernel, 1);
		return 1;
	}
	key.ip = regs.ip;
	at = key;
	cp_add(&stats.ticks, 1);
	mm = (__u64)bpf_get_current_task_btf()->mm;
	v = bpf_map_lookup_elem(&soft_insns, &key);
	if (v && v->mm != mm)
		v = NULL; /* decoded in the address space before an exec */
	if (v && v->charge_ip) {
		/* skid: the time and the sample are the access's before it */
		at.ip = v->charge_ip;
		regs.ip = v->charge_ip;
		cp_add(&stats.ticks_skid, 1);
	}
	c = cp_ip_counts_get(&at);
	if (c)
		cp_add(&c->ticks, 1);
	if (!v) {
		cp_soft_queue(&key, mm, bpf_ktime_get_ns());
		goto tick_only;
	}
	if (v->op.status != CP_OPND_OK)
		goto tick_only;
	if (v->op.seg != CP_SEG_NONE)
		seg_base = cp_seg_base(v->op.seg);
	if (v->op.flags & CP_OPND_F_BASE_LOADED) {
		/* the access overwrote its base: the slot it was loaded from holds it still */
		__u64 base;

		/* not there (paged out: no fault here): the time alone */
		if (bpf_probe_read_user(&base, sizeof(base),
					(void *)cp_operand_base_slot(&v->op, &regs)))
			goto tick_only;
		cp_operand_ea_from(&v->op, &regs, base, seg_base, &ea);
	} else if (cp_operand_ea(&v->op, &regs, seg_base, &ea)) {
		goto tick_only;
	}
	s.tgid = at.tgid;
	s.tid = (__u32)pid_tgid;
	s.cpu = bpf_get_smp_processor_id();
	s.size = v->op.size;
	s.event = CP_SEV_UNKNOWN;
	s.kernel = 0;
	s.ip = at.ip;
	s.addr = ea;
	s.data_src = cp_soft_data_src(v->op.access);
	s.weight = 0;
	s.time_ns = bpf_ktime_get_ns();
	s.ticks = 1; /* the pipeline counts the tick with the sample on the stack */
	cp_mem_sample_ctx(&s, ctx);
	return 1;
tick_only:
	/* no memory sample: the time alone, on the stack that spent it */
	cp_stack_walked(ctx, CP_STACK_ARG(at.tgid, CP_STACK_TICK), at.ip, 0);
	return 1;
}

/*
 * The program: a target's tick's run time is timed in it and counted
 * with the tick's unit cost (budget/budget.h: the calibration's tick is a
 * bare cpu-clock event's, without this program).
 */
SEC("?perf_event")
int on_tick(struct bpf_perf_event_data *ctx)
{
	__u64 t0 = bpf_ktime_get_ns();
	struct cp_cpu_cost *c;

	if (tick(ctx) && (c = cp_cpu_cost()))
		c->tick_prog_ns += bpf_ktime_get_ns() - t0;
	return 0;
}
