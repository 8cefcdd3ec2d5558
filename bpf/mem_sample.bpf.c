// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * on_mem_sample: every PEBS / IBS memory sample (and, in forward-all mode,
 * software-event samples) of a target process enters the pipeline of
 * mem_sample.bpf.h. Two variants read the sample data; user space loads the
 * one the kernel supports (user/live/mem_prog.c) and leaves the other unloaded.
 */
#include "mem_sample.bpf.h"

/* Kernel >= 6.2. Weak, so the object still loads where only the compat variant runs. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;

#define CP_SAMPLE_WEIGHT_ANY (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)

/* Fills what every variant knows from the context and the current task. */
static __always_inline void cp_mem_sample_init(struct cp_test_sample *s,
					       struct bpf_perf_event_data *ctx, __u64 pid_tgid)
{
	s->tgid = pid_tgid >> 32;
	s->tid = (__u32)pid_tgid;
	s->cpu = bpf_get_smp_processor_id();
	s->size = 0;
	s->__pad = 0;
	/* PEBS puts the sampled instruction's user registers here */
	s->ip = PT_REGS_IP(&ctx->regs);
	s->time_ns = bpf_ktime_get_ns();
}

SEC("perf_event")
int on_mem_sample(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_data_kern *kctx;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct perf_sample_data *data;
	struct cp_test_sample s;
	__u64 have;

	if (!cp_mem_wanted(pid_tgid >> 32))
		return 0;
	cp_mem_sample_init(&s, ctx, pid_tgid);
	kctx = bpf_cast_to_kern_ctx(ctx);
	data = kctx->data;
	/*
	 * Since 6.1 perf_sample_data_init() leaves data_src, weight and addr
	 * unset; sample_flags says which ones the PMU driver (or, from 6.3,
	 * perf_prepare_sample() before the program runs) filled in.
	 */
	have = data->sample_flags;
	s.addr = have & PERF_SAMPLE_ADDR ? data->addr : 0;
	s.data_src = have & PERF_SAMPLE_DATA_SRC ? data->data_src.val : CP_MEM_NA_KERNEL;
	/* the load latency is in the low 32 bits with WEIGHT and WEIGHT_STRUCT alike */
	s.weight = have & CP_SAMPLE_WEIGHT_ANY ? data->weight.var1_dw : 0;
	cp_mem_sample(&s);
	return 0;
}

SEC("perf_event")
int on_mem_sample_compat(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct perf_sample_data *data = NULL;
	struct cp_test_sample s;
	__u64 weight = 0;

	if (!cp_mem_wanted(pid_tgid >> 32))
		return 0;
	cp_mem_sample_init(&s, ctx, pid_tgid);
	s.addr = ctx->addr;
	/* the program context really is struct bpf_perf_event_data_kern */
	bpf_probe_read_kernel(&data, sizeof(data),
			      &((struct bpf_perf_event_data_kern *)ctx)->data);
	s.data_src = CP_MEM_NA_KERNEL;
	if (data) {
		/* before 6.1 perf_sample_data_init() set data_src to NA and weight to 0 */
		if (!bpf_core_field_exists(data->sample_flags) ||
		    (BPF_CORE_READ(data, sample_flags) & PERF_SAMPLE_DATA_SRC))
			s.data_src = BPF_CORE_READ(data, data_src.val);
		/* a __u64 before 5.12, then union perf_sample_weight: read 8 bytes */
		if (!bpf_core_field_exists(data->sample_flags) ||
		    (BPF_CORE_READ(data, sample_flags) & CP_SAMPLE_WEIGHT_ANY))
			bpf_core_read(&weight, sizeof(weight), &data->weight);
	}
	s.weight = (__u32)weight;
	cp_mem_sample(&s);
	return 0;
}
