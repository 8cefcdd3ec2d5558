/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What breakpoint sampling found: one finding per finished history (its
 * outcome, the L1 set it used most, C2Sim's simulated conflict share), the
 * manager's counters, and their section of the text report. Pure.
 */
#ifndef CP_BP_REPORT_H
#define CP_BP_REPORT_H

#include <stdio.h>
#include <linux/types.h>

#include "cacheperf/breakpoint.h"
#include "breakpoints/bp_manager.h"
#include "classify/lru_model.h"

#define CP_BP_FINDINGS 32 /* findings listed in the report */

/* One finished history. */
struct cp_bp_finding {
	__u32 tgid;
	__u32 accesses; /* recorded */
	__u64 ip;
	enum cp_bp_manager_reason reason; /* why it was let go */
	__u32 top_set;			  /* the L1 set with the most accesses */
	__u32 top_set_accesses;
	__u32 top_set_lines; /* distinct lines among them */
	__u32 late;	     /* hits after it was full or settled */
	/*
	 * The history and then its repetition through the L1 models
	 * (lru_model.h): an instruction's pattern repeats (paper §2.2, its
	 * key observation), and only a repetition can show conflicts.
	 */
	struct cp_lru_result sim;
	bool simulated; /* sim is valid */
};

struct cp_bp_summary {
	bool disabled; /* breakpoint sampling was off (--max-bp-rate 0) */
	bool silent;   /* ... because breakpoints never fire on this machine */
	struct cp_bp_manager_stats stats;
	__u64 expiry_ms;
	__u32 max_rate;
	__u32 nr;
	__u64 not_listed; /* findings beyond CP_BP_FINDINGS */
	struct cp_bp_finding findings[CP_BP_FINDINGS];
};

/*
 * The finding of @v, the final BPF entry of (@tgid, @ip), let go for
 * @reason; its history is simulated on @l1 (NULL: not simulated).
 */
void cp_bp_finding_of(const struct cp_bp_insn *v, __u32 tgid, __u64 ip,
		      enum cp_bp_manager_reason reason, const struct cp_lru_geom *l1,
		      struct cp_bp_finding *out);

/* Keeps @f in @s when it recorded anything and there is room, else counts it. */
void cp_bp_summary_add(struct cp_bp_summary *s, const struct cp_bp_finding *f);

/*
 * The "Breakpoints" section of the report: counters, then the findings,
 * located with @locate (report.h's cp_locate_fn; NULL: addresses only).
 */
void cp_bp_report_print(const struct cp_bp_summary *s,
			int (*locate)(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz),
			void *locate_ctx, FILE *f);

/*
 * Pure: the accesses @v recorded, in order, into @out (CP_BP_HISTORY
 * entries); slots claimed but never written (a hit cut short) are skipped.
 * Returns how many.
 */
size_t cp_bp_history(const struct cp_bp_insn *v, struct cp_bp_access *out);

#endif /* CP_BP_REPORT_H */
