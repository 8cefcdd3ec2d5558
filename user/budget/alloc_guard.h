/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --max-alloc-rate: the allocation-rate guard of one probed process (or of
 * the system-wide probes with -a). Every allocator call through a uprobe
 * costs about a microsecond even when the probe is placed well, so a
 * service making millions of calls per second would be slowed by half; past
 * the budget the allocation probes are detached for a back-off period, and
 * objects allocated meanwhile are unknown. Back-offs that follow each other
 * double (up to max_backoff_ns); intervals under half the budget shrink the
 * next one back toward backoff_ns.
 *
 * With an overhead budget (budget/budget.h) the probes spend from an account
 * instead: it holds a small initial credit (what the shortest window can
 * spend, CP_GUARD_MIN_WINDOW_NS at max_cpu_ppm) and earns budget_ppm of the
 * target's CPU time as it is measured; every call counted, attached or
 * still arriving while the probes come off, is paid from it at call_ns.
 * A window is opened only when the balance pays for the shortest window at
 * the worst rate the target can spend (its last window's, and never less
 * than max_cpu_ppm: a storm can start at any moment), and it must be cut
 * when that worst rate would have spent the balance: cp_alloc_guard_next_ns()
 * says when, and cp_alloc_guard_tick() cuts it there or as soon as the
 * calls counted have spent it. The time off lasts until the target's
 * measured CPU time has earned enough again; nothing is projected from a
 * rate, so a target that runs slower while detached waits longer. The
 * balance is capped at what one CPU earns in a second (a quiet hour saves
 * no storm). --max-alloc-rate stays a hard cap beside it; the longer time
 * off wins.
 *
 * Pure: user/live/alloc_probes.c counts calls in BPF (alloc_calls), feeds them
 * and the target's CPU time here once per tick and detaches or re-attaches as
 * told.
 */
#ifndef CP_ALLOC_GUARD_H
#define CP_ALLOC_GUARD_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_GUARD_INTERVAL_NS	100000000ull   /* rates are measured over >= 100 ms */
#define CP_GUARD_BACKOFF_NS	1000000000ull  /* first back-off: 1 s */
#define CP_GUARD_MAX_BACKOFF_NS 60000000000ull /* at most 60 s */

#define CP_GUARD_MIN_CPU_PPM 10000u /* a target is taken to run at least 1 % of a CPU */
/* the shortest budget window worth opening: a hot allocator spends at once */
#define CP_GUARD_MIN_WINDOW_NS 2000000ull
#define CP_GUARD_MAX_SAVED_NS  1000000000ull /* the balance holds what 1 s of a CPU earns */

struct cp_alloc_guard_cfg {
	__u64 max_rate;	   /* allocator calls per second; 0: no cap */
	__u32 budget_ppm;  /* share of the target's CPU time the calls may cost; 0: none */
	__u64 call_ns;	   /* what a probed call costs the target (budget/budget.h) */
	__u64 window_ns;   /* shortest budget window (CP_GUARD_MIN_WINDOW_NS) */
	__u64 max_cpu_ppm; /* the CPUs the target can run on, in ppm of one; 0: one */
	__u64 interval_ns; /* shortest measuring interval */
	__u64 backoff_ns;  /* first back-off */
	__u64 max_backoff_ns;
};

/* --max-alloc-rate @max_rate with the default intervals, no budget, one CPU. */
void cp_alloc_guard_cfg_init(struct cp_alloc_guard_cfg *cfg, __u64 max_rate);

enum cp_guard_action {
	CP_GUARD_NONE = 0,
	CP_GUARD_DETACH, /* over budget: detach the allocation probes */
	CP_GUARD_ATTACH, /* back-off over: attach them again */
};

struct cp_alloc_guard {
	bool backed_off;
	__u64 window_start_ns;	/* start of the interval being measured */
	__u64 window_calls;	/* calls counted in it so far */
	__u64 until_ns;		/* end of the current back-off */
	__u64 since_ns;		/* start of the current back-off */
	__u64 next_backoff_ns;	/* length of the next back-off */
	__u64 last_rate;	/* calls/s of the last complete interval */
	__u64 backoffs;		/* back-offs so far */
	__u64 backoff_total_ns; /* time spent backed off (completed back-offs) */
	__u64 window_cpu_ns;	/* the target's CPU time in the window so far */
	__u64 cpu_ppm;		/* of one CPU, the target's rate in the last window */
	__u64 attached_ns;	/* time attached (completed windows) */
	__u64 budget_offs;	/* back-offs the budget asked for (of backoffs) */
	/* the account (budget only), in ns of the target's time */
	__u64 earned_ns;     /* initial credit + budget_ppm of its CPU time so far */
	__u64 spent_ns;	     /* calls so far x call_ns */
	__u64 rate_until_ns; /* end of the --max-alloc-rate back-off, budget or not */
	__u64 spend_ppm;     /* estimated spending rate of the last window, ppm of a CPU */
	__u64 last_tick_ns;  /* the balance is as of this tick */
};

/* A guard starting to measure at @now_ns, with the initial credit of @cfg's budget. */
void cp_alloc_guard_init(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			 __u64 now_ns);

/*
 * One tick at @now_ns with @calls counted and @cpu_ns of the target's CPU
 * time since the previous tick.
 * Returns what to do with the probes; when it returns CP_GUARD_DETACH the
 * caller must detach them (calls counted while backed off are ignored) and
 * attach them again on CP_GUARD_ATTACH.
 */
enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 cpu_ns, __u64 now_ns);

/*
 * Pays @ns more from the account (budget only): what the windows cost
 * beside the calls, the system-call programs that are on while they are.
 */
void cp_alloc_guard_charge(struct cp_alloc_guard *g, __u64 ns);

/*
 * The time of the guard's next decision: without a budget, the end of the
 * back-off or of the measuring interval (ticking before it changes nothing);
 * with one, while attached, the time the worst spending rate would have
 * spent the balance (the window must be cut by then), while detached, when
 * the target's CPU time at its last rate will have earned a window again
 * (a guess: the tick then checks what was earned). 0: none (no guard).
 */
__u64 cp_alloc_guard_next_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg);

#endif /* CP_ALLOC_GUARD_H */
