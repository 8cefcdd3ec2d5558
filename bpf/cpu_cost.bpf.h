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

/*
 * An allocation program that began at @t0 (bpf_ktime_get_ns()) ends: its run
 * time on this CPU's counts, and an allocator call when it is an entry
 * program (@entry). Timed in the programs, not by the kernel's run-time
 * stats, which flip a static key (kernel code rewritten on every CPU) each
 * time they are turned on or off and then time every BPF program of the
 * machine.
 */
static __always_inline void cp_alloc_prog_timed(__u64 t0, bool entry)
{
	struct cp_cpu_cost *c = cp_cpu_cost();

	if (!c)
		return;
	c->alloc_prog_ns += bpf_ktime_get_ns() - t0;
	c->alloc_prog_calls += entry;
}

/* The value of @body, an allocation program's, its run time counted as above. */
#define cp_alloc_timed(entry, body)                                                                \
	({                                                                                         \
		__u64 __t0 = bpf_ktime_get_ns();                                                   \
		int __ret = (body);                                                                \
                                                                                                   \
		cp_alloc_prog_timed(__t0, (entry));                                                \
		__ret;                                                                             \
	})

/* The same for a raw system-call program, on this CPU's counts @c (NULL: none). */
static __always_inline void cp_sys_prog_timed(struct cp_cpu_cost *c, __u64 t0)
{
	if (c)
		c->sys_prog_ns += bpf_ktime_get_ns() - t0;
}

#endif /* CACHEPERF_CPU_COST_BPF_H */
