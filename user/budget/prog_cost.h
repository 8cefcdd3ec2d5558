/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the allocation probes' BPF programs cost per allocator call, from the
 * kernel's run-time stats of the programs (bpf_prog_info's run_time_ns and
 * run_cnt, counted while BPF_ENABLE_STATS is on): the calibration at start
 * times the traps with no program, and on a 4-thread malloc program the
 * programs (task storage, the ring buffer record) were as much again. Pure.
 */
#ifndef CP_PROG_COST_H
#define CP_PROG_COST_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_PROG_COST_CALLS 512 /* calls measured before the figure is taken */

/* Counters summed over the programs, at one moment. */
struct cp_prog_cost {
	__u64 run_ns; /* run time of every program, entry and return */
	__u64 calls;  /* runs of the entry programs: one per call */
};

/*
 * Run time per call between @then and @now into @ns, true when at least
 * @min_calls calls lie between them (fewer: not yet, @ns untouched). At
 * least 1 ns: a program that ran costs something.
 */
bool cp_prog_cost_per_call(const struct cp_prog_cost *now, const struct cp_prog_cost *then,
			   __u64 min_calls, __u64 *ns);

#endif /* CP_PROG_COST_H */
