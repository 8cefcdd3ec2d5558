/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The allocation probes' libbpf edge: sets up bpf/alloc.bpf.c before load,
 * attaches the syscall tracepoints once and the allocator uprobes per target
 * (allocator.h finds the functions, probe_place.h places the entry probes),
 * runs the allocation-rate guard (alloc_guard.h) and reports counters.
 *
 * Order of use:
 *   cacheperf__open()
 *   cp_alloc_probes_prepare(skel, &prep)    before cacheperf__load()
 *   cacheperf__load()
 *   ap = cp_alloc_probes__new(skel, &opts)   attaches the syscall tracepoints
 *   cp_alloc_probes__attach_pid(ap, pid, early) per target (-p, --), or
 *   cp_alloc_probes__attach_all(ap)          -a: the system libc, every process
 *   drain record callback: CP_REC_OBJECT -> a new site's frames first
 *                                           (live/run.c), cp_alloc_event_apply()
 *   cp_alloc_probes__tick(ap, now_ns)        every interval (guard)
 *   cp_alloc_probes__detach_pid(ap, pid)     when a target exits (does not block)
 *   cp_alloc_probes__free(ap)                before cacheperf__destroy(); waits for
 *                                            the detached probes to be destroyed
 * Target filtering (targ_tgids, targ_filter_tgid) stays the session's job.
 */
#ifndef CP_ALLOC_PROBES_H
#define CP_ALLOC_PROBES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "cacheperf/alloc.h"
#include "profile/run_facts.h"
#include "budget/alloc_guard.h"
#include "budget/budget.h"

struct cacheperf;
struct cp_alloc_probes;

struct cp_alloc_prepare {
	bool no_stacks;		/* do not capture deeper allocation stacks */
	bool no_stack_copy;	/* no stack copies for CFI unwinding (CP_REC_USTACK) */
	__u32 stack_copy_bytes; /* their size, at most CP_USTACK_BYTES; 0: that */
	bool no_count;		/* do not count calls (no guard) */
	bool empty;		/* bench: the uprobe programs do nothing (the floor) */
	__u32 max_live;		/* live-object map entries, 0: CP_MAX_LIVE_OBJECTS */
};

/*
 * Between cacheperf__open() and cacheperf__load(): knobs, map sizes, and the
 * syscall programs this host can attach (tracepoints when tracefs is
 * mounted, else the raw sys_enter/sys_exit ones). Turns off auto-attach of
 * every allocation program: they are attached here, per target. @p NULL
 * means defaults. Returns 0 or a negative errno.
 */
int cp_alloc_probes_prepare(struct cacheperf *skel, const struct cp_alloc_prepare *p);

struct cp_alloc_probes_opts {
	__u64 max_alloc_rate; /* --max-alloc-rate, calls/s per process; 0: no guard */
	__u32 budget_ppm;     /* the overhead budget's share for the probes; 0: none */
	__u64 call_ns;	      /* what a probed call costs the target (calibrated) */
	__u64 exit_ns;	      /* what an exit point's trap costs it (cp_unit_exit_ns()) */
	FILE *log;	      /* -v: where probes went and why; NULL: quiet */
	/* the guard backed off (true) or resumed (false) for @pid (-1: all processes) */
	void (*on_guard)(pid_t pid, bool backed_off, void *ctx);
	void *ctx;
};

/*
 * The budget's share, a call's cost and an exit point's trap's (alloc_guard.h),
 * for the windows from now on: they spend from the account, and a thread of
 * their own cuts an open window where its allowance ends.
 */
void cp_alloc_probes__set_budget(struct cp_alloc_probes *ap, __u32 budget_ppm, __u64 call_ns,
				 __u64 exit_ns);

/* After load: attaches the syscall tracepoints. NULL with errno set on failure. */
struct cp_alloc_probes *cp_alloc_probes__new(struct cacheperf *skel,
					     const struct cp_alloc_probes_opts *opts);

/* Detaches everything. The skeleton outlives this. */
void cp_alloc_probes__free(struct cp_alloc_probes *ap);

/*
 * The user stack @stack_id (CP_ALLOC_STACK_ID(): the map of its generation)
 * into @ips (at most @max return addresses, innermost first). Returns how
 * many, 0 when the id is not in the map.
 */
size_t cp_alloc_stack_read(struct cacheperf *skel, __s64 stack_id, __u64 *ips, size_t max);

/*
 * Empties the stack map of the generations of parity @odd
 * (user/objects/stack_gen.h). Returns the stacks deleted.
 */
size_t cp_alloc_stacks_empty(struct cacheperf *skel, bool odd);

/*
 * Finds @pid's allocator and attaches its probes for @pid only. Returns 0,
 * -EEXIST if already attached, -ENOENT when no allocator is found (nothing
 * mapped defines malloc), -ESRCH if the process is gone, -EAGAIN when
 * @early (the caller asks again: a process just exec'd) and its loader is
 * still mapping its libraries, another -errno.
 */
int cp_alloc_probes__attach_pid(struct cp_alloc_probes *ap, pid_t pid, bool early);

/*
 * `-- CMD`: the held child @pid stops (SIGSTOP) in its dynamic loader at
 * _dl_debug_state, which the loader calls before it maps the program's
 * libraries and again once they are mapped, before any of their code runs:
 * the caller probes its allocator then and lets it go on (SIGCONT). A
 * program linked with tcmalloc or jemalloc maps it only after its exec,
 * and was probed ~0.1-0.3 s later, when its exec was read, its first
 * allocations unseen. Only the profiler's own loader (the very file) is
 * probed so; a command with another loader, or none (static), never
 * stops. Returns 0 when the stops are set, or a negative errno.
 */
int cp_alloc_probes__stop_in_loader(struct cp_alloc_probes *ap, pid_t pid);

/*
 * Whether @pid, released to exec, runs the loader the stops are set in:
 * its executable (/proc/PID/exe) is that file, or names it (PT_INTERP). A
 * static program, or one of another loader, does not stop (unless it
 * execs one of ours at once): it is not waited for.
 */
bool cp_alloc_probes__in_loader(const struct cp_alloc_probes *ap, pid_t pid);

/*
 * No more of those stops (a dlopen() calls the function again); the probe
 * goes off the loop. A stop already sent is the caller's to end: it is
 * sent by the time this returns, so a SIGCONT after it ends it.
 */
void cp_alloc_probes__loader_done(struct cp_alloc_probes *ap);

/* -a: probes the system libc for every process. Returns 0 or a negative errno. */
int cp_alloc_probes__attach_all(struct cp_alloc_probes *ap);

/*
 * Whether the system-wide probes (cp_alloc_probes__attach_all()) will most
 * likely hold @pid's allocator: it maps the profiler's own dynamic loader
 * (the very file), so its libraries resolve as the profiler's libc did. Its
 * maps are read (the copy of a loop turn's hold: proc_maps.h). A process
 * of a container maps its image's loader: false.
 */
bool cp_alloc_probes__all_likely(const struct cp_alloc_probes *ap, pid_t pid);

/*
 * A target exited (or is no longer profiled): detaches its probes, forgets
 * its live objects, call-site stacks and call counter in BPF. Returns 0,
 * -ENOENT if unknown. The uprobes are destroyed on a worker thread
 * (user/live/link_reaper.h): this returns without waiting the ~1 s the kernel
 * takes; so do the guard's detaches in cp_alloc_probes__tick().
 */
int cp_alloc_probes__detach_pid(struct cp_alloc_probes *ap, pid_t pid);

/* Waits until every probe detached so far is destroyed (cp_alloc_probes__free() does). */
void cp_alloc_probes__flush(struct cp_alloc_probes *ap);

/*
 * The guard's tick at @now_ns (CLOCK_MONOTONIC): reads and resets each
 * target's call counter, detaches the probes of targets over budget and
 * re-attaches those whose back-off is over. Returns how many targets changed
 * state, or a negative errno if a re-attach failed.
 */
int cp_alloc_probes__tick(struct cp_alloc_probes *ap, __u64 now_ns);

/* When a tick next changes anything (cp_alloc_guard_next_ns()), 0: never. */
__u64 cp_alloc_probes__next_tick_ns(const struct cp_alloc_probes *ap);

/* True while @pid's probes are backed off by the guard. */
bool cp_alloc_probes__backed_off(const struct cp_alloc_probes *ap, pid_t pid);

void cp_alloc_probes__stats(const struct cp_alloc_probes *ap, struct cp_alloc_probes_stats *out);

/*
 * Calls @fn with each probed process's pid, CPU time while probed and
 * allocator calls counted (cp_budget_proc's first three fields): the
 * targets probed now, then the CP_BUDGET_TOP_PROCS detached ones with the
 * most calls. Not the -a probes (every process: no one CPU time).
 */
void cp_alloc_probes__each_proc(const struct cp_alloc_probes *ap,
				void (*fn)(void *ctx, const struct cp_budget_proc *p), void *ctx);

#endif /* CP_ALLOC_PROBES_H */
