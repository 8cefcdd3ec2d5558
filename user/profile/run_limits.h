/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile's side of --max-memory and of the report's Limits section:
 * reads the profiler's memory when the guard says so, shrinks the stores that can be rebuilt
 * or only serve the report, and gathers every store's eviction counts.
 */
#ifndef CP_RUN_LIMITS_H
#define CP_RUN_LIMITS_H

#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "profile/insn_store.h"
#include "profile/mem_guard.h"
#include "profile/miss_store.h"
#include "profile/shared_maps.h"
#include "objects/objects.h"
#include "profile/proc_summaries.h"
#include "symbols/symbolizer.h"
#include "symbols/sym_server.h"

/* The stores a shrink reaches. */
/* What the stores dropped to stay bounded, and the memory they stayed in. */
struct cp_limits {
	bool live;		    /* memory figures exist (not offline) */
	const char *memory_counter; /* which the kernel's count is (machine/self_mem.h) */
	__u64 memory_bytes;	    /* the kernel's count, at the last check */
	__u64 peak_memory_bytes;    /* ... its peak (the kernel's, or the highest seen) */
	__u64 rss_bytes;	    /* the resident set alone (VmRSS), at the last check */
	__u64 peak_rss_bytes;	    /* ... its peak (VmHWM) */
	__u64 max_memory_bytes;	    /* --max-memory */
	__u64 shrinks;		    /* times over it, and shrunk */
	__u64 shrunk_dwfls;	    /* ... symbolizer snapshots dropped by shrinks */
	__u64 shrunk_processes;	    /* ... exited processes' objects dropped by shrinks */
	__u64 processes_evicted;    /* live processes' objects dropped at their cap (LRU) */
	__u64 exited_dropped;	    /* exited processes' objects beyond their cap (LRU) */
	__u64 objects_evicted;	    /* heap objects dropped at the per-process cap (oldest) */
	__u64 lines_evicted;	    /* miss-store lines dropped at the cap */
	__u64 insns_dropped;	    /* new instructions not stored at the cap */
	__u64 dwfls_evicted;	    /* symbolizer snapshots dropped at the cap (LRU) */
	__u64 dwfls_copy_evicted;   /* ... of them for their files' copies' bytes */
	__u64 snaps_byte_evicted;   /* ... of them process snapshots, for their maps' bytes */
	__u64 max_snap_bytes;	    /* ... the bound (cp_maps_kept_max_bytes()), per store */
	__u64 maps_evicted;	    /* the object table's maps snapshots let go for it */
	__u64 string_flushes;	    /* symbolizer strings and results dropped */
	__u64 summaries_evicted;    /* per-process summaries dropped at the cap */
	__u64 stacks_held;	    /* (process, call stack) entries in the stack store */
	__u64 stacks_evicted;	    /* ... dropped at its cap (the least counted) */
	/* shared files followed and dropped, accesses given to them or left */
	struct cp_shared_maps_stats shared;
	__u64 files_refused;		  /* files targets named, refused (machine/target_file.h) */
	__u64 files_refused_by[CP_TF_NR]; /* ... by reason */
	struct cp_copy_stats copies;	  /* sealed copies of targets' files: kept, reused */
	__u64 parse_workers; /* files parsed first by a worker (symbols/parse_worker.h) */
	__u64 parse_waits;   /* lookups that found no verdict yet: the worker at work, or its
				budget spent; their files asked again later */
	struct cp_sym_server_stats server; /* tenants' files described (symbols/sym_server.h) */
};

struct cp_limits_stores {
	struct cp_symbolizer *sym;
	struct cp_objects *objects;
	struct cp_proc_summaries *procs;
};

struct cp_limits_state {
	struct cp_mem_guard guard; /* limit 0: not watched (offline) */
	struct cp_self_mem mem;	   /* the last reading */
	__u64 shrunk_dwfls;	   /* what the shrinks dropped */
	__u64 shrunk_processes;
	__u64 shrunk_copies; /* kept copies of targets' files let go */
};

/*
 * Reads the profiler's memory (cp_self_mem_read()) when the guard says so,
 * or @now (the symbolizer just took a snapshot: what grows fastest, one
 * process's debug sections); over the limit (cp_mem_guard_over()) drops the
 * symbolizer's snapshots and strings, exited processes' objects and the
 * kept copies of targets' files (cp_tf_kept_drop()), returns
 * freed memory to the system, and says so on stderr.
 */
void cp_limits_tick(struct cp_limits_state *st, const struct cp_limits_stores *s, __u64 now_ns,
		    bool now);

/* The report's cp_limits from the stores' counters and the guard's figures. */
void cp_limits_fill(const struct cp_limits_state *st, const struct cp_limits_stores *s,
		    const struct cp_miss_store *misses, const struct cp_insn_store *insns,
		    struct cp_limits *out);

#endif /* CP_RUN_LIMITS_H */
