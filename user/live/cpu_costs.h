/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probes' per-CPU counts (struct cp_cpu_cost, the per-CPU array
 * cpu_costs of bpf/cpu_cost.bpf.h) read from the skeleton into the overhead
 * budget's estimate: each CPU's share of its time, and the forced wakeups.
 */
#ifndef CP_CPU_COSTS_H
#define CP_CPU_COSTS_H

#include "budget/budget.h"
#include "budget/intervals.h"

struct cacheperf;
struct cp_cpu_cost;

/*
 * Adds every CPU's estimate over @s->wall_ns (cp_budget_cpu_ppm() with @u)
 * and the forced wakeups, system calls and exit points' traps of all CPUs
 * to @s. Returns 0 or a negative errno
 * (the map could not be read: @s is left as it was).
 */
int cp_cpu_costs__estimate(struct cacheperf *skel, const struct cp_unit_costs *u,
			   struct cp_budget_spent *s);

/*
 * All CPUs' counts added up into @out (last_wakeup_ns left 0), for the
 * allocation windows' account. Returns 0 or a negative errno.
 */
int cp_cpu_costs__sum(struct cacheperf *skel, struct cp_cpu_cost *out);

/*
 * -a's window: sets each CPU's mark (alloc_cut_cpu of bpf/alloc.bpf.c) so
 * that one CPU reaches its own before all CPUs' allocator calls, read now,
 * add up to @until (each gets its count plus an equal share of what is
 * left, rounded up: at least one call); @until 0 clears them. Returns 0 or
 * a negative errno.
 */
int cp_cpu_costs__mark_calls(struct cacheperf *skel, __u64 until);

/*
 * All CPUs' counts now into @r->c, for the estimate per interval (@r's time
 * and CPU time are the caller's). Returns 0 or a negative errno.
 */
int cp_cpu_costs__reading(struct cacheperf *skel, struct cp_budget_reading *r);

#endif /* CP_CPU_COSTS_H */
