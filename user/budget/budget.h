/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The overhead budget (--overhead PCT): the CPU time the profiler's probes
 * may take from the targets, as a share of the targets' own CPU time. Every
 * probe has a unit cost on this machine, measured at start (live/calibrate.h):
 * a timer tick, an entry uprobe trap, a return-probe trap, a breakpoint hit.
 * The budget is split between the sources, each throttled to its share:
 *
 *   timer ticks (--source soft)  at most half: the frequency is chosen so
 *                                that freq x tick cost stays inside it;
 *   breakpoint hits              at most a quarter: the hit rate cap;
 *   allocation probes            the rest: attached in windows whose duty
 *                                cycle keeps calls x call cost inside it
 *                                (budget/alloc_guard.h).
 *
 * A tick costs the CPU it lands on whatever it interrupts, so its share is
 * against each CPU's time; hits and allocator calls happen only in the
 * targets, so theirs are against the targets' CPU time, taken as at least
 * one CPU's worth when the hit rate is set at start. Pure.
 */
#ifndef CP_BUDGET_H
#define CP_BUDGET_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_PPM		      1000000u
#define CP_BUDGET_PPM_CMD     50000u /* `-- CMD`: 5 % (a developer's run: detection first) */
#define CP_BUDGET_PPM_LIVE    10000u /* -p and -a: 1 % (a live service) */
#define CP_BUDGET_TICK_SHARE  2	     /* ticks: at most 1/2 of the budget */
#define CP_BUDGET_BP_SHARE    4	     /* breakpoint hits: at most 1/4 */
#define CP_BUDGET_MIN_SOFT_HZ 10     /* below this a soft run learns nothing */

/* What one probe costs a target on this machine, in ns; 0: not measured. */
struct cp_unit_costs {
	__u64 tick_ns;	    /* a cpu-clock tick (timer interrupt and on_tick) */
	__u64 uprobe_ns;    /* an entry uprobe trap */
	__u64 uretprobe_ns; /* a return-probe trap (its entry trap not included) */
	__u64 bp_hit_ns;    /* a hardware breakpoint hit */
	/*
	 * the allocation probes' BPF programs per call, entry and return:
	 * measured on the targets' own first calls (the kernel's run-time
	 * stats), 0 until then
	 */
	__u64 alloc_prog_ns;
};

/* An allocator call probed: its entry trap, its return trap and their programs. */
static inline __u64 cp_unit_call_ns(const struct cp_unit_costs *u)
{
	return u->uprobe_ns + u->uretprobe_ns + u->alloc_prog_ns;
}

/* The sources' shares of a budget of @budget_ppm, chosen at start. */
struct cp_budget_plan {
	__u32 budget_ppm;	  /* of the targets' CPU time; 0: no budget */
	__u32 soft_freq_hz;	  /* ticks per second per CPU; 0: not a soft run */
	__u32 soft_freq_asked_hz; /* --soft-freq */
	__u32 bp_rate;		  /* breakpoint hits per second */
	__u32 bp_rate_asked;	  /* --max-bp-rate */
	__u32 tick_ppm;		  /* what the chosen frequency costs */
	__u32 bp_ppm;		  /* what the hit rate costs, on one CPU of target time */
	__u32 alloc_ppm;	  /* what is left for the allocation probes */
};

/*
 * Plans a budget of @budget_ppm (0: none, every asked rate as asked) with the
 * unit costs @u: the soft frequency (@soft: a --source soft run, asking
 * @freq_hz), the breakpoint hit rate (asking @bp_rate; 0 stays 0) and the
 * allocation probes' share. A frequency the budget would put under
 * CP_BUDGET_MIN_SOFT_HZ stays at that floor, and the plan says what it costs.
 */
void cp_budget_plan(__u32 budget_ppm, const struct cp_unit_costs *u, bool soft, __u32 freq_hz,
		    __u32 bp_rate, struct cp_budget_plan *out);

/* What a run spent, estimated from its counts and the unit costs. */
struct cp_budget_spent {
	__u64 target_cpu_ns; /* the targets' CPU time (-a: every CPU's busy time) */
	__u64 ticks;	     /* ticks that landed on the targets */
	__u64 bp_hits;
	__u64 alloc_calls;	 /* allocator calls while the probes were attached */
	__u64 alloc_attached_ns; /* time the allocation probes were attached */
	__u64 alloc_run_ns;	 /* time they could have been (the run, per target) */
	__u64 ticks_ns;		 /* the estimates: counts x unit costs */
	__u64 bp_ns;
	__u64 alloc_ns;
};

/* Fills the estimates of @s from its counts and @u. */
void cp_budget_estimate(const struct cp_unit_costs *u, struct cp_budget_spent *s);

/* The estimate of @ns spent against @s's target CPU time, in ppm (0 without CPU time). */
__u32 cp_budget_ppm_of(const struct cp_budget_spent *s, __u64 ns);

#endif /* CP_BUDGET_H */
