/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perf_event_attr for memory-access sampling on a detected PMU. Pure: the
 * precise_ip probe and the per-instance period jitter are applied by
 * perf_events.c through event_spec.h.
 *
 * Choices, each the reason for a field:
 *  - sample_type IP|TID|ADDR|DATA_SRC|WEIGHT. The BPF program reads the
 *    kernel's perf_sample_data, which drivers fill only for requested bits.
 *    PERF_SAMPLE_WEIGHT, not WEIGHT_STRUCT: with WEIGHT the adaptive-PEBS
 *    code stores the cache (load-to-use) latency in weight.full on every
 *    Intel part, including Alder Lake/Sapphire Rapids where WEIGHT_STRUCT
 *    would split it into var1_dw (cache latency) and var2_w (instruction
 *    latency, which we do not use); IBS likewise puts DcMissLat in
 *    weight.full. WEIGHT_STRUCT also needs 5.12 and the two bits together
 *    are EINVAL, so one layout for BPF to read is both simpler and portable.
 *  - wakeup_events = 1: otherwise intel_pmu_hw_config() enables large PEBS
 *    for fixed-period events, the hardware batches records and only the
 *    last of each batch reaches the overflow handler, i.e. BPF.
 *  - exclude_kernel = exclude_hv = 1 on PEBS. IBS before 6.14 has no
 *    exclusion at all (PERF_PMU_CAP_NO_EXCLUDE: any exclude_* is EINVAL);
 *    where ibs_op/format/swfilt exists we set it and exclude_kernel, else
 *    kernel samples arrive and BPF must drop kernel IPs.
 *  - IBS adds PERF_SAMPLE_RAW: IbsOpData3 in the raw record is the only
 *    way to tell a read-modify-write op, which the kernel reports as a load,
 *    from a load (bpf/sample_read.bpf.h). The program returns 0, so the
 *    record is never copied to a buffer.
 *  - IBS counts dispatched ops (format cnt_ctl = 1) rather than cycles, so
 *    the period is "one op in N"; N is the load period times
 *    CP_IBS_OPS_PER_LOAD, rounded to a multiple of 16 (the low 4 bits of
 *    IbsOpMaxCnt do not exist).
 *  - Intel parts with events/mem-loads-aux (Sapphire Rapids, Alder Lake
 *    P-cores) refuse a DATA_SRC mem-loads event that is not in a group led
 *    by that event (-ENODATA, intel_pmu_hw_config). The leader here only
 *    counts (sample_period 0, never sampled) and starts enabled, so the group
 *    runs as soon as the sampling member is enabled by the BPF attach.
 *  - Sampling events start disabled: libbpf's attach enables them once the
 *    program is attached, so no sample is taken with no program to see it.
 *  - inherit is set by perf_events.c for per-thread events only.
 */
#ifndef CP_PMU_ATTR_H
#define CP_PMU_ATTR_H

#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "machine/event_spec.h"
#include "machine/pmu.h"

#define CP_MEM_SAMPLE_TYPE                                                                         \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |              \
	 PERF_SAMPLE_WEIGHT)
#define CP_JITTER_PCT_DEFAULT 10 /* +-10 %, paper §3.1 */
#define CP_IBS_PERIOD_ALIGN   16 /* IbsOpMaxCnt counts in units of 16 ops */
/* ibs_op max_period without the OPCNTEXT extension: IBS_OP_MAX_CNT << 4 */
#define CP_IBS_MAX_PERIOD 0xffff0ull
/*
 * Dispatched ops per load: IBS samples one op in N of every kind, PEBS one
 * load in N. Loads are about a quarter of the ops of ordinary code (integer
 * SPEC CPU: ~25 % loads, ~10 % stores), so --load-period N becomes one op in
 * 4 N: the same density of load samples, not four times it.
 */
#define CP_IBS_OPS_PER_LOAD 4
/* x86 counters take 31-bit periods unless full-width writes are supported */
#define CP_PEBS_MAX_PERIOD ((1ull << 31) - 1)

struct cp_sampling_cfg {
	__u32 ldlat_cycles; /* --ldlat: replaces the ldlat of events/mem-loads */
	__u64 load_period;  /* --load-period: one load in N (IBS: one op in N) */
	__u64 store_period; /* --store-period: one store in N */
	__u32 jitter_pct;   /* per-CPU/per-thread period spread */
	__u64 jitter_seed;  /* fixed in tests; random in production */
};

/* The IBS op period for --load-period @load_period (CP_IBS_OPS_PER_LOAD), aligned, capped. */
__u64 cp_ibs_op_period(__u64 load_period);

/* The sampling settings asked for (--ldlat and the periods), the default jitter, @seed. */
void cp_sampling_cfg_init(struct cp_sampling_cfg *cfg, __u32 ldlat_cycles, __u64 load_period,
			  __u64 store_period, __u64 seed);

/* What one PMU opens per CPU or per thread: PEBS loads (+ aux leader) and stores, or one IBS op event. */
struct cp_mem_specs {
	int nr;
	struct cp_event_spec spec[2];
};

/*
 * Builds the specs for @pmu: config words from its event strings through
 * its format files, ldlat replaced by cfg->ldlat_cycles, precise_ip at
 * cp_pmu_precise_first(). Returns 0, or -EINVAL / -ERANGE with a sentence
 * in @err (an event string the formats cannot express, an ldlat wider than
 * the field, a PMU without mem-stores only drops the store spec).
 */
int cp_mem_specs_build(const struct cp_pmu *pmu, const struct cp_sampling_cfg *cfg,
		       struct cp_mem_specs *out, char *err, size_t err_sz);

/*
 * A software page-fault spec (PERF_COUNT_SW_PAGE_FAULTS, user faults only)
 * with sample_period @period and ADDR in sample_type: every sample carries
 * the faulting address, which makes real addresses available for end-to-end
 * tests and the soft source.
 */
void cp_page_fault_spec(struct cp_event_spec *spec, __u64 period);

/*
 * An execute breakpoint at user address @ip that samples every hit
 * (sample_period 1), for breakpoint sampling (user/live/bp_arm.h). bp_len must
 * be sizeof(long) for execute breakpoints (arch/x86/kernel/hw_breakpoint.c).
 */
void cp_breakpoint_spec(struct cp_event_spec *spec, __u64 ip);

/*
 * A software cpu-clock spec (PERF_COUNT_SW_CPU_CLOCK) sampling at @freq_hz
 * (freq mode: the kernel turns it into a fixed hrtimer period), kernel ticks
 * included so on_tick can count them: the no-PMU source (--source soft).
 */
void cp_cpu_clock_spec(struct cp_event_spec *spec, __u32 freq_hz);

#endif /* CP_PMU_ATTR_H */
