/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile's side of --max-memory and of the report's Limits section:
 * reads RSS when the guard says so, shrinks the stores that can be rebuilt
 * or only serve the report, and gathers every store's eviction counts.
 */
#ifndef CP_RUN_LIMITS_H
#define CP_RUN_LIMITS_H

#include "profile/insn_store.h"
#include "profile/mem_guard.h"
#include "profile/miss_store.h"
#include "objects/objects.h"
#include "profile/proc_summary.h"
#include "report/report_limits.h"
#include "symbols/symbolizer.h"

/* The stores a shrink reaches. */
struct cp_limits_stores {
	struct cp_symbolizer *sym;
	struct cp_objects *objects;
	struct cp_proc_summaries *procs;
};

struct cp_limits_state {
	struct cp_mem_guard guard;	/* limit 0: not watched (offline) */
	__u64 shrunk_dwfls;		/* what the shrinks dropped */
	__u64 shrunk_processes;
};

/*
 * Reads RSS when the guard says so, or @now (the symbolizer just took a
 * snapshot: what grows fastest, one process's debug sections); over the limit (cp_mem_guard_over()) drops the
 * symbolizer's snapshots and strings and exited processes' objects, returns freed memory to the system, and says so on stderr.
 */
void cp_limits_tick(struct cp_limits_state *st, const struct cp_limits_stores *s, __u64 now_ns,
		    bool now);

/* The report's cp_limits from the stores' counters and the guard's figures. */
void cp_limits_fill(const struct cp_limits_state *st, const struct cp_limits_stores *s,
		    const struct cp_miss_store *misses, const struct cp_insn_store *insns,
		    struct cp_limits *out);

#endif /* CP_RUN_LIMITS_H */
