/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a report says about a run besides its stores: how and whom it
 * sampled, from when until when and why it ended, and what was lost on the
 * way. Filled live (main.c, profile.c) or read back from a recording
 * (replay.c); the report takes it from here either way, so a replayed report
 * shows the run's own times.
 */
#ifndef CP_RUN_FACTS_H
#define CP_RUN_FACTS_H

#include <stdbool.h>
#include <linux/types.h>

#include "cacheperf/abi.h"
#include "live/alloc_probes.h"
#include "machine/geometry.h"
#include "cli/options.h"
#include "report/report.h"
#include "decode/soft_decide.h"

#define CP_RUN_TEXT_LEN		512	/* source reason (cp_source_choice.reason), end reason */

/* Known when sampling starts. */
struct cp_run_info {
	enum cp_source_kind source;
	char source_reason[CP_RUN_TEXT_LEN];
	struct cp_report_target targets[CP_MAX_TGIDS];
	__u32 nr_targets;		/* 0: the whole machine (-a) */
	bool launched;			/* `-- CMD` */
	__u64 start_ns;			/* CLOCK_MONOTONIC, as BPF's ktime */
	__u64 load_period;		/* sample periods asked for (the rate cap may raise them) */
	__u64 store_period;
	__u32 ldlat_cycles;
	__u32 window;
	__u32 window_ratio_ppm;
	struct cp_cache_level cache[CP_CACHE_NR_SLOTS];	/* problem[] is not kept */
};

/* Known when sampling ends. */
struct cp_run_end {
	__u64 end_ns;
	char end_reason[CP_RUN_TEXT_LEN];
	struct cp_stats bpf;		/* the BPF counters at the end */
	__u64 malformed;		/* records dropped by the drain's checks */
	__u64 unknown;
	__u64 period_changes;		/* by the rate cap */
	__u64 guard_backoffs;
	bool have_alloc;		/* allocation probes ran */
	struct cp_alloc_probes_stats alloc;
	struct cp_soft_stats soft;	/* --source soft: what user space decoded */
};

#endif /* CP_RUN_FACTS_H */
