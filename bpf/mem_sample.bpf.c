// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * on_mem_sample: every PEBS / IBS memory sample (and, in forward-all mode,
 * software-event samples) of a target process enters the pipeline of
 * mem_sample.bpf.h. Two variants read the sample data; user space loads the
 * one the kernel supports (user/live/mem_prog.c) and leaves the other unloaded.
 */
#include "mem_sample.bpf.h"
#include "sample_read.bpf.h"

/* Kernel >= 6.2. Weak, so the object still loads where only the compat variant runs. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;

/*
 * Fills what every variant knows from the context, the link and the current
 * task. The link's bpf_cookie is the event's enum cp_sample_event (5.15+;
 * older kernels leave it unknown and data_src alone decides).
 */
static __always_inline void cp_mem_sample_init(struct cp_mem_input *s,
					       struct bpf_perf_event_data *ctx, __u64 pid_tgid)
{
	struct cp_regs regs;

	s->tgid = pid_tgid >> 32;
	s->tid = (__u32)pid_tgid;
	s->cpu = bpf_get_smp_processor_id();
	s->size = 0;
	s->event = CP_SEV_UNKNOWN;
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_attach_cookie))
		s->event = (__u8)bpf_get_attach_cookie(ctx);
	/* fixed-offset 8-byte loads: the only ctx reads the verifier allows */
	__builtin_memcpy(&regs, &ctx->regs, sizeof(regs));
	cp_sample_read_regs(s, &regs);
	s->time_ns = bpf_ktime_get_ns();
	s->ticks = 0;
	s->stack_id = -1; /* read after the pipeline (cp_mem_sample_ctx()) */
}

SEC("perf_event")
int on_mem_sample(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_data_kern *kctx;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct perf_sample_data *data;
	struct cp_mem_input s;
	__u64 have;

	if (!cp_mem_wanted(pid_tgid >> 32))
		return 0;
	cp_mem_sample_init(&s, ctx, pid_tgid);
	kctx = bpf_cast_to_kern_ctx(ctx);
	data = kctx->data;
	/* the same rule as cp_sample_read_data(), with direct loads (6.2+ has sample_flags) */
	have = data->sample_flags;
	s.addr = have & PERF_SAMPLE_ADDR ? data->addr : 0;
	s.data_src = have & PERF_SAMPLE_DATA_SRC ? data->data_src.val : CP_MEM_NA_KERNEL;
	s.weight = have & CP_SAMPLE_WEIGHT_ANY ? data->weight.var1_dw : 0;
	cp_sample_read_ibs_rmw(&s, data, have);
	cp_mem_sample_ctx(&s, ctx);
	return 0;
}

SEC("perf_event")
int on_mem_sample_compat(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct perf_sample_data *data = NULL;
	struct cp_mem_input s;

	if (!cp_mem_wanted(pid_tgid >> 32))
		return 0;
	cp_mem_sample_init(&s, ctx, pid_tgid);
	/* the program context really is struct bpf_perf_event_data_kern */
	bpf_probe_read_kernel(&data, sizeof(data), &((struct bpf_perf_event_data_kern *)ctx)->data);
	cp_sample_read_data(&s, data);
	cp_mem_sample_ctx(&s, ctx);
	return 0;
}
