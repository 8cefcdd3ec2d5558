// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The overhead budget section. */
#include "report/report_budget.h"

__u32 cp_report_budget_total_ppm(const struct cp_report_budget *b)
{
	const struct cp_budget_spent *s = &b->spent;

	return cp_budget_ppm_of(s, s->ticks_ns + s->bp_ns + s->alloc_ns);
}

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

void cp_report_budget_print(const struct cp_report_budget *b, FILE *f)
{
	const struct cp_budget_plan *p = &b->plan;
	const struct cp_unit_costs *u = &b->unit;
	const struct cp_budget_spent *s = &b->spent;
	__u32 total = cp_report_budget_total_ppm(b);

	if (!p->budget_ppm)
		return;
	fprintf(f, "\nOverhead budget\n");
	fprintf(f,
		"  budget: %.2f %% of the targets' CPU time (--overhead); their CPU time %.3f s\n",
		pct(p->budget_ppm), s->target_cpu_ns / 1e9);
	fprintf(f,
		"  unit costs measured at start: timer tick %.2f us, uprobe %.2f us + return %.2f "
		"us, breakpoint hit %.2f us\n",
		u->tick_ns / 1e3, u->uprobe_ns / 1e3, u->uretprobe_ns / 1e3, u->bp_hit_ns / 1e3);
	if (u->alloc_prog_ns)
		fprintf(f,
			"  measured on the targets' first allocator calls: the probes' programs "
			"%.2f us per call\n",
			u->alloc_prog_ns / 1e3);
	fprintf(f, "  chosen:");
	if (p->soft_freq_asked_hz)
		fprintf(f, " %u ticks/s per CPU (asked %u),", p->soft_freq_hz,
			p->soft_freq_asked_hz);
	fprintf(f, " breakpoints at most %u hits/s (asked %u), allocation probes %.2f %%\n",
		p->bp_rate, p->bp_rate_asked, pct(p->alloc_ppm));
	fprintf(f,
		"  estimated spent: %.2f %%%s (ticks %.2f %%, breakpoints %.2f %%, allocation "
		"probes %.2f %%: %llu calls, attached %.1f %% of the time)\n",
		pct(total), total > p->budget_ppm ? ", over the budget" : "",
		pct(cp_budget_ppm_of(s, s->ticks_ns)), pct(cp_budget_ppm_of(s, s->bp_ns)),
		pct(cp_budget_ppm_of(s, s->alloc_ns)), (unsigned long long)s->alloc_calls,
		attached_pct(s));
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
	cp_json_u64(j, "allocation_programs", b->unit.alloc_prog_ns);
	cp_json_end(j);
	cp_json_u64(j, "soft_freq_hz", p->soft_freq_hz);
	cp_json_u64(j, "soft_freq_asked_hz", p->soft_freq_asked_hz);
	cp_json_u64(j, "bp_rate", p->bp_rate);
	cp_json_u64(j, "bp_rate_asked", p->bp_rate_asked);
	cp_json_double(j, "alloc_share_pct", pct(p->alloc_ppm), 2);
	cp_json_object(j, "spent_pct");
	cp_json_double(j, "total", pct(cp_report_budget_total_ppm(b)), 2);
	cp_json_double(j, "ticks", pct(cp_budget_ppm_of(s, s->ticks_ns)), 2);
	cp_json_double(j, "breakpoints", pct(cp_budget_ppm_of(s, s->bp_ns)), 2);
	cp_json_double(j, "allocation_probes", pct(cp_budget_ppm_of(s, s->alloc_ns)), 2);
	cp_json_end(j);
	cp_json_u64(j, "ticks", s->ticks);
	cp_json_u64(j, "bp_hits", s->bp_hits);
	cp_json_u64(j, "alloc_calls", s->alloc_calls);
	cp_json_double(j, "alloc_attached_pct", attached_pct(s), 1);
	cp_json_end(j);
}
