// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The overhead budget section. */
#include "budget/intervals.h"
#include "report/report_budget.h"

#define CP_REPORT_BUDGET_CPUS  16 /* CPUs listed in the text report (JSON: all) */
#define CP_REPORT_BUDGET_PROCS 3  /* processes listed in the text report */

/* @ppm as a percentage with two decimals. */
static double pct(__u32 ppm)
{
	return ppm / 1e4;
}

/* The share of the run the allocation probes were attached, in percent. */
static double attached_pct(const struct cp_budget_spent *s)
{
	return s->alloc_run_ns ? 100.0 * (double)s->alloc_attached_ns / (double)s->alloc_run_ns : 0;
}

/* "per CPU": the highest, then each CPU's (the first CP_REPORT_BUDGET_CPUS). */
static void print_cpus(const struct cp_budget_spent *s, __u32 budget_ppm, FILE *f)
{
	if (!s->nr_cpus)
		return;
	fprintf(f, "  per CPU, of its time: highest %.2f %% (CPU %u)%s;",
		pct(s->cpu_ppm[s->cpu_max]), s->cpu_max,
		s->cpu_ppm[s->cpu_max] > budget_ppm ? ", over the budget" : "");
	for (__u32 c = 0; c < s->nr_cpus && c < CP_REPORT_BUDGET_CPUS; c++)
		fprintf(f, " %u: %.2f %%%s", c, pct(s->cpu_ppm[c]),
			c + 1 < s->nr_cpus && c + 1 < CP_REPORT_BUDGET_CPUS ? "," : "");
	fprintf(f, "%s\n", s->nr_cpus > CP_REPORT_BUDGET_CPUS ? ", ..." : "");
}

/* "per interval": the costliest interval of 10 s, or why there is none. */
static void print_intervals(const struct cp_budget_spent *s, __u32 budget_ppm, FILE *f)
{
	if (!s->intervals) {
		fprintf(f,
			"  per interval of %u s: none, the run was shorter (the run's estimate is "
			"its only one)\n",
			(unsigned)(CP_BUDGET_INTERVAL_NS / 1000000000ull));
		return;
	}
	fprintf(f,
		"  per interval of %u s, of the targets' CPU time in it: highest %.2f %%%s (%.1f s "
		"to %.1f s, their CPU time %.3f s) of %llu intervals",
		(unsigned)(CP_BUDGET_INTERVAL_NS / 1000000000ull), pct(s->interval_ppm),
		s->interval_ppm > budget_ppm ? ", over the budget" : "", s->interval_from_ns / 1e9,
		s->interval_to_ns / 1e9, s->interval_cpu_ns / 1e9,
		(unsigned long long)s->intervals);
	if (s->intervals_over)
		fprintf(f, ", %llu of them over the budget", (unsigned long long)s->intervals_over);
	fputc('\n', f);
}

/* "per process": the costliest probed processes. */
static void print_procs(const struct cp_budget_spent *s, __u32 budget_ppm, FILE *f)
{
	for (__u32 i = 0; i < s->nr_procs && i < CP_REPORT_BUDGET_PROCS; i++) {
		const struct cp_budget_proc *p = &s->procs[i];

		fprintf(f,
			"  %s process %d: %.2f %% of its %.3f s CPU time%s (allocation probes "
			"%.2f %%: %llu calls)\n",
			i ? "then" : "per process, the costliest:", (int)p->pid, pct(p->ppm),
			p->cpu_ns / 1e9, p->ppm > budget_ppm ? ", over the budget" : "",
			p->cpu_ns ? 100.0 * (double)p->alloc_ns / (double)p->cpu_ns : 0,
			(unsigned long long)p->alloc_calls);
	}
}

void cp_report_budget_print(const struct cp_report_budget *b, FILE *f)
{
	const struct cp_budget_plan *p = &b->plan;
	const struct cp_unit_costs *u = &b->unit;
	const struct cp_budget_spent *s = &b->spent;
	__u32 total = cp_budget_total_ppm(s);

	if (!p->budget_ppm)
		return;
	fprintf(f, "\nOverhead budget\n");
	fprintf(f,
		"  budget: %.2f %% of the targets' CPU time (--overhead); their CPU time %.3f s\n",
		pct(p->budget_ppm), s->target_cpu_ns / 1e9);
	fprintf(f,
		"  unit costs measured at start: timer tick %.2f us, uprobe %.2f us + return %.2f "
		"us, breakpoint hit %.2f us, forced wakeup %.2f us, system call %.2f us more under "
		"the syscall programs\n",
		u->tick_ns / 1e3, u->uprobe_ns / 1e3, u->uretprobe_ns / 1e3, u->bp_hit_ns / 1e3,
		u->wakeup_ns / 1e3, u->syscall_ns / 1e3);
	if (u->alloc_prog_ns)
		fprintf(f,
			"  as the programs timed themselves over the run: the probes' programs "
			"%.2f us per call, the system-call programs %.2f us per system call\n",
			u->alloc_prog_ns / 1e3, u->syscall_prog_ns / 1e3);
	if (u->tick_prog_ns)
		fprintf(f,
			"  the tick's program timed itself over the run: %.2f us per tick, counted "
			"with the tick\n",
			u->tick_prog_ns / 1e3);
	fprintf(f, "  chosen:");
	if (p->soft_freq_asked_hz)
		fprintf(f, " %u ticks/s per CPU (asked %u),", p->soft_freq_hz,
			p->soft_freq_asked_hz);
	fprintf(f,
		" breakpoints at most %u hits/s (asked %u), forced wakeups at most one per %.1f ms "
		"per CPU, allocation probes %.2f %%\n",
		p->bp_rate, p->bp_rate_asked, p->wakeup_min_ns / 1e6, pct(p->alloc_ppm));
	fprintf(f,
		"  estimated spent: %.2f %%%s (ticks %.2f %%, breakpoints %.2f %%, allocation "
		"probes %.2f %%: %llu calls and %llu exit-point traps, attached %.1f %% of the "
		"time, wakeups %.2f %%: %llu forced, system calls %.2f %%: %llu under the syscall "
		"programs)\n",
		pct(total), total > p->budget_ppm ? ", over the budget" : "",
		pct(cp_budget_ppm_of(s, s->ticks_ns)), pct(cp_budget_ppm_of(s, s->bp_ns)),
		pct(cp_budget_ppm_of(s, s->alloc_ns)), (unsigned long long)s->alloc_calls,
		(unsigned long long)s->exit_traps, attached_pct(s),
		pct(cp_budget_ppm_of(s, s->wakeups_ns)), (unsigned long long)s->wakeups,
		pct(cp_budget_ppm_of(s, s->syscalls_ns)), (unsigned long long)s->syscalls);
	if (s->revised_ppm)
		fprintf(f,
			"  estimate revised by +%.1f %%: the programs took more over the run than "
			"on the targets' first calls (%llu measures; the account was charged the "
			"highest as it came)\n",
			s->revised_ppm / 1e4, (unsigned long long)s->prog_measures);
	print_cpus(s, p->budget_ppm, f);
	print_intervals(s, p->budget_ppm, f);
	print_procs(s, p->budget_ppm, f);
}

void cp_report_budget_json(struct cp_json *j, const struct cp_report_budget *b)
{
	const struct cp_budget_plan *p = &b->plan;
	const struct cp_budget_spent *s = &b->spent;

	/* absent in a replay: the golden outputs of recordings stay as they were */
	if (!p->budget_ppm)
		return;
	cp_json_object(j, "overhead");
	cp_json_double(j, "budget_pct", pct(p->budget_ppm), 2);
	cp_json_double(j, "target_cpu_s", s->target_cpu_ns / 1e9, 3);
	cp_json_object(j, "unit_costs_ns");
	cp_json_u64(j, "tick", b->unit.tick_ns);
	cp_json_u64(j, "uprobe", b->unit.uprobe_ns);
	cp_json_u64(j, "uretprobe", b->unit.uretprobe_ns);
	cp_json_u64(j, "breakpoint_hit", b->unit.bp_hit_ns);
	cp_json_u64(j, "wakeup", b->unit.wakeup_ns);
	cp_json_u64(j, "syscall", b->unit.syscall_ns);
	cp_json_u64(j, "syscall_programs", b->unit.syscall_prog_ns);
	cp_json_u64(j, "allocation_programs", b->unit.alloc_prog_ns);
	cp_json_u64(j, "tick_program", b->unit.tick_prog_ns);
	cp_json_end(j);
	cp_json_u64(j, "soft_freq_hz", p->soft_freq_hz);
	cp_json_u64(j, "soft_freq_asked_hz", p->soft_freq_asked_hz);
	cp_json_u64(j, "bp_rate", p->bp_rate);
	cp_json_u64(j, "bp_rate_asked", p->bp_rate_asked);
	cp_json_double(j, "wakeup_min_ms", p->wakeup_min_ns / 1e6, 3);
	cp_json_double(j, "alloc_share_pct", pct(p->alloc_ppm), 2);
	cp_json_object(j, "spent_pct");
	cp_json_double(j, "total", pct(cp_budget_total_ppm(s)), 2);
	cp_json_double(j, "ticks", pct(cp_budget_ppm_of(s, s->ticks_ns)), 2);
	cp_json_double(j, "breakpoints", pct(cp_budget_ppm_of(s, s->bp_ns)), 2);
	cp_json_double(j, "wakeups", pct(cp_budget_ppm_of(s, s->wakeups_ns)), 2);
	cp_json_double(j, "syscalls", pct(cp_budget_ppm_of(s, s->syscalls_ns)), 2);
	cp_json_double(j, "allocation_probes", pct(cp_budget_ppm_of(s, s->alloc_ns)), 2);
	cp_json_end(j);
	cp_json_u64(j, "ticks", s->ticks);
	cp_json_u64(j, "bp_hits", s->bp_hits);
	cp_json_u64(j, "wakeups", s->wakeups);
	cp_json_u64(j, "syscalls", s->syscalls);
	cp_json_u64(j, "alloc_calls", s->alloc_calls);
	cp_json_u64(j, "exit_traps", s->exit_traps);
	cp_json_double(j, "alloc_attached_pct", attached_pct(s), 1);
	cp_json_array(j, "per_cpu_pct");
	for (__u32 c = 0; c < s->nr_cpus; c++)
		cp_json_double(j, NULL, pct(s->cpu_ppm[c]), 2);
	cp_json_end(j);
	cp_json_double(j, "revised_pct", s->revised_ppm / 1e4, 1);
	cp_json_u64(j, "program_measures", s->prog_measures);
	cp_json_object(j, "per_interval");
	cp_json_u64(j, "interval_s", CP_BUDGET_INTERVAL_NS / 1000000000ull);
	cp_json_u64(j, "count", s->intervals);
	cp_json_u64(j, "over", s->intervals_over);
	if (s->intervals) {
		cp_json_double(j, "max_pct", pct(s->interval_ppm), 2);
		cp_json_double(j, "max_from_s", s->interval_from_ns / 1e9, 1);
		cp_json_double(j, "max_to_s", s->interval_to_ns / 1e9, 1);
		cp_json_double(j, "max_cpu_s", s->interval_cpu_ns / 1e9, 3);
	}
	cp_json_end(j);
	cp_json_array(j, "per_process");
	for (__u32 i = 0; i < s->nr_procs; i++) {
		const struct cp_budget_proc *pr = &s->procs[i];

		cp_json_object(j, NULL);
		cp_json_i64(j, "pid", pr->pid);
		cp_json_double(j, "cpu_s", pr->cpu_ns / 1e9, 3);
		cp_json_u64(j, "alloc_calls", pr->alloc_calls);
		cp_json_double(j, "pct", pct(pr->ppm), 2);
		cp_json_end(j);
	}
	cp_json_end(j);
	cp_json_end(j);
}
