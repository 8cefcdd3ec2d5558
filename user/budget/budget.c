// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The overhead budget's plan and estimates. */
#include <string.h>

#include "budget/budget.h"

/* Events per second whose cost @unit_ns each fills @ppm of a CPU. */
static __u64 rate_for(__u32 ppm, __u64 unit_ns)
{
	return (__u64)ppm * 1000u / unit_ns;
}

/* What @rate events per second of @unit_ns each cost a CPU, in ppm. */
static __u32 ppm_for(__u64 rate, __u64 unit_ns)
{
	__u64 ppm = rate * unit_ns / 1000u;

	return ppm > CP_PPM ? CP_PPM : (__u32)ppm;
}

/* A tick as the plan prices it: calibrated, with its program's reserve. */
static __u64 planned_tick_ns(const struct cp_unit_costs *u)
{
	__u64 prog = u->tick_ns / CP_BUDGET_TICK_PROG_PART;

	return u->tick_ns + (u->tick_prog_ns > prog ? u->tick_prog_ns : prog);
}

void cp_budget_plan(__u32 budget_ppm, const struct cp_unit_costs *u, bool soft, __u32 freq_hz,
		    __u32 bp_rate, struct cp_budget_plan *out)
{
	__u32 spent;

	memset(out, 0, sizeof(*out));
	out->budget_ppm = budget_ppm;
	out->soft_freq_asked_hz = soft ? freq_hz : 0;
	out->soft_freq_hz = out->soft_freq_asked_hz;
	out->bp_rate_asked = bp_rate;
	out->bp_rate = bp_rate;
	if (!budget_ppm)
		return;
	if (soft && u->tick_ns) {
		__u64 tick = planned_tick_ns(u);
		__u64 max = rate_for(budget_ppm / CP_BUDGET_TICK_SHARE, tick);

		if (max < CP_BUDGET_MIN_SOFT_HZ)
			max = CP_BUDGET_MIN_SOFT_HZ;
		if (out->soft_freq_hz > max)
			out->soft_freq_hz = (__u32)max;
		out->tick_ppm = ppm_for(out->soft_freq_hz, tick);
	}
	if (bp_rate && u->bp_hit_ns) {
		__u64 max = rate_for(budget_ppm / CP_BUDGET_BP_SHARE, u->bp_hit_ns);

		if (out->bp_rate > max)
			out->bp_rate = (__u32)max;
		out->bp_ppm = ppm_for(out->bp_rate, u->bp_hit_ns);
	}
	out->wakeup_min_ns = CP_BUDGET_MIN_WAKEUP_NS;
	if (u->wakeup_ns) {
		__u64 max = rate_for(budget_ppm / CP_BUDGET_WAKEUP_SHARE, u->wakeup_ns);
		__u64 min_ns = max ? 1000000000ull / max : 1000000000ull;

		if (out->wakeup_min_ns < min_ns)
			out->wakeup_min_ns = min_ns;
		out->wakeup_ppm = ppm_for(1000000000ull / out->wakeup_min_ns, u->wakeup_ns);
	}
	out->syscall_ppm = budget_ppm / CP_BUDGET_SYSCALL_SHARE;
	spent = out->tick_ppm + out->bp_ppm + out->wakeup_ppm + out->syscall_ppm;
	out->alloc_ppm = spent < budget_ppm ? budget_ppm - spent : 0;
}

__u32 cp_budget_bp_rate(__u32 planned, __u64 cpu_ns, __u64 wall_ns)
{
	__u64 rate;

	if (!planned || !wall_ns || cpu_ns >= wall_ns)
		return planned;
	rate = (__u64)((unsigned __int128)planned * cpu_ns / wall_ns);
	return rate ? (__u32)rate : 1;
}

void cp_budget_estimate(const struct cp_unit_costs *u, struct cp_budget_spent *s)
{
	s->ticks_ns = s->ticks * (u->tick_ns + u->tick_prog_ns);
	s->bp_ns = s->bp_hits * u->bp_hit_ns;
	s->wakeups_ns = s->wakeups * u->wakeup_ns;
	s->syscalls_ns = s->syscalls * cp_unit_syscall_ns(u);
	s->alloc_ns = s->alloc_calls * cp_unit_call_ns(u) + s->exit_traps * cp_unit_exit_ns(u);
}

/* @ns against @of_ns, in ppm, at most all of it (0 without @of_ns). */
__u32 cp_budget_ppm_against(__u64 ns, __u64 of_ns)
{
	unsigned __int128 ppm;

	if (!of_ns)
		return 0;
	ppm = (unsigned __int128)ns * CP_PPM / of_ns;
	return ppm > CP_PPM ? CP_PPM : (__u32)ppm;
}

__u32 cp_budget_ppm_of(const struct cp_budget_spent *s, __u64 ns)
{
	return cp_budget_ppm_against(ns, s->target_cpu_ns);
}

__u64 cp_budget_total_ns(const struct cp_budget_spent *s)
{
	return s->ticks_ns + s->bp_ns + s->wakeups_ns + s->syscalls_ns + s->alloc_ns;
}

__u32 cp_budget_total_ppm(const struct cp_budget_spent *s)
{
	return cp_budget_ppm_of(s, cp_budget_total_ns(s));
}

__u64 cp_budget_counts_ns(const struct cp_unit_costs *u, const struct cp_budget_cpu_counts *c)
{
	__u64 alloc_prog = c->alloc_prog_ns ? c->alloc_prog_ns : c->alloc_calls * u->alloc_prog_ns;
	__u64 sys_prog = c->sys_prog_ns ? c->sys_prog_ns : c->syscalls * u->syscall_prog_ns;
	__u64 tick_prog = c->tick_prog_ns ? c->tick_prog_ns : c->ticks * u->tick_prog_ns;

	return c->ticks * u->tick_ns + tick_prog +
	       c->alloc_calls * (u->uprobe_ns + u->uretprobe_ns) + alloc_prog +
	       c->exit_traps * cp_unit_exit_ns(u) + c->bp_hits * u->bp_hit_ns +
	       c->wakeups * u->wakeup_ns + c->syscalls * u->syscall_ns + sys_prog;
}

__u32 cp_budget_cpu_ppm(const struct cp_unit_costs *u, const struct cp_budget_cpu_counts *c,
			__u64 wall_ns)
{
	return cp_budget_ppm_against(cp_budget_counts_ns(u, c), wall_ns);
}

void cp_budget_add_cpu(struct cp_budget_spent *s, __u32 cpu, __u32 ppm)
{
	__u32 idx = cpu < CP_BUDGET_MAX_CPUS ? cpu : CP_BUDGET_MAX_CPUS - 1;

	if (idx >= s->nr_cpus)
		s->nr_cpus = idx + 1;
	if (ppm > s->cpu_ppm[idx])
		s->cpu_ppm[idx] = ppm;
	if (ppm > s->cpu_ppm[s->cpu_max])
		s->cpu_max = idx;
}

/* What @p's time spent on the probes is estimated at, in ns. */
static __u64 proc_spent_ns(const struct cp_budget_proc *p)
{
	return (__u64)((unsigned __int128)p->cpu_ns * p->ppm / CP_PPM);
}

void cp_budget_keep_proc(struct cp_budget_proc *top, __u32 *nr, const struct cp_budget_proc *p,
			 __u64 (*key)(const struct cp_budget_proc *))
{
	__u32 at = 0;

	while (at < *nr && key(&top[at]) >= key(p))
		at++;
	if (at >= CP_BUDGET_TOP_PROCS)
		return;
	if (*nr < CP_BUDGET_TOP_PROCS)
		(*nr)++;
	memmove(&top[at + 1], &top[at], (*nr - 1 - at) * sizeof(*top));
	top[at] = *p;
}

void cp_budget_add_proc(const struct cp_unit_costs *u, struct cp_budget_spent *s,
			struct cp_budget_proc p)
{
	__u32 shared = cp_budget_ppm_of(s, s->ticks_ns + s->bp_ns + s->wakeups_ns + s->syscalls_ns);

	p.alloc_ns = p.alloc_calls * cp_unit_call_ns(u) + p.exit_traps * cp_unit_exit_ns(u);
	p.ppm = cp_budget_ppm_against(p.alloc_ns, p.cpu_ns);
	p.ppm = p.ppm + shared > CP_PPM ? CP_PPM : p.ppm + shared;
	/* the costliest first */
	cp_budget_keep_proc(s->procs, &s->nr_procs, &p, proc_spent_ns);
}
