/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Two report sections of long and system-wide runs: the processes with the
 * most samples (-a: pid, comm, cgroup, container), and the limits (every
 * store's evictions, the profiler's RSS against --max-memory). Text and
 * JSON; pure.
 */
#ifndef CP_REPORT_LIMITS_H
#define CP_REPORT_LIMITS_H

#include <stdio.h>
#include <linux/types.h>

#include "util/json_writer.h"
#include "profile/proc_summary.h"

/* What the stores dropped to stay bounded, and the memory they stayed in. */
struct cp_limits {
	bool live;			/* RSS figures exist (not offline) */
	__u64 rss_bytes;		/* at the last check */
	__u64 peak_rss_bytes;
	__u64 max_memory_bytes;		/* --max-memory */
	__u64 shrinks;			/* times over it, and shrunk */
	__u64 shrunk_dwfls;		/* ... symbolizer snapshots dropped by shrinks */
	__u64 shrunk_processes;		/* ... exited processes' objects dropped by shrinks */
	__u64 processes_evicted;	/* live processes' objects dropped at their cap (LRU) */
	__u64 exited_dropped;		/* exited processes' objects beyond their cap (LRU) */
	__u64 objects_evicted;		/* heap objects dropped at the per-process cap (oldest) */
	__u64 lines_evicted;		/* miss-store lines dropped at the cap */
	__u64 insns_dropped;		/* new instructions not stored at the cap */
	__u64 dwfls_evicted;		/* symbolizer snapshots dropped at the cap (LRU) */
	__u64 string_flushes;		/* symbolizer strings and results dropped */
	__u64 summaries_evicted;	/* per-process summaries dropped at the cap */
};

/* "Processes with the most samples": @top of them, from @t. */
void cp_report_procs_print(const struct cp_proc_summaries *t, unsigned int top, FILE *f);
void cp_report_procs_json(struct cp_json *j, const struct cp_proc_summaries *t, unsigned int top);

/* "Limits": what each cap dropped, RSS against --max-memory. */
void cp_report_limits_print(const struct cp_limits *l, FILE *f);
void cp_report_limits_json(struct cp_json *j, const struct cp_limits *l);

#endif /* CP_REPORT_LIMITS_H */
