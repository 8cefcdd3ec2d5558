/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a perf_event memory sample carries, read into a struct cp_mem_input:
 * the interrupted registers and the kernel's struct perf_sample_data. The
 * perf_event programs (mem_sample.bpf.c) and the test program that feeds them
 * fake registers and sample data (mem_sample_test.bpf.c) share these, so the
 * test runs the reading itself.
 */
#ifndef CACHEPERF_SAMPLE_READ_BPF_H
#define CACHEPERF_SAMPLE_READ_BPF_H

#include "cacheperf.bpf.h"
#include "cacheperf/data_src.h"
#include "cacheperf/operand.h"
#include "cacheperf/soft_tick.h"

#define CP_SAMPLE_WEIGHT_ANY (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)

/*
 * IBS's raw record (perf_ibs_handle_irq(), arch/x86/events/amd/ibs.c): the
 * u32 caps, then the op registers from IbsOpCtl on: IbsOpCtl, IbsOpRip,
 * IbsOpData, IbsOpData2, IbsOpData3. In IbsOpData3, bit 0 is ld_op, bit 1
 * st_op.
 */
#define CP_IBS_RAW_OPDATA3 (4 + 4 * 8)
#define CP_IBS_LD_OP	   (1ULL << 0)
#define CP_IBS_ST_OP	   (1ULL << 1)

/*
 * An IBS read-modify-write op (ld_op and st_op both set) is reported as a
 * load, with the load's data source (perf_ibs_get_mem_op() tests ld_op
 * first). For sharing it is a store: it takes the line Modified. IbsOpData3
 * in the raw record tells; the op becomes a store, its level kept.
 */
static __always_inline void cp_sample_read_ibs_rmw(struct cp_mem_input *s,
						   const struct perf_sample_data *data, __u64 have)
{
	const struct perf_raw_record *raw;
	const __u8 *bytes;
	__u32 size;
	__u64 d3;

	if (s->event != CP_SEV_IBS || !(have & PERF_SAMPLE_RAW))
		return;
	raw = BPF_CORE_READ(data, raw);
	if (!raw)
		return;
	bytes = BPF_CORE_READ(raw, frag.data);
	size = BPF_CORE_READ(raw, frag.size);
	if (!bytes || size < CP_IBS_RAW_OPDATA3 + sizeof(d3) ||
	    bpf_probe_read_kernel(&d3, sizeof(d3), bytes + CP_IBS_RAW_OPDATA3))
		return;
	/* the op a store, as a mem-stores event's samples are: the level kept */
	if ((d3 & CP_IBS_LD_OP) && (d3 & CP_IBS_ST_OP))
		s->data_src = cp_data_src_for_event(CP_SEV_STORE, s->data_src);
}

/*
 * The sampled instruction: PEBS and IBS put its address in regs->ip and set
 * regs->cs from it (set_linear_ip() in arch/x86/events/intel/ds.c and
 * perf_ibs_handle_irq() in arch/x86/events/amd/ibs.c: __KERNEL_CS for a
 * kernel address). IBS before 6.14 cannot exclude the kernel (no swfilt),
 * so its samples of the target's system calls arrive here; they are
 * dropped in cp_mem_sample() (stats.kernel_ip).
 */
static __always_inline void cp_sample_read_regs(struct cp_mem_input *s, const struct cp_regs *r)
{
	s->ip = r->ip;
	s->kernel = !cp_soft_user_mode(r->cs);
}

/*
 * addr, data_src and weight from @data through CO-RE reads, each only when
 * the kernel says it is filled: since 6.1 perf_sample_data_init() leaves
 * them unwritten and data->sample_flags names the ones the PMU driver (or,
 * from 6.3, perf_prepare_sample() before the program runs) filled. IBS sets
 * PERF_SAMPLE_ADDR only with a valid linear address (dc_lin_addr_valid).
 * Before 6.1 (no sample_flags) perf_sample_data_init() set addr to 0,
 * data_src to NA and weight to 0, so all three are safe to read. s->event
 * must be set: an IBS op's raw record is read for read-modify-writes.
 */
static __always_inline void cp_sample_read_data(struct cp_mem_input *s,
						const struct perf_sample_data *data)
{
	__u64 have = ~0ULL, weight = 0;

	s->addr = 0;
	s->data_src = CP_MEM_NA_KERNEL;
	s->weight = 0;
	if (!data)
		return;
	if (bpf_core_field_exists(data->sample_flags))
		have = BPF_CORE_READ(data, sample_flags);
	if (have & PERF_SAMPLE_ADDR)
		s->addr = BPF_CORE_READ(data, addr);
	if (have & PERF_SAMPLE_DATA_SRC)
		s->data_src = BPF_CORE_READ(data, data_src.val);
	/* a __u64 before 5.12, then union perf_sample_weight: the latency is the low 32 bits */
	if (have & CP_SAMPLE_WEIGHT_ANY)
		bpf_core_read(&weight, sizeof(weight), &data->weight);
	s->weight = (__u32)weight;
	cp_sample_read_ibs_rmw(s, data, have);
}

#endif /* CACHEPERF_SAMPLE_READ_BPF_H */
