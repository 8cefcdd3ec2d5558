/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The overhead budget's estimate per interval: a budget that holds only on
 * average over a long run is not one, since users read the report of a
 * 10-second run too. The run loop takes the probes' counts (all CPUs, every
 * source) and the targets' CPU time once per CP_BUDGET_STEP_NS; each
 * CP_BUDGET_INTERVAL_NS that ends at a step is priced (cp_budget_counts_ns():
 * the traps at the unit costs, the programs at the run time they took in
 * it) against the targets' CPU time in it, and the costliest is kept, with
 * its counts, so that the end of the run prices it again with the final
 * unit costs (which change only the counts the programs did not time). A
 * run shorter than an interval has none: its whole-run estimate is its
 * only one. Bounded: the last CP_BUDGET_STEPS + 1 readings. Pure.
 */
#ifndef CP_BUDGET_INTERVALS_H
#define CP_BUDGET_INTERVALS_H

#include <stdbool.h>
#include <linux/types.h>

#include "budget/budget.h"

#define CP_BUDGET_STEP_NS     1000000000ull /* a reading a second */
#define CP_BUDGET_STEPS	      10u	    /* an interval: 10 steps, 10 s */
#define CP_BUDGET_INTERVAL_NS (CP_BUDGET_STEPS * CP_BUDGET_STEP_NS)

/* One reading: when, the targets' CPU time so far, the probes' counts so far. */
struct cp_budget_reading {
	__u64 at_ns;
	__u64 cpu_ns;
	struct cp_budget_cpu_counts c;
};

/* An interval: its bounds (from the run's start), its counts and CPU time, its estimate. */
struct cp_budget_interval {
	__u64 from_ns, to_ns;
	__u64 cpu_ns;
	struct cp_budget_cpu_counts c;
	__u32 ppm;
};

struct cp_budget_intervals {
	__u64 start_ns; /* the run's start: the bounds are from it */
	__u64 next_ns;	/* the next reading is due then */
	struct cp_budget_reading ring[CP_BUDGET_STEPS + 1];
	__u32 nr, head; /* readings in ring[], the oldest at head */
	__u64 count;	/* intervals priced */
	__u64 over;	/* of them over the budget when priced */
	struct cp_budget_interval worst;
};

/* No reading yet; the first is due at @start_ns. */
void cp_budget_intervals_init(struct cp_budget_intervals *iv, __u64 start_ns);

/* True when a reading is due at @now_ns. */
bool cp_budget_intervals_due(const struct cp_budget_intervals *iv, __u64 now_ns);

/*
 * Takes reading @r (its at_ns: now). When it ends an interval (a reading
 * CP_BUDGET_INTERVAL_NS or more before it, the latest such), that interval
 * is priced with @u against a budget of @budget_ppm, and kept when it is
 * the costliest so far. The next reading is due a step later.
 */
void cp_budget_intervals_add(struct cp_budget_intervals *iv, const struct cp_unit_costs *u,
			     __u32 budget_ppm, const struct cp_budget_reading *r);

/*
 * What the counts @c cost against @cpu_ns of the targets' CPU time, in
 * ppm: all of it when they cost anything and the targets did not run.
 */
__u32 cp_budget_interval_ppm(const struct cp_unit_costs *u, const struct cp_budget_cpu_counts *c,
			     __u64 cpu_ns);

/* The costliest interval priced again with @u into @out; false when there was none. */
bool cp_budget_intervals_worst(const struct cp_budget_intervals *iv, const struct cp_unit_costs *u,
			       struct cp_budget_interval *out);

#endif /* CP_BUDGET_INTERVALS_H */
