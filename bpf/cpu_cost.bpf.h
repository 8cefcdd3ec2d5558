/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-CPU counts of what the probes cost (struct cp_cpu_cost): ticks,
 * allocator calls, breakpoint hits, forced wakeups and system calls under
 * the syscall programs, of the CPU a program runs on. A per-CPU array:
 * plain adds, no atomics, one lookup. User space sums or reads them per
 * CPU (user/live/cpu_costs.c) for the overhead budget's per-CPU estimate.
 */
#ifndef CACHEPERF_CPU_COST_BPF_H
#define CACHEPERF_CPU_COST_BPF_H

#include "cacheperf.bpf.h"

CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_cpu_cost);
} cpu_costs SEC(".maps");

/* This CPU's counts; NULL never in practice (a one-entry per-CPU array). */
static __always_inline struct cp_cpu_cost *cp_cpu_cost(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_costs, &zero);
}

#endif /* CACHEPERF_CPU_COST_BPF_H */
