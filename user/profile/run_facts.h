/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a report says about a run besides its stores: how and whom it
 * sampled, from when until when and why it ended, and what was lost on the
 * way. Filled live (cli/main.c, live/run.c) or read back from a recording
 * (record/replay.c); the report takes it from here either way, so a replayed report
 * shows the run's own times.
 */
#ifndef CP_RUN_FACTS_H
#define CP_RUN_FACTS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "cacheperf/abi.h"
#include "cacheperf/alloc.h"
#include "budget/budget.h"
#include "machine/agent_cost.h"
#include "machine/geometry.h"
#include "machine/source.h"
#include "decode/soft_decide.h"

#define CP_COMM_LEN	16  /* TASK_COMM_LEN */
#define CP_RUN_TEXT_LEN 512 /* source reason (cp_source_choice.reason), end reason */

/* A process we were given (-p) or launched (`-- CMD`). */
struct cp_report_target {
	pid_t pid;
	char comm[CP_COMM_LEN];
};

struct cp_alloc_probes_stats {
	struct cp_alloc_stats bpf; /* the BPF counters (alloc_stats) */
	__u64 calls;		   /* allocator calls of the targets probed now (guard counters) */
	__u64 targets;		   /* processes (or -a) probed now */
	__u64 links;		   /* uprobe links attached now */
	__u64 detaching;	   /* links detached, not yet destroyed (the reaper's queue) */
	__u64 placed;		   /* entry probes moved onto an emulated instruction */
	__u64 entry_emulated;	   /* entry probes at the entry, which is emulated */
	__u64 single_step;	   /* entry probes on an instruction the kernel single-steps */
	__u64 backoffs;		   /* guard back-offs so far, all targets */
	__u64 backed_off;	   /* targets backed off now */
	__u64 backoff_ns;	   /* time spent backed off (completed back-offs) */
	bool raw_syscalls;	   /* mappings come through raw sys_enter/sys_exit */
	__u64 syscall_links; /* the mmap/munmap/mremap/brk programs' links now (with the windows) */
	__u64 syscall_windows;	       /* windows they went with (budget/sys_windows.h) */
	__u64 syscall_windows_skipped; /* windows that went without them: mappings then unseen */
	__u64 new_unprobed; /* throwing operator new variants left unprobed (objects unknown) */
	__u64 forwarded;   /* variants that only jump to a probed function: no probe of their own */
	__u64 exit_lost;   /* exit-probed calls an exception ended, their entries dropped */
	__u64 budget_offs; /* back-offs the overhead budget asked for (of backoffs) */
	__u64 cpu_ns;	   /* the probed targets' CPU time while probed (-a: the machine's) */
	__u64 attached_ns; /* time the probes were attached, summed over targets */
	__u64 run_ns;	   /* time they were probed or backed off, summed over targets */
	__u64 prog_ns;	   /* their BPF programs' run time per call, 0: not measured */
	__u64 sys_prog_ns; /* the raw syscall programs' run time per system call, 0: not measured */
	/* as first measured: prog_ns and sys_prog_ns are the highest measured since */
	__u64 prog_ns_first, sys_prog_ns_first;
	__u64 prog_measures; /* measures of the programs' cost, the first included */
};

/* Known when sampling starts. */
struct cp_run_info {
	enum cp_source_kind source;
	char source_reason[CP_RUN_TEXT_LEN];
	struct cp_report_target targets[CP_MAX_TGIDS];
	__u32 nr_targets;  /* 0: the whole machine (-a) */
	bool launched;	   /* `-- CMD` */
	__u64 start_ns;	   /* CLOCK_MONOTONIC, as BPF's ktime */
	__u64 load_period; /* sample periods asked for (the rate cap may raise them) */
	__u64 store_period;
	__u32 ldlat_cycles;
	__u32 window;
	__u32 window_ratio_ppm;
	struct cp_cache_level cache[CP_CACHE_NR_SLOTS]; /* problem[] is not kept */
	struct cp_budget_plan budget; /* --overhead and the rates it chose (live only) */
	struct cp_unit_costs unit;    /* the probes' costs measured at start (live only) */
};

#define CP_MAX_PROG_DROPS 8  /* programs named with their skipped runs */
#define CP_PROG_NAME_LEN  16 /* BPF_OBJ_NAME_LEN */

/* A BPF program's runs the kernel skipped (bpf_prog_info.recursion_misses). */
struct cp_prog_misses {
	char name[CP_PROG_NAME_LEN];
	__u64 misses;
};

/* Lost on the way, counted by a live run only (not in recordings: 0 in a replay). */
struct cp_live_drops {
	__u64 stacks_lost;	    /* stack counter entries whose stack was gone at take time */
	__u64 alloc_stacks_missing; /* allocation stacks gone from their map when read */
	/* runs of the BPF programs the kernel skipped: a BPF program was already running on
	 * that CPU (a trace program, as a uprobe's, inside another one) */
	__u64 recursion_misses;
	__u32 nr_progs;
	struct cp_prog_misses progs[CP_MAX_PROG_DROPS]; /* those with any, most first */
};

/* Known when sampling ends. */
struct cp_run_end {
	__u64 end_ns;
	char end_reason[CP_RUN_TEXT_LEN];
	struct cp_stats bpf; /* the BPF counters at the end */
	__u64 malformed;     /* records dropped by the drain's checks */
	__u64 unknown;
	__u64 period_changes; /* by the rate cap */
	__u64 throttles;      /* PERF_RECORD_THROTTLE seen: the kernel stopped an event */
	__u64 guard_backoffs;
	bool have_alloc; /* allocation probes ran */
	struct cp_alloc_probes_stats alloc;
	struct cp_soft_stats soft;    /* --source soft: what user space decoded */
	struct cp_budget_spent spent; /* the overhead budget's estimate (live only) */
	struct cp_agent_cost agent;   /* the profiler's own cost (live only: not recorded) */
	struct cp_live_drops live;    /* live only */
};

#endif /* CP_RUN_FACTS_H */
