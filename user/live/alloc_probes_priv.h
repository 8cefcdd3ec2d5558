/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The allocation probes' state, shared by their three files and no other:
 * live/alloc_probes.c (targets, attaching the probes, the system-call
 * programs, counters), live/alloc_place.c (where the probes go) and
 * live/alloc_windows.c (the budget windows: the calls counted, the
 * programs' cost measured, the cutter and the tick). Users include
 * live/alloc_probes.h.
 */
#ifndef CP_ALLOC_PROBES_PRIV_H
#define CP_ALLOC_PROBES_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "budget/budget.h"
#include "budget/prog_cost.h"
#include "budget/sys_windows.h"
#include "live/alloc_probes.h"
#include "live/link_reaper.h"
#include "machine/cpu_time.h"
#include "objects/allocator.h"

#define CP_MAX_ALLOC_TARGETS CP_MAX_TGIDS
#define CP_CUT_POLL_NS	     1000000 /* a window with no mark: the cutter looks every ms */
#define CP_MAX_EXIT_SITES    128     /* exit-point probes per target */

/* One distinct probed address of an allocator. */
struct site {
	enum cp_alloc_func func;
	__u64 off; /* file offset of the probe (function + placement) */
	__u32 sp_adjust;
	bool need_ret;
	bool exits; /* its result comes from exit-point probes (it may throw) */
};

/* One exit-point probe (decode/exit_points.h), shared by the variants that reach it. */
struct exit_site {
	__u64 off;    /* file offset of the jcc or jmp */
	__u64 cookie; /* CP_EXIT_COOKIE_* */
};

struct target {
	pid_t pid; /* -1: every process (-a) */
	struct cp_allocator *alloc;
	struct site sites[CP_FN_NR_PROBED];
	int nr_sites;
	struct exit_site exits[CP_MAX_EXIT_SITES];
	int nr_exits;
	struct cp_probe_link links[2 * CP_FN_NR_PROBED + CP_MAX_EXIT_SITES];
	int nr_links;
	struct cp_alloc_guard guard;
	__u64 calls;	       /* taken from alloc_calls so far */
	struct cp_cpu_src cpu; /* where that is read, held open */
	__u64 cpu_ns;	       /* its CPU time at the last tick (-a: the machine's busy time) */
	__u64 cpu_total_ns;    /* CPU time it used while probed */
	__u64 since_ns;	       /* first tick */
	__u64 allow_calls; /* budget windows: calls the open window may take past the last tick */
	__u64 cut_base;	   /* -a: all CPUs' counted calls when the window's allowance was set */
	__u64 tick_base;   /* -a: all CPUs' counted calls at the last tick */
	__u64 exit_traps;  /* its share of the exit points' traps so far */
	__u64 tick_calls;  /* calls taken at the current tick */
	bool cut;	   /* the cutter detached the probes; the guard is told at the next tick */
	__u64 mark;	   /* its mark as last set here (0: none; -a: all CPUs' count) */
	bool mark_failed;  /* the last mark could not be set: the cutter polls while it is open */
	dev_t file_dev;	   /* the file the probes are on (cp_ap_attach_links()) */
	ino_t file_ino;
	int held_fd; /* -a: that file, held open for the run (-1: none yet) */
};

/* The system-call tracepoints the mapping programs go on (sys_tp_progs()). */
#define SYS_TPS 7

struct cp_alloc_probes {
	struct cacheperf *skel;
	struct cp_alloc_probed all_loader; /* -a: the profiler's own loader (ino 0: unknown) */
	struct cp_alloc_probes_opts opts;
	struct cp_alloc_guard_cfg guard_cfg;
	struct bpf_link *sys_links[8];
	int nr_sys_links;
	__u64 sys_tp_ids[SYS_TPS];	    /* sys_tp_progs()' tracepoint ids, 0: not read yet */
	bool sys_warned;		    /* said once that they failed to attach again */
	struct cp_sys_windows sys_windows;  /* which windows they go with */
	bool sys_skipped;		    /* the open window goes without them */
	__u64 sys_mappings;		    /* the mappings recorded when they went on */
	struct cp_link_reaper *reaper;	    /* destroys detached uprobes off the loop */
	struct cp_probe_link loader_link;   /* cp_alloc_probes__stop_in_loader()'s */
	struct cp_alloc_probed loader_file; /* ... on this loader (stat() of its path) */
	bool multi;			    /* uprobe multi links (live/uprobe_multi.h) */
	bool measuring;			    /* the programs' cost is being measured */
	struct cp_prog_cost prog_base;	    /* the programs' counters when it began */
	__u64 prog_ns;			    /* their run time per call, once measured */
	struct cp_prog_cost sys_base;	    /* the raw syscall programs' counters then */
	__u64 sys_prog_ns;		    /* their run time per system call, once measured */
	__u64 prog_ns_first, sys_prog_ns_first; /* as first measured */
	__u64 prog_at_ns; /* measuring: since then; else: measure again then */
	__u64 prog_measures;
	bool raw_syscalls;
	__u64 exit_traps_seen; /* all CPUs' exit points' traps at the last tick */
	/*
	 * The cutter: a thread that ends a budget window where its allowance
	 * ends (cp_alloc_guard_allowance()), even while the profiling loop is
	 * busy with a slow record. @lock guards the targets and their links
	 * between it and the loop's calls.
	 */
	pthread_t cutter;
	bool cutter_on, cutter_stop;
	/*
	 * What wakes it: alloc_cuts, where a count that reached its mark (a
	 * process's alloc_cut_at, or with -a a CPU's alloc_cut_cpu) puts a
	 * record, and @cut_efd, written to stop it. NULL and -1 when either
	 * could not be had: it polls then.
	 */
	struct ring_buffer *cut_rb;
	int cut_efd;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct target *targets[CP_MAX_ALLOC_TARGETS];
	int nr_targets;
	__u64 placed, entry_emulated, single_step;
	__u64 new_unprobed;		      /* throwing operator new variants left unprobed */
	__u64 forwarded;		      /* variants that only jump to a probed function */
	__u64 backoffs_gone, backoff_ns_gone; /* of targets already detached */
	__u64 attached_ns_gone, run_ns_gone, cpu_ns_gone, budget_offs_gone, calls_gone;
	/* the targets already detached with the most calls, most first */
	struct cp_budget_proc gone[CP_BUDGET_TOP_PROCS];
	__u32 nr_gone;
};

/* alloc_probes.c */

/* A target's CPU time now: the process's, or with -a the machine's busy time. */
__u64 cp_ap_target_cpu_ns(struct target *t);
/* The time @t's probes were attached up to @now_ns. */
__u64 cp_ap_attached_ns(const struct target *t, __u64 now_ns);
/* Attaches or detaches the system-call programs as the open windows want them. */
void cp_ap_sync_syscalls(struct cp_alloc_probes *ap);
/* All CPUs' counted allocator calls so far (-a's windows); 0 when unread. */
__u64 cp_ap_all_calls(const struct cp_alloc_probes *ap);
/* Hands @t's links to the reaper: the loop does not wait for the kernel. */
void cp_ap_detach_links(struct cp_alloc_probes *ap, struct target *t);
/* The target of @pid (-1: -a's) and its index in @idx, or NULL. */
struct target *cp_ap_find_target(const struct cp_alloc_probes *ap, pid_t pid, int *idx);
/* Attaches @t's probes; 0 or -errno. */
int cp_ap_attach_links(struct cp_alloc_probes *ap, struct target *t);

/* The entry program of @func and the argument registers it reads. */
struct bpf_program *cp_ap_entry_prog(struct cacheperf *skel, enum cp_alloc_func func, __u32 *args);

/* alloc_place.c */

/* Places @t's probes: its sites, exit points and the variants left unprobed or forwarded. */
void cp_ap_place_sites(struct cp_alloc_probes *ap, struct target *t);

/* alloc_windows.c */

/* @t's calls counted in BPF and not taken yet (the guard takes them each tick). */
__u64 cp_ap_pending_calls(const struct cp_alloc_probes *ap, const struct target *t);
/* What the open window of @t may still take, from the calls counted now on; under ap->lock. */
void cp_ap_set_allowance(struct cp_alloc_probes *ap, struct target *t);
/* Stops the cutter thread, if it runs. */
void cp_ap_stop_cutter(struct cp_alloc_probes *ap);

#endif /* CP_ALLOC_PROBES_PRIV_H */
