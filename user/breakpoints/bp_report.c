// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Findings of breakpoint sampling, and their report section. */
#include <string.h>

#include "util/printable.h"
#include "breakpoints/bp_report.h"

void cp_bp_finding_of(const struct cp_bp_insn *v, __u32 tgid, __u64 ip,
		      enum cp_bp_manager_reason reason, const struct cp_lru_geom *l1,
		      struct cp_bp_finding *out)
{
	struct cp_bp_access h[CP_BP_HISTORY];
	__u64 addrs[2 * CP_BP_HISTORY], lines[CP_BP_HISTORY];
	__u32 count[CP_BP_HISTORY] = {0};
	size_t n = cp_bp_history(v, h), best = 0, nr_lines = 0;
	__u32 line_bytes = l1 && l1->line_bytes ? l1->line_bytes : 64;

	memset(out, 0, sizeof(*out));
	out->tgid = tgid;
	out->ip = ip;
	out->reason = reason;
	out->accesses = (__u32)n;
	out->late = v->late;
	if (!n)
		return;
	/* the busiest set: count[i] = accesses on h[i]'s set, for its first access */
	for (size_t i = 0; i < n; i++) {
		addrs[i] = addrs[n + i] = h[i].addr;
		for (size_t j = 0; j <= i; j++) {
			if (h[j].set == h[i].set) {
				count[j]++;
				break;
			}
		}
	}
	for (size_t i = 1; i < n; i++)
		if (count[i] > count[best])
			best = i;
	out->top_set = h[best].set;
	out->top_set_accesses = count[best];
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (h[i].set != out->top_set)
			continue;
		while (k < nr_lines && lines[k] != h[i].addr / line_bytes)
			k++;
		if (k == nr_lines)
			lines[nr_lines++] = h[i].addr / line_bytes;
	}
	out->top_set_lines = (__u32)nr_lines;
	out->simulated = l1 && !cp_lru_simulate(l1, addrs, 2 * n, &out->sim);
}

void cp_bp_summary_add(struct cp_bp_summary *s, const struct cp_bp_finding *f)
{
	if (!f->accesses)
		return;
	if (s->nr == CP_BP_FINDINGS) {
		s->not_listed++;
		return;
	}
	s->findings[s->nr++] = *f;
}

static void print_finding(const struct cp_bp_finding *x,
			  int (*locate)(void *, __u32, __u64, char *, size_t), void *ctx, FILE *f)
{
	double share = x->simulated ? cp_lru_reuse_conflict_share(&x->sim) : -1;
	char where[256] = "", shown[256], sim[48] = "-";

	if (!locate || locate(ctx, x->tgid, x->ip, where, sizeof(where)))
		where[0] = '\0';
	if (x->simulated && share < 0)
		snprintf(sim, sizeof(sim), "none, fits");
	else if (x->simulated)
		snprintf(sim, sizeof(sim), "%.0f %% of %u", 100.0 * share,
			 x->sim.sa_misses - x->sim.compulsory);
	fprintf(f, "  %8u  %5u %5u %5u  %-14s  %-20s %7u  0x%-14llx %s\n", x->accesses, x->top_set,
		x->top_set_accesses, x->top_set_lines, sim, cp_bp_manager_reason_name(x->reason),
		x->tgid, (unsigned long long)x->ip, cp_printable(where, shown, sizeof(shown)));
}

void cp_bp_report_print(const struct cp_bp_summary *s,
			int (*locate)(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz),
			void *locate_ctx, FILE *f)
{
	typedef unsigned long long ull;
	const struct cp_bp_manager_stats *st;

	fprintf(f, "\nBreakpoints (exact access histories, paper section 3.3)\n");
	if (s->disabled) {
		fprintf(f, "  off (%s)\n",
			s->silent
				? "they open but never fire on this machine: cacheperf-bpf --probe"
				: "--max-bp-rate 0");
		return;
	}
	st = &s->stats;
	fprintf(f, "  budget %u hits/s, expiry %llu ms%s\n", s->max_rate, (ull)s->expiry_ms,
		st->off ? "; gave up: this machine refuses breakpoints" : "");
	fprintf(f,
		"  hits: %llu; armed: %llu; settled as conflict: %llu, full: %llu, expired: %llu "
		"(idle %llu, armed too long %llu), over budget: %llu, process gone: %llu\n",
		(ull)st->hits, (ull)st->armed, (ull)st->released[CP_BPM_SETTLED],
		(ull)st->released[CP_BPM_FULL],
		(ull)(st->released[CP_BPM_IDLE] + st->released[CP_BPM_LIFETIME]),
		(ull)st->released[CP_BPM_IDLE], (ull)st->released[CP_BPM_LIFETIME],
		(ull)st->released[CP_BPM_BUDGET], (ull)st->released[CP_BPM_GONE]);
	fprintf(f,
		"  skipped candidates: %llu, no free slot (ENOSPC, retried): %llu, "
		"candidates dropped (table full): %llu, seconds at the budget: %llu\n",
		(ull)st->skipped, (ull)st->enospc, (ull)st->dropped, (ull)st->over_budget);
	if (!s->nr)
		return;
	fprintf(f, "  (sim. conflict: C2Sim's conflict misses when the history repeats, per L1 "
		   "miss of\n"
		   "  the repetition; \"fits\": the repetition hits)\n");
	fprintf(f, "  accesses    set  on it lines  sim. conflict   outcome                  pid  "
		   "ip               location\n");
	for (__u32 i = 0; i < s->nr; i++)
		print_finding(&s->findings[i], locate, locate_ctx, f);
	if (s->not_listed)
		fprintf(f, "  (%llu more not listed)\n", (ull)s->not_listed);
}

size_t cp_bp_history(const struct cp_bp_insn *v, struct cp_bp_access *out)
{
	size_t n = 0, claimed = v->claimed < CP_BP_HISTORY ? v->claimed : CP_BP_HISTORY;

	for (size_t i = 0; i < claimed; i++)
		if (v->hist[i].time_ns)
			out[n++] = v->hist[i];
	return n;
}
