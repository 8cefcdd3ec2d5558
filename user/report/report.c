// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The text report (pure: struct in, text out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/source.h"
#include "util/printable.h"
#include "report/data_src_text.h"
#include "report/report.h"
#include "report/report_agent.h"
#include "report/report_issues.h"

/* "12.5 %" with one decimal, "-" when @whole is 0. Returns @buf. */
static const char *cp_report_pct(__u64 part, __u64 whole, char *buf, size_t sz)
{
	if (!whole)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%.1f %%", 100.0 * (double)part / (double)whole);
	return buf;
}

static void print_header(const struct cp_report *r, FILE *f)
{
	char comm[sizeof(r->targets[0].comm)];

	fprintf(f, "cacheperf-bpf report\n");
	fprintf(f, "  source:   %s\n", r->source_reason ? r->source_reason : r->source);
	if (cp_source_named(r->source)->by_time)
		fprintf(f, "  note:     %s\n", CP_SOFT_NOTE);
	fprintf(f, "  duration: %.1f s (%s)\n", r->duration_s, r->end_reason ? r->end_reason : "");
	cp_report_agent_print(&r->agent, f);
	fprintf(f, "  targets:  ");
	if (!r->nr_targets)
		fprintf(f, "every process (-a)");
	for (int i = 0; i < r->nr_targets; i++)
		fprintf(f, "%s%d (%s)", i ? ", " : "", (int)r->targets[i].pid,
			r->targets[i].comm[0] ? cp_printable(r->targets[i].comm, comm, sizeof(comm))
					      : "?");
	fprintf(f, "\n");
	if (r->bpf.followed)
		fprintf(f, "            and %llu processes they started\n",
			(unsigned long long)r->bpf.followed);
	if (r->execs || r->exits)
		fprintf(f, "            %llu exec'd, %llu exited\n", (unsigned long long)r->execs,
			(unsigned long long)r->exits);
}

static void print_totals(const struct cp_report *r, FILE *f)
{
	const struct cp_source_desc *src = cp_source_named(r->source);
	const struct cp_stats *b = &r->bpf;
	char p1[16], p2[16];

	fprintf(f, "\nTotals\n");
	if (src->needs_pmu && cp_stats_pmu_blind(b, src->every_op))
		fprintf(f,
			"  warning: %d %% or more of the PMU's samples carry no data source: this "
			"kernel does not decode them for this CPU (older than the CPU?), so no "
			"miss can be found; try a newer kernel or --source soft\n",
			CP_BLIND_PCT);
	if (b->ticks || b->ticks_kernel)
		fprintf(f,
			"  time samples: %llu ticks in user mode (%llu of them on a decoded memory "
			"access, %llu charged to the access before them (skid)), %llu in the "
			"kernel (not counted)\n",
			(unsigned long long)b->ticks,
			(unsigned long long)(b->samples[CP_ACCESS_LOAD] +
					     b->samples[CP_ACCESS_STORE]),
			(unsigned long long)b->ticks_skid, (unsigned long long)b->ticks_kernel);
	if (cp_stats_levels_unknown(b)) {
		fprintf(f, "  samples: %llu (the source reports no cache levels)\n",
			(unsigned long long)(b->samples[CP_ACCESS_LOAD] +
					     b->samples[CP_ACCESS_STORE]));
		return;
	}
	fprintf(f, "  load samples:  %llu, misses %llu (%s), level unknown %llu\n",
		(unsigned long long)b->samples[CP_ACCESS_LOAD],
		(unsigned long long)b->misses[CP_ACCESS_LOAD],
		cp_report_pct(b->misses[CP_ACCESS_LOAD], b->samples[CP_ACCESS_LOAD], p1,
			      sizeof(p1)),
		(unsigned long long)b->na[CP_ACCESS_LOAD]);
	fprintf(f, "  store samples: %llu, misses %llu (%s), level unknown %llu\n",
		(unsigned long long)b->samples[CP_ACCESS_STORE],
		(unsigned long long)b->misses[CP_ACCESS_STORE],
		cp_report_pct(b->misses[CP_ACCESS_STORE], b->samples[CP_ACCESS_STORE], p2,
			      sizeof(p2)),
		(unsigned long long)b->na[CP_ACCESS_STORE]);
	if (b->kernel_ip)
		fprintf(f,
			"  kernel-mode samples: %llu (the source cannot exclude the kernel: not "
			"counted)\n",
			(unsigned long long)b->kernel_ip);
	fprintf(f, "  misses forwarded: %llu; filtered (window below %s): %llu\n",
		(unsigned long long)b->forwarded, "the miss-ratio threshold",
		(unsigned long long)b->filtered);
}

/* The level past L1 that served most of @c's misses; NA when none missed. */
static enum cp_mem_lvl miss_level(const struct cp_ip_counts *c)
{
	enum cp_mem_lvl best = CP_LVL_NA;

	for (int l = CP_LVL_L1 + 1; l < CP_LVL_NR; l++)
		if (c->lvl[l] > (best == CP_LVL_NA ? 0 : c->lvl[best]))
			best = (enum cp_mem_lvl)l;
	return best;
}

static void print_insn(const struct cp_report *r, const struct cp_insn *in, bool no_levels, FILE *f)
{
	const struct cp_ip_counts *c = &in->counts;
	__u64 samples = c->loads + c->stores, misses = c->load_misses + c->store_misses;
	char where[256] = "", loc[256], pct[16], lat[16] = "-";

	/* module, file and function names are the target's: no control bytes */
	if (!r->locate ||
	    r->locate(r->locate_ctx, in->key.tgid, in->key.ip, where, sizeof(where)) < 0)
		where[0] = '\0';
	cp_printable(where, loc, sizeof(loc));
	if (no_levels && r->bpf.ticks) {
		fprintf(f, "  %8llu  %8llu  %7u  0x%-14llx %s\n", (unsigned long long)c->ticks,
			samples, in->key.tgid, (unsigned long long)in->key.ip, loc);
		return;
	}
	if (no_levels) {
		fprintf(f, "  %8llu  %7u  0x%-14llx %s\n", samples, in->key.tgid,
			(unsigned long long)in->key.ip, loc);
		return;
	}
	if (c->loads && c->lat_sum)
		snprintf(lat, sizeof(lat), "%llu", (unsigned long long)(c->lat_sum / c->loads));
	fprintf(f, "  %8llu  %8llu  %7s  %6llu  %7s  %-12s %7u  0x%-14llx %s\n", samples, misses,
		cp_report_pct(misses, samples, pct, sizeof(pct)), (unsigned long long)c->hitm, lat,
		misses ? cp_mem_lvl_name(miss_level(c)) : "-", in->key.tgid,
		(unsigned long long)in->key.ip, loc);
}

static void print_insns(const struct cp_report *r, FILE *f)
{
	unsigned int top = r->top ? r->top : CP_REPORT_TOP_DEFAULT;
	bool no_levels = cp_stats_levels_unknown(&r->bpf);
	const struct cp_insn **list;
	size_t n;

	if (!r->insns)
		return;
	list = calloc(top, sizeof(*list));
	if (!list)
		return;
	n = cp_insn_store__top(r->insns, list, top);
	fprintf(f, "\n%s (%zu of %zu)\n",
		no_levels ? "Instructions with the most samples"
			  : "Instructions with the most sampled misses",
		n, cp_insn_store__count(r->insns));
	if (!n)
		fprintf(f, "  none: no sample of a target arrived\n");
	else if (no_levels && r->bpf.ticks)
		fprintf(f, "  %8s  %8s  %7s  %-16s %s\n", "ticks", "samples", "pid", "ip",
			"location");
	else if (no_levels)
		fprintf(f, "  %8s  %7s  %-16s %s\n", "samples", "pid", "ip", "location");
	else
		fprintf(f, "  %8s  %8s  %7s  %6s  %7s  %-12s %7s  %-16s %s\n", "samples", "misses",
			"miss", "HITM", "avg lat", "misses in", "pid", "ip", "location");
	for (size_t i = 0; i < n; i++)
		print_insn(r, list[i], no_levels, f);
	free(list);
}

/* "heap object (64 bytes) allocated at 0x401234 (f.c:3) by threads 11, 12" and the like. */
static void describe_object(const struct cp_report *r, const struct cp_object_group *g, char *buf,
			    size_t sz)
{
	char at[256] = "", loc[192];
	int n = 0;

	/* the user's frame where the allocator's or a wrapper's came first */
	if (g->callsite && r->alloc_site &&
	    r->alloc_site(r->locate_ctx, g->tgid, g->callsite, loc, sizeof(loc)) == 0)
		snprintf(at, sizeof(at), " allocated at %s", loc);
	/* a return address: the call is the instruction before it */
	else if (g->caller && r->locate &&
		 r->locate(r->locate_ctx, g->tgid, g->caller - 1, loc, sizeof(loc)) == 0)
		snprintf(at, sizeof(at), " allocated at 0x%llx (%s)", (unsigned long long)g->caller,
			 loc);
	else if (g->caller)
		snprintf(at, sizeof(at), " allocated at 0x%llx", (unsigned long long)g->caller);
	switch (g->kind) {
	case CP_OBJ_HEAP:
		/* read from glibc's chunk headers: no call site, one object per group */
		if (g->flags & CP_OBJ_F_CHUNK)
			n = snprintf(buf, sz, "heap object at 0x%llx (%llu bytes, glibc chunk), %s",
				     (unsigned long long)g->start, (unsigned long long)g->size,
				     r->launched ? "no allocation seen"
						 : "allocated before attach");
		else
			n = snprintf(buf, sz, "heap object (%llu bytes)%s",
				     (unsigned long long)g->size, at);
		break;
	case CP_OBJ_MAPPING:
		if (g->callsite)
			n = snprintf(buf, sz, "mapping (%llu bytes)%s", (unsigned long long)g->size,
				     at);
		else
			n = snprintf(buf, sz, "mapping %s", g->name);
		break;
	case CP_OBJ_GLOBAL:
	case CP_OBJ_TLS:
		n = snprintf(buf, sz, "%s %s (%llu bytes) in %s",
			     g->kind == CP_OBJ_TLS ? "thread-local" : "global", g->name,
			     (unsigned long long)g->size, g->path[0] ? g->path : "?");
		break;
	case CP_OBJ_STACK:
		n = snprintf(buf, sz, "stack (%s)", g->name);
		break;
	default:
		/* a launched command had probes from its exec: the allocator's own memory */
		n = snprintf(buf, sz, "%s%s", g->name,
			     !g->before_attach ? ""
			     : g->backoff && r->launched
				     ? ", allocated while allocation probes were backed off"
			     : g->backoff  ? ", allocated before attach or while allocation probes "
					     "were backed off"
			     : r->launched ? ", no allocation seen"
					   : ", allocated before attach");
		break;
	}
	for (__u32 i = 0; i < g->nr_tids && n > 0 && (size_t)n < sz; i++)
		n += snprintf(buf + n, sz - (size_t)n, "%s%u", i ? ", " : " by thread ",
			      g->tids[i]);
	if (g->doubtful && n > 0 && (size_t)n < sz)
		snprintf(
			buf + n, sz - (size_t)n,
			" (%llu samples may be stale: allocation probes backed off while it lived)",
			(unsigned long long)g->doubtful);
}

/* The BPF programs' runs the kernel skipped, when any: the total, then by program. */
static void print_prog_misses(const struct cp_live_drops *d, FILE *f)
{
	if (!d->recursion_misses)
		return;
	fprintf(f,
		"  BPF program runs skipped (another BPF program was running on the CPU): %llu (",
		(unsigned long long)d->recursion_misses);
	for (__u32 i = 0; i < d->nr_progs; i++)
		fprintf(f, "%s%s %llu", i ? ", " : "", d->progs[i].name,
			(unsigned long long)d->progs[i].misses);
	fputs(")\n", f);
}

static void print_objects(const struct cp_report *r, FILE *f)
{
	unsigned int top = r->top ? r->top : CP_REPORT_TOP_DEFAULT;
	bool no_levels = cp_stats_levels_unknown(&r->bpf);
	const struct cp_object_group **list;
	char what[512], shown[512];
	size_t n;

	if (!r->objects)
		return;
	list = calloc(top, sizeof(*list));
	if (!list)
		return;
	n = cp_object_stats__top(r->objects, list, top);
	fprintf(f, "\nObjects with the most %s (%zu of %zu)\n",
		no_levels ? "samples" : "sampled misses", n, cp_object_stats__count(r->objects));
	if (!n)
		fprintf(f, "  none: no sample carried a data address\n");
	for (size_t i = 0; i < n; i++) {
		describe_object(r, list[i], what, sizeof(what));
		fprintf(f, "  %8llu  %7u  %s\n",
			(unsigned long long)(no_levels ? list[i]->samples : list[i]->misses),
			list[i]->tgid, cp_printable(what, shown, sizeof(shown)));
	}
	if (r->chunk_objects)
		fprintf(f,
			"  objects no allocation probe saw, read from glibc's chunk headers: %llu "
			"(size: malloc_usable_size(), call site unknown)\n",
			(unsigned long long)r->chunk_objects);
	free(list);
}

void cp_report_drops_print(const struct cp_report *r, FILE *f)
{
	typedef unsigned long long ull;
	const struct cp_stats *b = &r->bpf;

	fprintf(f, "\nDrops (events lost; 0 everywhere means nothing was lost)\n");
	fprintf(f,
		"  ring buffer full: %llu, counter map full: %llu, no window for the CPU: %llu\n",
		(ull)b->drop_ringbuf, (ull)b->drop_ipmap, (ull)b->drop_window);
	fprintf(f,
		"  instruction store full: %llu, target filter full: %llu, exec/exit records: "
		"%llu\n",
		(ull)(r->insns ? cp_insn_store__dropped(r->insns) : 0), (ull)b->drop_targets,
		(ull)b->drop_proc);
	fprintf(f, "  object table full: %llu, malformed records: %llu, unknown records: %llu\n",
		(ull)(r->objects ? cp_object_stats__dropped(r->objects) : 0), (ull)r->malformed,
		(ull)r->unknown);
	fprintf(f, "  records received: %llu of %llu forwarded\n", (ull)r->received,
		(ull)b->forwarded);
	if (r->period_changes)
		fprintf(f, "  sample periods changed by the rate cap: %llu\n",
			(ull)r->period_changes);
	if (r->throttles)
		fprintf(f,
			"  sampling throttled by the kernel: %llu times (that event's samples lost "
			"until the next tick)\n",
			(ull)r->throttles);
	if (b->ticks || b->ticks_kernel || r->soft.taken)
		fprintf(f,
			"  soft source: %llu instructions decoded (%llu with a memory operand, "
			"%llu of them the access before (skid), %llu without, %llu of exited "
			"processes); lost: pending table full %llu, descriptor table full %llu\n",
			(ull)r->soft.taken, (ull)r->soft.descriptors, (ull)r->soft.skid,
			(ull)r->soft.markers, (ull)r->soft.gone, (ull)b->drop_pending,
			(ull)r->soft.drop_insns);
	if (b->drop_stack_map || b->drop_stack_counts || b->no_ustack)
		fprintf(f,
			"  call stacks not counted: stack map full %llu, stack counter map full "
			"%llu, no user stack %llu\n",
			(ull)b->drop_stack_map, (ull)b->drop_stack_counts, (ull)b->no_ustack);
	if (r->live.stacks_lost || r->limits.stacks_evicted)
		fprintf(f,
			"  call stacks lost: gone from the stack map when taken %llu, evicted from "
			"the interval's stacks %llu\n",
			(ull)r->live.stacks_lost, (ull)r->limits.stacks_evicted);
	print_prog_misses(&r->live, f);
	if (!r->have_alloc) {
		fprintf(f, "  allocation probes: off (--no-objects)\n");
		return;
	}
	fprintf(f,
		"  allocation events: %llu applied; lost: ring buffer %llu, live-object map full "
		"%llu, "
		"entry map full %llu\n",
		(ull)r->object_events, (ull)r->alloc.bpf.drop_ringbuf,
		(ull)r->alloc.bpf.drop_live_full, (ull)r->alloc.bpf.drop_entry_full);
	if (r->alloc.bpf.stack_errors)
		fprintf(f,
			"  allocation call stacks not taken: %llu (their bucket taken in both "
			"stack maps: the object keeps its caller)\n",
			(ull)r->alloc.bpf.stack_errors);
	if (r->alloc.new_unprobed || r->alloc.exit_lost)
		fprintf(f,
			"  operator new that may throw: %llu variants left unprobed (their objects "
			"unknown), %llu calls an exception ended\n",
			(ull)r->alloc.new_unprobed, (ull)r->alloc.exit_lost);
	if (r->alloc.syscall_windows_skipped)
		fprintf(f,
			"  system-call programs: with %llu allocation windows, without %llu (the "
			"last they went with recorded no mapping; mappings made then are unseen)\n",
			(ull)r->alloc.syscall_windows, (ull)r->alloc.syscall_windows_skipped);
	fprintf(f, "  allocation guard back-offs: %llu", (ull)r->guard_backoffs);
	if (r->guard_backoffs || r->backoff_doubtful || r->backoff_unseen)
		fprintf(f,
			"; samples attributed with doubt: %llu in objects that lived through a "
			"back-off, %llu in memory maybe allocated during one",
			(ull)r->backoff_doubtful, (ull)r->backoff_unseen);
	fputc('\n', f);
}

void cp_report_print(const struct cp_report *r, FILE *f)
{
	print_header(r, f);
	print_totals(r, f);
	if (r->issues && r->classify_cfg)
		cp_report_issues_print(r->issues, r->classify_cfg, &r->callers, f);
	if (!r->nr_targets)
		cp_report_procs_print(r->procs, r->top ? r->top : CP_REPORT_TOP_DEFAULT, f);
	print_insns(r, f);
	print_objects(r, f);
	if (r->bp)
		cp_bp_report_print(r->bp, r->locate, r->locate_ctx, f);
	cp_report_drops_print(r, f);
	cp_report_budget_print(&r->budget, f);
	cp_report_limits_print(&r->limits, f);
	fflush(f);
}
