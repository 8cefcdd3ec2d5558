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
 * With an overhead budget (budget/budget.h) the calls spend from an
 * account: it earns budget_ppm of the target's CPU time as the target runs
 * (at the start, the share of CP_GUARD_CREDIT_NS of one CPU's time stands in
 * until the earnings pass it) and every call counted costs call_ns, calls
 * that arrive while the probes are being detached included (the
 * system-call programs that go with the windows have a share of their own,
 * budget.h). The probes are attached while the balance is positive: a tick that finds
 * it spent detaches them, and cp_alloc_guard_allowance() tells a watcher
 * off the profiling loop how many more calls the open window may take, so
 * that a storm's window is cut where the balance ends even while the loop
 * is busy (cp_alloc_guard_cut()). They are attached again once the balance
 * holds a window of CP_GUARD_BUDGET_WINDOW_NS at the last measured rate (at
 * least CP_GUARD_MIN_CALLS calls) and, past the start-up credit, nine
 * tenths of a full bank (below), and the last probes are off (hold). So
 * the spending never runs ahead of the earnings by more than the credit and
 * the watcher's lag, over the run and over any stretch of it, and a quiet
 * target stays attached.
 *
 * Every interval of CP_BUDGET_INTERVAL_NS holds too, not only the run: the
 * account keeps no more than what the target earns in CP_GUARD_BANK_NS at
 * its last measured CPU rate (or a window's opening balance, when more),
 * the rest is forfeit, so that a target that ran long without allocating
 * cannot spend all it earned in one later interval. Since an interval may
 * begin with that much in the account, the earnings are the budget's share
 * of the CPU time scaled by CP_BUDGET_INTERVAL_NS / (CP_BUDGET_INTERVAL_NS
 * + CP_GUARD_BANK_NS): a full bank and an interval's earnings together stay
 * inside the interval's share.
 * --max-alloc-rate stays a hard cap beside it; the longer time off wins.
 *
 * Pure: user/live/alloc_windows.c counts calls in BPF (alloc_calls), feeds them
 * and the target's CPU time here once per tick and detaches or re-attaches as
 * told.
 */
#ifndef CP_ALLOC_GUARD_H
#define CP_ALLOC_GUARD_H

#include <stdbool.h>
#include <linux/types.h>

#include "budget/intervals.h"

#define CP_GUARD_INTERVAL_NS	100000000ull   /* rates are measured over >= 100 ms */
#define CP_GUARD_BACKOFF_NS	1000000000ull  /* first back-off: 1 s */
#define CP_GUARD_MAX_BACKOFF_NS 60000000000ull /* at most 60 s */

#define CP_GUARD_MIN_OFF_NS  10000000ull /* time off shorter than this: stay attached */
#define CP_GUARD_MIN_CPU_PPM 10000u	 /* a target is taken to run at least 1 % of a CPU */
/* a budget window: short, since a hot allocator spends a window's worth at once */
#define CP_GUARD_BUDGET_WINDOW_NS 5000000ull
/* the account's credit at the start: the share of half a second of one CPU */
#define CP_GUARD_CREDIT_NS 500000000ull
#define CP_GUARD_MIN_CALLS 64u /* a window is opened for at least this many calls */
/*
 * the account keeps at most what 3 s of the target's CPU time earn, and a
 * storm's window opens once it holds nine tenths of that: a window every
 * 3 s or so, where each costs the profiler ~10 ms (alloc_guard.c, open_ns())
 */
#define CP_GUARD_BANK_NS 3000000000ull
/*
 * Calls a cut window takes past its allowance before the watcher sees them
 * (BPF adds each thread's calls in batches of CP_ALLOC_COUNT_BATCH) and
 * while the probes come off, until one was measured: two threads' batches
 */
#define CP_GUARD_LATE_CALLS 128u
/*
 * The target's CPU rate is measured over spans of at least this: its time
 * comes in clock ticks (10 ms at 100 Hz), so a 5 ms window reads 0 or 10 ms
 * of CPU, and a window's own rate said "1 %" or "two CPUs" by chance
 */
#define CP_GUARD_CPU_SPAN_NS 500000000ull

struct cp_alloc_guard_cfg {
	__u64 max_rate;	   /* allocator calls per second; 0: no cap */
	__u32 budget_ppm;  /* share of the target's CPU time the calls may cost; 0: none */
	__u64 call_ns;	   /* what a probed call costs the target (budget/budget.h) */
	__u64 window_ns;   /* shortest budget window */
	__u64 interval_ns; /* shortest measuring interval */
	__u64 backoff_ns;  /* first back-off */
	__u64 max_backoff_ns;
};

/* --max-alloc-rate @max_rate with the default intervals, no budget. */
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
	__u64 span_start_ns;	/* start of the span the target's CPU rate is measured over */
	__u64 span_cpu_ns;	/* the target's CPU time in it so far */
	__u64 cpu_ppm;		/* of one CPU, the target's rate over the last whole span */
	__u64 last_tick_ns;	/* the last tick's time */
	__u64 rate_until_ns;	/* --max-alloc-rate: no window before this */
	__u64 attached_ns;	/* time attached (completed windows) */
	__u64 budget_offs;	/* back-offs the budget asked for (of backoffs) */
	__u64 earned_ns;	/* the account: budget_ppm of the target's CPU time so far */
	__u64 spent_ns;		/* what the calls (and charges) cost so far */
	__u64 forfeit_ns;	/* earnings past the bank's cap, never to be spent */
	__u64 cuts;		/* windows cut off the loop (cp_alloc_guard_cut()) */
	__u64 cut_ns;		/* the start of a cut window whose calls are still to come */
	__u64 cut_allow;	/* the allowance it was cut at */
	__u64 late_calls;	/* calls the last cut window took past its allowance */
	/*
	 * Set by the caller before a tick: the last probes are still coming
	 * off. Attaching meanwhile waits on the kernel's unregistering (100 ms
	 * and more here) with the window already open and nothing to cut it,
	 * so a window that is due waits for a tick without it.
	 */
	bool hold;
	__u64 holds; /* ticks a due window waited so */
};

/* A guard starting to measure at @now_ns. */
void cp_alloc_guard_init(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			 __u64 now_ns);

/*
 * One tick at @now_ns with @calls counted and @cpu_ns of the target's CPU
 * time since the previous tick (0: unknown, taken as one CPU's worth).
 * Returns what to do with the probes; when it returns CP_GUARD_DETACH the
 * caller must detach them (calls counted while backed off are ignored) and
 * attach them again on CP_GUARD_ATTACH.
 */
enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 cpu_ns, __u64 now_ns);

/*
 * Charges @ns more to the account: what the calls counted at a tick cost on
 * top of their price (the exit points' traps, a revised unit cost).
 */
void cp_alloc_guard_charge(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			   __u64 ns);

/*
 * Budget windows: the calls the open window may still take before the
 * account is spent, less the calls the last cut window took late (at least
 * 0); ~0ull when there is no budget or the probes are off.
 */
__u64 cp_alloc_guard_allowance(const struct cp_alloc_guard *g,
			       const struct cp_alloc_guard_cfg *cfg);

/*
 * The probes were detached at @now_ns off the loop because the allowance
 * @allow (calls past the last tick) was reached: the window ends there, as
 * if a tick had said CP_GUARD_DETACH. The calls it took are still to come
 * with the next tick, which measures how many came late.
 */
void cp_alloc_guard_cut(struct cp_alloc_guard *g, __u64 allow, __u64 now_ns);

/*
 * The time of the guard's next decision: the end of the back-off, or the end
 * of the shortest window; ticking before it changes nothing. 0: none (no
 * guard).
 */
__u64 cp_alloc_guard_next_ns(const struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg);

#endif /* CP_ALLOC_GUARD_H */
