/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A profiling session, the libbpf edge of main(): the skeleton with its
 * knobs set, loaded, the target filter filled, and the sampling events
 * opened and attached. Nothing here decides anything: the choices (source,
 * event scope, attributes) come from pmu.c, perf_events.c and pmu_attr.c.
 */
#ifndef CP_SESSION_H
#define CP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "budget/budget.h"
#include "machine/geometry.h"
#include "live/mem_prog.h"
#include "live/perf_events.h"
#include "machine/pmu.h"

struct cacheperf;
struct bpf_link;
struct cp_alloc_probes;

#define CP_SESSION_LIFECYCLE_LINKS 3

/* What a session opens and loads: main() fills it from the options. */
struct cp_session_cfg {
	bool system_wide;	/* -a: per-CPU events, no tgid filter */
	bool held;		/* `-- CMD`: the child is held until its exec */
	const char *sysfs_root; /* --sysfs-root */
	const char *cgroup;	/* --cgroup PATH (-a only); NULL: every cgroup */
	__u32 window;		/* accesses in a miss window */
	__u32 stack_every;	/* one event's stack in N walked (bpf/stacks.bpf.h); 0: none */
	__u32 stack_copy_bytes; /* ... copied for CFI where the walk stops short; 0: none */
	__u32 window_ratio_ppm; /* miss ratio above which misses are forwarded */
	__u32 ldlat_cycles;	/* PEBS load latency threshold */
	__u64 load_period;	/* sample periods asked for */
	__u64 store_period;
	__u32 soft_freq_hz; /* --source soft: ticks per second per CPU */
	__u32 max_bp_rate;  /* 0: on_breakpoint is not loaded */
	bool no_objects;    /* --no-objects: no allocation probes */
	/* --alloc-stack-bytes: stack copied at a call site's first allocation, for CFI */
	__u32 alloc_stack_bytes;
	__u64 max_alloc_rate; /* allocation guard: calls/s per process; 0: off */
	const struct cp_pmus *pmus;
	struct cp_source_choice source; /* from cp_source_decide() */
	const pid_t *pids;		/* -p PIDs, or the held `-- CMD` child */
	int nr_pids;			/* 0 with -a */
	const struct cp_geometry *geo;	/* L1D for the breakpoint program's sets; NULL: 64 x 64 B */
};

struct cp_session {
	struct cacheperf *skel;
	struct cp_perf_events *events;
	struct cp_perf_scope scope;
	enum cp_mem_prog variant;
	int nr_events; /* sampling events opened */
	/* fork, exec and exit: the filter follows the targets, user space hears of them */
	struct bpf_link *lifecycle[CP_SESSION_LIFECYCLE_LINKS];
	struct cp_alloc_probes *alloc; /* allocation probes; NULL with --no-objects */
	__u64 guard_backoffs;	       /* times the allocation guard backed off */
	/* told of every back-off (@backed_off) and resume; NULL: nobody listens */
	void (*on_guard)(pid_t pid, bool backed_off, void *ctx);
	void *on_guard_ctx;
	bool bp_on;	    /* on_breakpoint loaded (--max-bp-rate > 0) */
	bool alloc_windows; /* allocation probes attached in budget windows */
	bool soft_on;	    /* on_tick loaded (--source soft) */
};

/*
 * The overhead budget's plan @plan, known once the unit costs @u are
 * measured (after cp_session__open(), before the run): the allocation
 * probes are attached in windows of its share from then on
 * (budget/alloc_guard.h), and forced wakeups keep its spacing.
 */
void cp_session__set_budget(struct cp_session *s, const struct cp_budget_plan *plan,
			    const struct cp_unit_costs *u);

/*
 * Opens, configures and loads the BPF programs for @cfg: decides the event
 * scope (per thread or per CPU, cp_perf_scope_decide()), sets the rodata
 * knobs (target filter, forward-all for sources without hit/miss
 * information, window size and ratio, L1 geometry), sizes the per-CPU
 * windows, picks the on_mem_sample variant this kernel runs, loads
 * on_breakpoint too unless --max-bp-rate is 0 (and on_tick for --source
 * soft), and fills the tgid filter.
 * Returns 0 with *@out set, or a negative errno with a sentence in @err
 * saying what failed and what to do.
 */
int cp_session__open(const struct cp_session_cfg *cfg, struct cp_session **out, char *err,
		     size_t err_sz);

/*
 * Opens the source's sampling events for the targets and attaches the
 * memory-sample program to each. Returns 0 or a negative errno with @err
 * set (-ESRCH: a target is gone; -ENODEV/-EOPNOTSUPP: no PMU for the
 * source; -EOPNOTSUPP also for a source this build cannot open).
 */
int cp_session__attach(struct cp_session *s, const struct cp_session_cfg *cfg, char *err,
		       size_t err_sz);

/*
 * Attaches the allocation probes to the targets (-a: the system libc), last
 * before the loop: their first budget window ends at the loop's first tick,
 * and a held `-- CMD` must have them before it runs. Failures are said on
 * stderr and lose heap objects only.
 */
void cp_session__attach_allocs(struct cp_session *s, const struct cp_session_cfg *cfg);

/*
 * Attaches the allocation probes to process @pid (a target that exec'd).
 * Returns 0 or a negative errno (-EEXIST: it has them already; -EAGAIN:
 * ask again, its libraries may not be mapped yet). Unless @last, a process
 * that has mapped no malloc yet is -EAGAIN (its dynamic loader has not run:
 * a container's own libc is known only then). A process that exited, or
 * (@last) has mapped no malloc, is counted in a summary said once a period
 * (named with -v); another failure is a warning, a few a period. A no-op
 * returning 0 with --no-objects.
 */
int cp_session__probe_allocs(struct cp_session *s, pid_t pid, bool last);

/*
 * Process @pid, asked again for its allocator, exited first (its exit
 * record was read): counted skipped as cp_session__probe_allocs() would
 * have, without looking for what is gone.
 */
void cp_session__probe_gone(struct cp_session *s, pid_t pid);

/* Detaches and closes everything. NULL is a no-op. */
void cp_session__free(struct cp_session *s);

/*
 * Routes libbpf's messages through the log (util/log.h): warnings at
 * warning level, except while a process's allocation probes attach (debug
 * then: said with the failure they explain), info and debug as such.
 */
void cp_session_route_libbpf(void);

#endif /* CP_SESSION_H */
