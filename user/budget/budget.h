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
 *   forced ring-buffer wakeups   at most a sixteenth: the shortest time
 *                                between two on one CPU;
 *   allocation probes            the rest: attached in windows whose duty
 *                                cycle keeps calls x call cost inside it
 *                                (budget/alloc_guard.h).
 *
 * A tick costs the CPU it lands on whatever it interrupts, so its share is
 * against each CPU's time; hits and allocator calls happen only in the
 * targets, so theirs are against the targets' CPU time: the hit rate is
 * planned for one CPU's worth and follows the targets' use below that
 * (cp_budget_bp_rate()), the windows follow each target's. The estimate is kept
 * for the whole run, for each CPU (against its time) and for each probed
 * process (against its CPU time). Pure.
 */
#ifndef CP_BUDGET_H
#define CP_BUDGET_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_PPM		       1000000u
#define CP_BUDGET_PPM_CMD      50000u /* `-- CMD`: 5 % (a developer's run: detection first) */
#define CP_BUDGET_PPM_LIVE     10000u /* -p and -a: 1 % (a live service) */
#define CP_BUDGET_TICK_SHARE   2      /* ticks: at most 1/2 of the budget */
#define CP_BUDGET_BP_SHARE     4      /* breakpoint hits: at most 1/4 */
#define CP_BUDGET_WAKEUP_SHARE 16     /* forced wakeups: at most 1/16 */
/*
 * The tick's program (on_tick) times itself only once ticks come; the plan
 * reserves for it this part of the calibrated tick (a quarter; measured
 * here: ~2 us on 12-21 us), or what it measured if more
 */
#define CP_BUDGET_TICK_PROG_PART 4
/*
 * Kept for the system-call programs, on with the allocation windows: while
 * attached they cost every system call of the machine, the targets' own
 * and others', which the windows' account cannot tell apart (1/16)
 */
#define CP_BUDGET_SYSCALL_SHARE 16
#define CP_BUDGET_MIN_WAKEUP_NS 1000000ull /* never two forced wakeups within 1 ms */
#define CP_BUDGET_MAX_CPUS	256	   /* CPUs estimated one by one (the rest in the highest) */
#define CP_BUDGET_TOP_PROCS	8	   /* processes shown, the costliest */
#define CP_BUDGET_MIN_SOFT_HZ	10	   /* below this a soft run learns nothing */

/* What one probe costs a target on this machine, in ns; 0: not measured. */
struct cp_unit_costs {
	__u64 tick_ns;	    /* a cpu-clock tick: the timer interrupt and the sample, calibrated */
	__u64 uprobe_ns;    /* an entry uprobe trap */
	__u64 uretprobe_ns; /* a return-probe trap (its entry trap not included) */
	__u64 bp_hit_ns;    /* a hardware breakpoint hit */
	__u64 wakeup_ns;    /* a forced ring-buffer wakeup (irq_work self-IPI, waking the reader) */
	/* a system call's slow path while the raw sys_enter/sys_exit programs are attached */
	__u64 syscall_ns;
	/*
	 * the allocation probes' BPF programs per call, entry and return:
	 * measured on the targets' own first calls (the kernel's run-time
	 * stats), 0 until then
	 */
	__u64 alloc_prog_ns;
	/* the raw sys_enter and sys_exit programs' own run time per system call, measured so */
	__u64 syscall_prog_ns;
	/* on_tick's own run time per target's tick, timed in it over the run; 0: not yet */
	__u64 tick_prog_ns;
};

/* An allocator call probed: its entry trap, its return trap and their programs. */
static inline __u64 cp_unit_call_ns(const struct cp_unit_costs *u)
{
	return u->uprobe_ns + u->uretprobe_ns + u->alloc_prog_ns;
}

/*
 * An exit point's trap (user/decode/exit_points.h: a throwing operator new
 * of tcmalloc or jemalloc): an int3 uprobe on a jcc the kernel emulates, as
 * the calibration's entry probe is on an emulated nop, so a uprobe trap. It
 * fires on every pass, calls that are not the probed one's included; the
 * call it ends is priced as a return-probed one too (cp_unit_call_ns()), a
 * return trap more than it costs: the estimate does not undercount.
 */
static inline __u64 cp_unit_exit_ns(const struct cp_unit_costs *u)
{
	return u->uprobe_ns;
}

/* A system call while the system-call programs are attached: the slow path and the programs. */
static inline __u64 cp_unit_syscall_ns(const struct cp_unit_costs *u)
{
	return u->syscall_ns + u->syscall_prog_ns;
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
	__u64 wakeup_min_ns;	  /* shortest time between two forced wakeups on a CPU */
	__u32 wakeup_ppm;	  /* what that costs a CPU at most */
	__u32 syscall_ppm;	  /* kept for the system-call programs (CP_BUDGET_SYSCALL_SHARE) */
	__u32 alloc_ppm;	  /* what is left for the allocation probes */
};

/*
 * Plans a budget of @budget_ppm (0: none, every asked rate as asked) with the
 * unit costs @u: the soft frequency (@soft: a --source soft run, asking
 * @freq_hz), the breakpoint hit rate (asking @bp_rate; 0 stays 0), the
 * forced wakeups' spacing (at least CP_BUDGET_MIN_WAKEUP_NS) and the
 * allocation probes' share. A frequency the budget would put under
 * CP_BUDGET_MIN_SOFT_HZ stays at that floor, and the plan says what it costs.
 */
void cp_budget_plan(__u32 budget_ppm, const struct cp_unit_costs *u, bool soft, __u32 freq_hz,
		    __u32 bp_rate, struct cp_budget_plan *out);

/* What one probed process spent: its allocator calls against its CPU time. */
struct cp_budget_proc {
	__s32 pid;
	__u64 cpu_ns;	   /* its CPU time while probed */
	__u64 alloc_calls; /* its allocator calls while the probes were attached */
	__u64 exit_traps;  /* its share of the exit points' traps */
	__u64 alloc_ns;	   /* the estimate: calls x call cost, traps x exit cost */
	__u32 ppm;	   /* everything: its calls, and the run's tick, hit and wakeup shares */
};

/*
 * The breakpoint hit rate for the next second: the planned rate @planned
 * (against one CPU's worth of target time) scaled by the CPUs the targets
 * used lately, @cpu_ns over @wall_ns, when that is less than one; at
 * least 1 hit/s while @planned is not 0. A target that runs a tenth of a
 * CPU gets a tenth of the hits, so the hits stay inside their share of its
 * CPU time. @wall_ns 0: @planned.
 */
__u32 cp_budget_bp_rate(__u32 planned, __u64 cpu_ns, __u64 wall_ns);

/* What a run spent, estimated from its counts and the unit costs. */
struct cp_budget_spent {
	__u64 target_cpu_ns; /* the targets' CPU time (-a: every CPU's busy time) */
	__u64 wall_ns;	     /* how long the probes ran: each CPU's time */
	__u64 ticks;	     /* ticks that landed on the targets */
	__u64 bp_hits;
	__u64 wakeups;	   /* forced ring-buffer wakeups */
	__u64 syscalls;	   /* system calls of any process while the syscall programs were on */
	__u64 alloc_calls; /* allocator calls while the probes were attached */
	__u64 exit_traps;  /* exit points' traps (cp_unit_exit_ns()) */
	__u64 alloc_attached_ns; /* time the allocation probes were attached */
	__u64 alloc_run_ns;	 /* time they could have been (the run, per target) */
	__u64 ticks_ns;		 /* the estimates: counts x unit costs */
	__u64 bp_ns;
	__u64 wakeups_ns;
	__u64 syscalls_ns;
	__u64 alloc_ns; /* the calls and the exit points' traps */
	/* per CPU, against its time (wall_ns) */
	__u32 nr_cpus;			   /* in cpu_ppm[] */
	__u32 cpu_max;			   /* the CPU with the highest estimate */
	__u32 cpu_ppm[CP_BUDGET_MAX_CPUS]; /* each CPU's estimate */
	/*
	 * per interval of 10 s (budget/intervals.h), against the targets' CPU
	 * time in it: the costliest, from and to since the start
	 */
	__u64 intervals;      /* priced; 0: the run was shorter than one */
	__u64 intervals_over; /* of them over the budget when priced */
	__u32 interval_ppm;
	__u64 interval_from_ns, interval_to_ns, interval_cpu_ns;
	/*
	 * a cost known only after the fact (the programs measured again under
	 * contention, budget/prog_cost.h): by how much it raised the estimate
	 * over the one of the first measures, in ppm of that; 0: not raised
	 */
	__u32 revised_ppm;
	__u64 prog_measures; /* measures of the programs' cost, the first included */
	/* per probed process, against its CPU time: the costliest first */
	__u32 nr_procs;
	struct cp_budget_proc procs[CP_BUDGET_TOP_PROCS];
};

/* Fills the run-wide estimates of @s from its counts and @u. */
void cp_budget_estimate(const struct cp_unit_costs *u, struct cp_budget_spent *s);

/* @ns against @of_ns, in ppm, at most all of it (0 without @of_ns). */
__u32 cp_budget_ppm_against(__u64 ns, __u64 of_ns);

/* The estimate of @ns spent against @s's target CPU time, in ppm (0 without CPU time). */
__u32 cp_budget_ppm_of(const struct cp_budget_spent *s, __u64 ns);

/* Everything @s is estimated to have spent, in ns. */
__u64 cp_budget_total_ns(const struct cp_budget_spent *s);

/* Everything @s is estimated to have spent, in ppm of the targets' CPU time. */
__u32 cp_budget_total_ppm(const struct cp_budget_spent *s);

/*
 * What the probes did on one CPU, or on all (struct cp_cpu_cost's counts),
 * and what the allocation, system-call and tick programs' runs took, timed
 * in them (0: not timed).
 */
struct cp_budget_cpu_counts {
	__u64 ticks, alloc_calls, bp_hits, wakeups, syscalls, exit_traps;
	__u64 alloc_prog_ns, sys_prog_ns, tick_prog_ns;
};

/*
 * What the counts @c cost with the unit costs @u, in ns: the traps and
 * ticks at their unit costs, the programs at the run time they took where
 * @c has it (it is what they cost then: a cost per call measured later,
 * under contention, would price calls made before it at its figure),
 * else at their unit costs.
 */
__u64 cp_budget_counts_ns(const struct cp_unit_costs *u, const struct cp_budget_cpu_counts *c);

/* What the counts @c of one CPU cost it over @wall_ns of its time, in ppm (0 without time). */
__u32 cp_budget_cpu_ppm(const struct cp_unit_costs *u, const struct cp_budget_cpu_counts *c,
			__u64 wall_ns);

/* Adds CPU @cpu's estimate @ppm to @s (a CPU past CP_BUDGET_MAX_CPUS counts for the highest). */
void cp_budget_add_cpu(struct cp_budget_spent *s, __u32 cpu, __u32 ppm);

/*
 * Keeps @p in @top (@nr of CP_BUDGET_TOP_PROCS used), the largest @key
 * first, after those of an equal key; when full, the smallest goes.
 */
void cp_budget_keep_proc(struct cp_budget_proc *top, __u32 *nr, const struct cp_budget_proc *p,
			 __u64 (*key)(const struct cp_budget_proc *));

/*
 * Estimates process @p (pid, cpu_ns, alloc_calls set) with @u and the
 * run-wide shares of @s (cp_budget_estimate() first) and keeps it in
 * @s->procs if it is among the CP_BUDGET_TOP_PROCS costliest (by time
 * spent on it).
 */
void cp_budget_add_proc(const struct cp_unit_costs *u, struct cp_budget_spent *s,
			struct cp_budget_proc p);

#endif /* CP_BUDGET_H */
