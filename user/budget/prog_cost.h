/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the allocation probes' BPF programs cost per allocator call, from
 * the run time the programs count themselves (struct cp_cpu_cost's
 * alloc_prog_ns and alloc_prog_calls, bpf/cpu_cost.bpf.h; not the kernel's
 * run-time stats, whose every turn on or off rewrites kernel code on every
 * CPU, about 25 ms of the profiler's CPU on this VM): the calibration at start
 * times the traps with no program, and on a 4-thread malloc program the
 * programs (task storage, the ring buffer record) were as much again. Pure.
 */
#ifndef CP_PROG_COST_H
#define CP_PROG_COST_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_PROG_COST_CALLS 512 /* calls measured before the figure is taken */
/*
 * The cost is measured again CP_PROG_COST_AGAIN_NS after each measure,
 * over CP_PROG_COST_AGAIN_CALLS calls: under contention (threads of a storm on every CPU, a ring
 * buffer's lock) the programs cost more than on the first calls, a cost known only after the fact.
 * A measure spans at most CP_PROG_COST_SPAN_NS: a storm's windows are short and far apart.
 */
#define CP_PROG_COST_AGAIN_NS	 5000000000ull
#define CP_PROG_COST_SPAN_NS	 3000000000ull
#define CP_PROG_COST_AGAIN_CALLS 128

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

/*
 * A later measure @measured_ns of a cost per call against the figure
 * @have_ns the estimate and the account use: raised to it when more, and
 * returns what each call counted so far owes on top (0: not raised). The
 * figure is never lowered: the estimate must not undercount.
 */
__u64 cp_prog_cost_raise(__u64 *have_ns, __u64 measured_ns);

/*
 * By how much an estimate of @first_ns became @revised_ns, in ppm of
 * @first_ns (0 when not raised or nothing was estimated).
 */
__u32 cp_prog_cost_revised_ppm(__u64 first_ns, __u64 revised_ns);

#endif /* CP_PROG_COST_H */
