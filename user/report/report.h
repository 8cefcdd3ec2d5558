/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The text report of a run: what was profiled and how, the sampled totals,
 * the instructions with the most sampled misses, and every drop. Pure: it
 * prints what struct cp_report holds and asks the caller, through a
 * callback, for source locations.
 */
#ifndef CP_REPORT_H
#define CP_REPORT_H

#include <stdio.h>
#include <sys/types.h>

#include "cacheperf/abi.h"
#include "breakpoints/bp_report.h"
#include "machine/geometry.h"
#include "classify/classify.h"
#include "profile/insn_store.h"
#include "objects/object_stats.h"
#include "decode/soft_decide.h"
#include "symbols/symbolizer.h"
#include "profile/bpf_stats.h"
#include "profile/run_facts.h"
#include "profile/run_limits.h"
#include "machine/agent_cost.h"
#include "report/insn_callers.h"
#include "report/report_budget.h"
#include "report/report_limits.h"

#define CP_REPORT_TOP_DEFAULT 10
struct cp_report {
	const char *source;	   /* "pebs", "ibs", "soft", "faults" */
	const char *source_reason; /* why this source (cp_source_choice.reason) */
	double duration_s;
	const struct cp_geometry *geo; /* the caches assumed; NULL: not known */
	const char *end_reason;	       /* "duration reached", "interrupted", ... */
	const struct cp_report_target *targets;
	int nr_targets;	     /* 0: the whole machine (-a) */
	bool launched;	     /* `-- CMD`: probes were there from its exec */
	struct cp_stats bpf; /* the BPF counters at the end */
	const struct cp_insn_store *insns;
	const struct cp_object_stats *objects; /* samples per object; NULL: none */
	__u64 received;			       /* records user space got from the ring buffer */
	__u64 malformed;		       /* ... of the wrong size (ABI mismatch) */
	__u64 unknown;			       /* ... of a type nothing consumes */
	__u64 period_changes; /* sample periods raised or lowered by the rate cap */
	__u64 throttles;      /* times the kernel throttled a sampling event */
	__u64 object_events;  /* allocation and mapping records applied */
	__u64 chunk_objects;  /* objects no probe saw, read from glibc's chunk headers */
	bool have_alloc;      /* allocation probes ran (not --no-objects) */
	struct cp_alloc_probes_stats alloc;
	struct cp_live_drops live; /* lost on the way, live run only */
	__u64 guard_backoffs;
	__u64 backoff_doubtful; /* samples in objects that lived through a back-off */
	__u64 backoff_unseen;	/* samples in memory with no allocation seen, after one */
	__u64 objects_live;	/* heap objects in the object table now */
	__u64 insns_dropped;	/* instructions the run's store had no room for */
	__u64 execs;		/* targets that exec'd, and that exited */
	__u64 exits;
	struct cp_soft_stats soft;	/* --source soft: the decoding of ticked instructions */
	const struct cp_bp_summary *bp; /* breakpoint sampling; NULL: no such section */
	unsigned int top;		/* instructions listed; 0: CP_REPORT_TOP_DEFAULT */
	const struct cp_classification *issues;	    /* NULL: no issues section */
	const struct cp_classify_cfg *classify_cfg; /* the filters issues were judged by */
	cp_locate_fn locate;			    /* NULL: instruction addresses only */
	void *locate_ctx;
	/*
	 * The first frame of call site @callsite (of process @tgid) that is the
	 * user's, "f (file:line)", when the allocator's or its wrappers' frames
	 * came first (operator new, xmalloc); -1 when the caller is that frame
	 * already, or unknown. Called with locate_ctx; NULL: callers only.
	 */
	int (*alloc_site)(void *ctx, __u32 tgid, __u64 callsite, char *buf, size_t sz);
	struct cp_callers_view callers;	       /* the issues' instructions' call paths */
	const struct cp_proc_summaries *procs; /* per process; listed with -a */
	struct cp_limits limits;	       /* evictions and memory */
	struct cp_report_budget budget;	       /* --overhead; plan.budget_ppm 0: none */
	struct cp_agent_cost agent;	       /* the profiler's own cost; known false: a replay */
};

/* Writes the report to @f. */
void cp_report_print(const struct cp_report *r, FILE *f);

/* Its "Drops" section alone (the HTML report's header says the same). */
void cp_report_drops_print(const struct cp_report *r, FILE *f);

#endif /* CP_REPORT_H */
