// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test entry points into the memory-sample pipeline. BPF_PROG_TEST_RUN cannot
 * run perf_event programs, so these take a synthetic struct cp_mem_input and
 * call the same cp_mem_sample(). Both are "?": not loaded unless a test or a
 * benchmark turns autoload on, so production never loads them (and kernels
 * without syscall programs, < 5.14, still load the rest).
 *
 * Their samples are synthetic, not the current task's: -a's checks of the
 * current task (kernel thread, --cgroup) are left out, and syscall programs
 * may not call bpf_current_task_under_cgroup anyway.
 */
#define CP_SYNTHETIC_SAMPLES
#include "mem_sample.bpf.h"
#include "sample_read.bpf.h"

/* A struct perf_sample_data as the kernel would fill it, written by the test. */
char cp_fake_sample_data[CP_FAKE_SAMPLE_DATA] SEC(".bss") __attribute__((aligned(64)));
/* Its raw record, pointed to by the program; the bytes are the test's (IBS's layout). */
char cp_fake_raw_record[64] SEC(".bss") __attribute__((aligned(8)));
__u8 cp_fake_ibs_raw[CP_FAKE_IBS_RAW] SEC(".bss") __attribute__((aligned(8)));

/*
 * The perf_event programs' reading of a sample (sample_read.bpf.h) on fake
 * registers and sample data: what cannot be test-run in them directly.
 */
SEC("?syscall")
int test_sample_read(struct cp_sample_read_ctx *ctx)
{
	struct cp_mem_input s = {0};
	struct cp_regs regs;

	__builtin_memcpy(&regs, &ctx->regs, sizeof(regs));
	if (ctx->with_raw) {
		struct perf_sample_data *d = (void *)cp_fake_sample_data;
		struct perf_raw_record *r = (void *)cp_fake_raw_record;
		/* perf_raw_frag is packed: plain stores would be split in halves */
		__u32 data_off = bpf_core_field_offset(r->frag.data);
		__u32 size_off = bpf_core_field_offset(r->frag.size);

		*(void **)(cp_fake_raw_record + (data_off & 31)) = cp_fake_ibs_raw;
		*(__u32 *)(cp_fake_raw_record + (size_off & 31)) = sizeof(cp_fake_ibs_raw);
		d->raw = r;
	}
	s.event = (__u8)ctx->event;
	cp_sample_read_regs(&s, &regs);
	cp_sample_read_data(&s, (const struct perf_sample_data *)cp_fake_sample_data);
	ctx->out = s;
	return 0;
}

/* The sample is the context; returns the number of records written. */
SEC("?syscall")
int test_mem_sample(struct cp_mem_input *ctx)
{
	struct cp_mem_input s = *ctx;

	if (!cp_mem_wanted(s.tgid))
		return 0;
	return cp_mem_sample(&s);
}

/*
 * The same for the overhead benchmark: syscall programs refuse `repeat`,
 * sched_cls ones accept it, so the kernel times a million runs itself. The
 * sample is the packet (data_in).
 */
SEC("?tc")
int bench_mem_sample(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct cp_mem_input s;

	if (data + sizeof(s) > end)
		return 0;
	__builtin_memcpy(&s, data, sizeof(s));
	if (!cp_mem_wanted(s.tgid))
		return 0;
	return cp_mem_sample(&s);
}

/*
 * The user stack walk and its counting as the perf_event programs do them,
 * for the benchmark (tests/bench/bpf_sample_cost.c): raw tracepoint programs
 * can be test-run, and walk the caller's user stack from its system call's
 * registers, as deep as the caller made it. Timed by the kernel's run-time
 * stats (test runs of raw tracepoints take no `repeat`).
 */
SEC("?raw_tp")
int bench_stack_walk(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	long id = cp_stack_stored(BPF_CORE_READ(regs, ip), BPF_CORE_READ(regs, bp),
				  BPF_CORE_READ(regs, sp));

	return cp_stack_counted(id, CP_STACK_ARG(tgid, CP_STACK_SAMPLE | CP_STACK_MISS), 0x401000,
				30);
}

/*
 * The walk from the registers a test names (tests/bpf/test_stacks_live.c):
 * args[0..2] are the pc, frame pointer and stack pointer, in the test
 * process's memory; the return value is cp_stack_stored()'s.
 */
SEC("?raw_tp")
int test_stack_walk(struct bpf_raw_tracepoint_args *ctx)
{
	return cp_stack_stored(ctx->args[0], ctx->args[1], ctx->args[2]);
}
