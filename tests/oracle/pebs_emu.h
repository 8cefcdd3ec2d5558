/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * From a simulated access stream to the recording a live PEBS run would
 * have written (docs/recording.md), so `cacheperf-bpf report FILE` runs the
 * production classifier unchanged on it:
 *  - per core, one load and one store counter with the profiler's periods,
 *    each randomised per CPU like the live events (cp_period_jitter);
 *  - every sample counted per instruction and pushed through the per-CPU
 *    miss-ratio window of cacheperf/window.h, the misses it forwards written
 *    as struct cp_sample, exactly as bpf/mem_sample.bpf.h does;
 *  - data_src as Intel PEBS encodes it: loads with their level (L1, L2, L3,
 *    L3 + snoop HITM, DRAM) and a latency weight; stores with L1 hit or miss;
 *  - every allocation and free as the allocation probes report them;
 *  - the breakpoint manager (user/breakpoints/bp_manager.c, the same pure code) fed the
 *    forwarded misses and ticked every CP_PEBS_EMU_TICK_NS of simulated time;
 *    an instruction it arms records the addresses of its next accesses in
 *    the trace, up to CP_BP_HISTORY or the BPF settle rule, and the history
 *    is written as the CP_REC_HISTORY record the live run writes.
 * Simulated time: start + accesses x ns_per_access.
 */
#ifndef CP_ORACLE_PEBS_EMU_H
#define CP_ORACLE_PEBS_EMU_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/geometry.h"
#include "cache_sim.h"

#define CP_PEBS_EMU_TICK_NS	10000000ull	/* bp_sampler.c's CP_BP_TICK_NS */

struct cp_pebs_emu_cfg {
	pid_t pid;
	char comm[16];
	__u64 load_period, store_period;
	__u32 jitter_pct;
	__u64 seed;
	__u32 window, window_ratio_ppm;
	__u32 cores;
	struct cp_cache_level cache[CP_CACHE_NR_SLOTS];
	__u64 ns_per_access;
	__u64 bp_expiry_ns;
	__u32 bp_rate;
	bool breakpoints;		/* false: no histories (the classifier says pending) */
};

struct cp_pebs_emu_stats {
	__u64 samples[2], misses[2], forwarded, filtered, histories, bp_hits;
};

struct cp_pebs_emu;

struct cp_pebs_emu *cp_pebs_emu__new(const struct cp_pebs_emu_cfg *cfg);
void cp_pebs_emu__free(struct cp_pebs_emu *e);

/* One access of thread @tid (index) on @core, as the cache model served it. */
void cp_pebs_emu__access(struct cp_pebs_emu *e, __u32 tid, __u32 core, __u64 ip, __u64 addr,
			 __u32 size, bool write, enum cp_sim_level level);

/* An allocation (@size > 0) or a free (@size 0) by thread @tid, called from @ip. */
void cp_pebs_emu__object(struct cp_pebs_emu *e, __u32 tid, __u64 ip, __u64 addr, __u64 size,
			 bool alloc);

/*
 * Writes the recording to @path: header, maps (@maps, the program's maps
 * text), the build-id of @exe, events, counters, end. Returns 0 or a
 * negative errno with @err set.
 */
int cp_pebs_emu__write(struct cp_pebs_emu *e, const char *path, const char *maps, size_t maps_len,
		       const char *exe, char *err, size_t err_sz);

void cp_pebs_emu__stats(const struct cp_pebs_emu *e, struct cp_pebs_emu_stats *out);

#endif /* CP_ORACLE_PEBS_EMU_H */
