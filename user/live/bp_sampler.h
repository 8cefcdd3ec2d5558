/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Breakpoint sampling in a session (the syscall edge of bp_manager.h):
 * carries out the manager's decisions with bp_arm.h and HW_BREAKPOINT_X
 * perf events running on_breakpoint, per thread with inherit = 1 (-p,
 * `-- CMD`: threads created later are covered) or per CPU (-a, many
 * threads; BPF keeps only armed {tgid, ip}). Each finished history goes to
 * the on_history callback with its finding (outcome, busiest set, C2Sim's
 * simulated conflict share), and into the summary the report prints.
 *
 * The owner feeds it forwarded misses, CP_REC_BP records (let go at once:
 * a settled instruction still traps until its events are closed) and a
 * tick at least every expiry time.
 */
#ifndef CP_BP_SAMPLER_H
#define CP_BP_SAMPLER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "cacheperf/breakpoint.h"
#include "breakpoints/bp_manager.h"
#include "breakpoints/bp_report.h"
#include "profile/insn_store.h"
#include "classify/lru_model.h"
#include "profile/miss_store.h"

struct cacheperf;

/*
 * A finished history: @h is the final BPF entry (cp_bp_history() lists its
 * accesses), @f what was found in it. Called before the entry is gone.
 */
typedef void (*cp_bp_history_fn)(void *ctx, const struct cp_bp_finding *f,
				 const struct cp_bp_insn *h);

struct cp_bp_sampler_cfg {
	struct cacheperf *skel;	     /* loaded with on_breakpoint */
	bool per_cpu;		     /* per-CPU events (else per thread, inherited) */
	const char *sysfs_root;	     /* online CPUs, for per-CPU events */
	__u64 expiry_ns;	     /* --bp-expiry */
	__u32 max_rate;		     /* --max-bp-rate, > 0 */
	bool by_time;		     /* soft source: candidates by time share (bp_manager.h) */
	struct cp_lru_geom l1;	     /* sets of the accesses, and the LRU models */
	cp_bp_history_fn on_history; /* NULL: findings only */
	void *ctx;
	FILE *log; /* slot shortages, giving up; NULL: silent */
};

struct cp_bp_sampler;

/* NULL with errno set (ENOMEM, or EINVAL for an unusable @cfg). */
struct cp_bp_sampler *cp_bp_sampler__new(const struct cp_bp_sampler_cfg *cfg);

/* Lets everything armed go (histories delivered) and frees @s. NULL is a no-op. */
void cp_bp_sampler__free(struct cp_bp_sampler *s);

/* A forwarded miss (or, for sources without levels, any sampled access). */
void cp_bp_sampler__note_miss(struct cp_bp_sampler *s, __u32 tgid, __u32 cpu, __u64 ip, __u64 addr,
			      __u64 now_ns);

/*
 * A CP_REC_BP record: lets the instruction go now, then arms the next
 * candidates (ranked with @insns and @misses, either may be NULL).
 */
void cp_bp_sampler__on_event(struct cp_bp_sampler *s, const struct cp_bp_event *e,
			     const struct cp_insn_store *insns, const struct cp_miss_store *misses,
			     __u64 now_ns);

/* Expiry and budget checks on everything armed, then arming of the best candidates. */
void cp_bp_sampler__tick(struct cp_bp_sampler *s, const struct cp_insn_store *insns,
			 const struct cp_miss_store *misses, __u64 now_ns);

/* The hit budget from now on, hits per second (> 0): the overhead budget lowers it. */
void cp_bp_sampler__set_rate(struct cp_bp_sampler *s, __u32 max_rate);

/* Process @tgid exited or exec'd: its instructions are let go and forgotten. */
void cp_bp_sampler__forget(struct cp_bp_sampler *s, __u32 tgid, __u64 now_ns);

/* Lets everything armed go (the run ends); arms nothing after. */
void cp_bp_sampler__stop(struct cp_bp_sampler *s, __u64 now_ns);

/* Counters and findings as of the latest tick, record or stop. */
const struct cp_bp_summary *cp_bp_sampler__summary(const struct cp_bp_sampler *s);

#endif /* CP_BP_SAMPLER_H */
