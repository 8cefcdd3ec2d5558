// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The metrics of the Prometheus text file (see prom_metrics.h, docs/prometheus.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints/bp_manager.h"
#include "profile/insn_store.h"
#include "objects/object_stats.h"
#include "report/prom_metrics.h"
#include "report/prom_writer.h"
#include "util/path.h"

#define CP_PID_LEN	16

typedef unsigned long long ull;

/* "function file.c:12", "function", "file.c:12"; 1 when something was known. */
static int format_loc(const struct cp_src_loc *loc, char *buf, size_t sz)
{
	bool fl = loc->file[0] && loc->line;

	if (loc->function[0] && fl)
		snprintf(buf, sz, "%s %s:%u", loc->function, cp_base_name(loc->file), loc->line);
	else if (loc->function[0])
		snprintf(buf, sz, "%s", loc->function);
	else if (fl)
		snprintf(buf, sz, "%s:%u", cp_base_name(loc->file), loc->line);
	else
		return 0;
	return 1;
}

void cp_prom_location(const struct cp_issue *is, char *buf, size_t sz)
{
	const struct cp_issue_insn *in = is->nr_insns ? &is->insns[0] : NULL;

	if (!in) {
		snprintf(buf, sz, "%s", "");
		return;
	}
	if (!in->have_loc || !format_loc(&in->loc, buf, sz))
		snprintf(buf, sz, "0x%llx", (ull)in->ip);
}

void cp_prom_object(const struct cp_issue *is, char *buf, size_t sz)
{
	const struct cp_issue_object *o = is->nr_objects ? &is->objects[0] : NULL;

	if (!o) {
		snprintf(buf, sz, "%s", "");
		return;
	}
	switch (o->kind) {
	case CP_OBJ_GLOBAL:
	case CP_OBJ_TLS:
		snprintf(buf, sz, "%s", o->name);
		return;
	case CP_OBJ_HEAP:
	case CP_OBJ_MAPPING:
		if (o->nr_frames && format_loc(&o->alloc_stack[0], buf, sz))
			return;
		break;
	default:
		break;
	}
	snprintf(buf, sz, "%s", o->name[0] ? o->name : cp_object_kind_name(o->kind));
}

/* One issue series (or several issues with the same labels, summed). */
struct series {
	const char *type, *origin;
	__u32 pid;			/* 0: "other" */
	char location[CP_PROM_LABEL_LEN];
	char object[CP_PROM_LABEL_LEN];
	double share, rate, cost;
	bool have_cost;
};

struct ctx {
	const struct cp_prom_input *in;
	struct cp_prom_writer w;
};

/* @pid's comm now (it may have exec'd or renamed itself), else a target's, else "". */
static void comm_of(const struct cp_prom_input *in, __u32 pid, char *buf, size_t sz)
{
	buf[0] = '\0';
	if (in->comm && !in->comm(in->comm_ctx, pid, buf, sz))
		return;
	buf[0] = '\0';
	for (int i = 0; i < in->r->nr_targets; i++)
		if ((__u32)in->r->targets[i].pid == pid)
			snprintf(buf, sz, "%s", in->r->targets[i].comm);
}

static bool same_series(const struct series *a, const struct series *b)
{
	return a->pid == b->pid && !strcmp(a->type, b->type) && !strcmp(a->origin, b->origin) &&
	       !strcmp(a->location, b->location) && !strcmp(a->object, b->object);
}

/* The top issues as series (same labels merged), then "other": how many. */
static size_t issue_series(const struct cp_prom_input *in, struct series *out)
{
	const struct cp_classification *c = in->issues;
	size_t n = 0, top = in->top ? in->top : 1;
	struct series other = { .type = "other", .origin = "" };

	for (size_t i = 0; c && i < c->nr_issues; i++) {
		const struct cp_issue *is = &c->issues[i];
		struct series s = {
			.type = cp_issue_type_name(is->type), .origin = cp_issue_origin_name(is->origin),
			.pid = is->tgid, .share = is->score, .rate = is->misses_per_s,
			.cost = is->cost_cycles_per_s, .have_cost = is->have_cost,
		};
		struct series *into = &other;

		cp_prom_location(is, s.location, sizeof(s.location));
		cp_prom_object(is, s.object, sizeof(s.object));
		if (i < top) {
			size_t k;

			for (k = 0; k < n && !same_series(&out[k], &s); k++)
				;
			if (k == n) {
				out[n++] = s;
				continue;
			}
			into = &out[k];
		}
		into->share += s.share;
		into->rate += s.rate;
		into->cost += s.cost;
		into->have_cost |= s.have_cost;
	}
	out[n++] = other;
	return n;
}

static void issue_labels(const struct cp_prom_input *in, const struct series *s,
			 char pid[CP_PID_LEN], char comm[CP_COMM_LEN * 4],
			 struct cp_prom_label l[6])
{
	pid[0] = '\0';
	comm[0] = '\0';
	if (s->pid) {
		snprintf(pid, CP_PID_LEN, "%u", s->pid);
		comm_of(in, s->pid, comm, CP_COMM_LEN * 4);
	}
	l[0] = (struct cp_prom_label){ "type", s->type };
	l[1] = (struct cp_prom_label){ "origin", s->origin };
	l[2] = (struct cp_prom_label){ "pid", pid };
	l[3] = (struct cp_prom_label){ "comm", comm };
	l[4] = (struct cp_prom_label){ "location", s->location };
	l[5] = (struct cp_prom_label){ "object", s->object };
}

enum issue_value { ISSUE_SHARE, ISSUE_RATE, ISSUE_COST };

static void write_issue_family(struct ctx *x, const struct series *s, size_t n,
			       enum issue_value what, const char *name, const char *help)
{
	struct cp_prom_label l[6];
	char pid[CP_PID_LEN], comm[CP_COMM_LEN * 4];

	cp_prom_family(&x->w, name, CP_PROM_GAUGE, help);
	for (size_t i = 0; i < n; i++) {
		double v = what == ISSUE_SHARE ? s[i].share : what == ISSUE_RATE ? s[i].rate :
			   s[i].cost;

		if (what == ISSUE_COST && !s[i].have_cost && s[i].pid)
			continue;
		issue_labels(x->in, &s[i], pid, comm, l);
		cp_prom_sample(&x->w, l, 6, v);
	}
}

static int write_issues(struct ctx *x)
{
	const struct cp_classification *c = x->in->issues;
	size_t top = x->in->top ? x->in->top : 1;
	size_t max = (c && c->nr_issues < top ? c->nr_issues : top) + 1;
	struct series *s = calloc(max, sizeof(*s));
	bool cost = false;
	size_t n;

	if (!s)
		return -ENOMEM;
	n = issue_series(x->in, s);
	for (size_t i = 0; i < n; i++)
		cost |= s[i].have_cost;
	write_issue_family(x, s, n, ISSUE_SHARE, "cacheperf_issue_miss_share_ratio",
			   "Share of the window's sampled misses that the issue explains (0..1).");
	write_issue_family(x, s, n, ISSUE_RATE, "cacheperf_issue_misses_per_second",
			   "Estimated misses per second of the issue in the window (samples x period / seconds).");
	if (cost)
		write_issue_family(x, s, n, ISSUE_COST, "cacheperf_issue_latency_cycles_per_second",
				   "Estimated load latency of the issue's misses, cycles per second of the window.");
	free(s);
	cp_prom_family(&x->w, "cacheperf_issues", CP_PROM_GAUGE,
		       "Serious issues found in the window (with their own series or in other).");
	cp_prom_sample(&x->w, NULL, 0, c ? (double)(c->nr_issues + c->beyond_top) : 0);
	cp_prom_family(&x->w, "cacheperf_issues_suppressed", CP_PROM_GAUGE,
		       "Minor issue candidates below a ratio filter in the window (paper section 2.2.2).");
	cp_prom_sample(&x->w, NULL, 0, c ? (double)c->suppressed : 0);
	return 0;
}

struct proc_total {
	__u32 pid;
	__u64 loads, stores, load_misses, store_misses;
};

static int by_samples(const void *a, const void *b)
{
	const struct proc_total *x = a, *y = b;
	__u64 sx = x->loads + x->stores, sy = y->loads + y->stores;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Per-process sums of the window's instructions, most samples first; how many. */
static size_t proc_totals(const struct cp_insn_store *s, struct proc_total **out)
{
	size_t n = s ? cp_insn_store__count(s) : 0, nr = 0;
	const struct cp_insn **list = calloc(n ? n : 1, sizeof(*list));
	struct proc_total *t = calloc(n ? n : 1, sizeof(*t));

	*out = NULL;
	if (!list || !t) {
		free(list);
		free(t);
		return 0;
	}
	n = n ? cp_insn_store__top(s, list, n) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct cp_ip_counts *c = &list[i]->counts;
		size_t k;

		/* processes are few next to instructions: a linear look is enough */
		for (k = 0; k < nr && t[k].pid != list[i]->key.tgid; k++)
			;
		if (k == nr)
			t[nr++].pid = list[i]->key.tgid;
		t[k].loads += c->loads;
		t[k].stores += c->stores;
		t[k].load_misses += c->load_misses;
		t[k].store_misses += c->store_misses;
	}
	free(list);
	qsort(t, nr, sizeof(*t), by_samples);
	if (nr > CP_PROM_MAX_PROCS) {
		struct proc_total *o = &t[CP_PROM_MAX_PROCS];

		for (size_t i = CP_PROM_MAX_PROCS + 1; i < nr; i++) {
			o->loads += t[i].loads;
			o->stores += t[i].stores;
			o->load_misses += t[i].load_misses;
			o->store_misses += t[i].store_misses;
		}
		o->pid = 0;
		nr = CP_PROM_MAX_PROCS + 1;
	}
	*out = t;
	return nr;
}

enum proc_value { PROC_SAMPLES, PROC_MISSES, PROC_LOAD_RATIO, PROC_STORE_RATIO };

static void write_proc_family(struct ctx *x, const struct proc_total *t, size_t n,
			      enum proc_value what, const char *name, const char *help)
{
	char pid[CP_PID_LEN], comm[CP_COMM_LEN * 4];
	struct cp_prom_label l[2] = { { "pid", pid }, { "comm", comm } };

	cp_prom_family(&x->w, name, CP_PROM_GAUGE, help);
	for (size_t i = 0; i < n; i++) {
		double v;

		if (what == PROC_LOAD_RATIO && !t[i].loads)
			continue;
		if (what == PROC_STORE_RATIO && !t[i].stores)
			continue;
		v = what == PROC_SAMPLES ? (double)(t[i].loads + t[i].stores) :
		    what == PROC_MISSES ? (double)(t[i].load_misses + t[i].store_misses) :
		    what == PROC_LOAD_RATIO ? (double)t[i].load_misses / (double)t[i].loads :
					       (double)t[i].store_misses / (double)t[i].stores;
		comm[0] = '\0';
		if (t[i].pid) {
			snprintf(pid, sizeof(pid), "%u", t[i].pid);
			comm_of(x->in, t[i].pid, comm, sizeof(comm));
		} else {
			snprintf(pid, sizeof(pid), "other");
		}
		cp_prom_sample(&x->w, l, 2, v);
	}
}

static int write_processes(struct ctx *x)
{
	struct proc_total *t;
	size_t n = proc_totals(x->in->r->insns, &t);

	if (!t)
		return -ENOMEM;
	write_proc_family(x, t, n, PROC_SAMPLES, "cacheperf_process_samples",
			  "Sampled loads and stores of the process in the window.");
	/* without cache levels every sample counts as a miss: nothing more to say */
	if (!cp_stats_levels_unknown(&x->in->r->bpf)) {
		write_proc_family(x, t, n, PROC_MISSES, "cacheperf_process_misses",
				  "Sampled L1 misses of the process in the window.");
		write_proc_family(x, t, n, PROC_LOAD_RATIO, "cacheperf_process_load_miss_ratio",
				  "Sampled load misses over sampled loads of the process in the window.");
		write_proc_family(x, t, n, PROC_STORE_RATIO, "cacheperf_process_store_miss_ratio",
				  "Sampled store misses over sampled stores of the process in the window.");
	}
	free(t);
	return 0;
}

/* One family with a sample per (label value, value) pair. */
struct labelled {
	const char *value;
	__u64 n;
};

static void write_labelled(struct ctx *x, const char *name, enum cp_prom_type type,
			   const char *help, const char *label, const struct labelled *v, size_t n)
{
	cp_prom_family(&x->w, name, type, help);
	for (size_t i = 0; i < n; i++) {
		struct cp_prom_label l = { label, v[i].value };

		cp_prom_sample(&x->w, label ? &l : NULL, label ? 1 : 0, (double)v[i].n);
	}
}

static void write_one(struct ctx *x, const char *name, enum cp_prom_type type, const char *help,
		      double v)
{
	cp_prom_family(&x->w, name, type, help);
	cp_prom_sample(&x->w, NULL, 0, v);
}

#define CP_PROM_NR_DROPS	16

/* The drops of the report's "Drops" section, by the same names; how many. */
static size_t drop_list(const struct cp_report *r, const struct cp_stats *b,
			struct labelled out[CP_PROM_NR_DROPS])
{
	struct labelled drops[CP_PROM_NR_DROPS] = {
		{ "ring_buffer", b->drop_ringbuf },
		{ "counter_map", b->drop_ipmap },
		{ "no_window", b->drop_window },
		{ "instruction_store", r->insns_dropped },
		{ "target_filter", b->drop_targets },
		{ "proc_records", b->drop_proc },
		{ "object_groups", r->objects ? cp_object_stats__dropped(r->objects) : 0 },
		{ "malformed", r->malformed },
		{ "unknown", r->unknown },
		{ "alloc_ring_buffer", r->alloc.bpf.drop_ringbuf },
		{ "alloc_live_map", r->alloc.bpf.drop_live_full },
		{ "alloc_entry_map", r->alloc.bpf.drop_entry_full },
		{ "kernel_throttle", r->throttles },
		{ "stack_map", b->drop_stack_map },
		{ "stack_counter_map", b->drop_stack_counts },
		{ "no_user_stack", b->no_ustack },
	};

	memcpy(out, drops, sizeof(drops));
	return CP_PROM_NR_DROPS;
}

__u64 cp_prom_drops_sum(const struct cp_report *r, const struct cp_stats *run)
{
	struct labelled d[CP_PROM_NR_DROPS];
	size_t n = drop_list(r, run ? run : &r->bpf, d);
	__u64 sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += d[i].n;
	return sum;
}

static void write_samples(struct ctx *x)
{
	const struct cp_report *r = x->in->r;
	const struct cp_stats *b = x->in->run ? x->in->run : &r->bpf;
	struct labelled drops[CP_PROM_NR_DROPS];
	size_t nr_drops = drop_list(r, b, drops);
	struct labelled samples[] = {
		{ "load", b->samples[CP_ACCESS_LOAD] }, { "store", b->samples[CP_ACCESS_STORE] },
	};
	struct labelled misses[] = {
		{ "load", b->misses[CP_ACCESS_LOAD] }, { "store", b->misses[CP_ACCESS_STORE] },
	};

	write_labelled(x, "cacheperf_samples_total", CP_PROM_COUNTER,
		       "Sampled accesses of the targets over the run, by access.", "access",
		       samples, 2);
	write_labelled(x, "cacheperf_sample_misses_total", CP_PROM_COUNTER,
		       "Of them, sampled L1 misses (sources with cache levels).", "access",
		       misses, 2);
	write_one(x, "cacheperf_received_total", CP_PROM_COUNTER,
		  "Ring-buffer records the profiler received over the run.", (double)r->received);
	write_labelled(x, "cacheperf_drops_total", CP_PROM_COUNTER,
		       "Events lost over the run, by reason (0 everywhere: nothing lost).", "reason",
		       drops, nr_drops);
	write_one(x, "cacheperf_samples_filtered_total", CP_PROM_COUNTER,
		  "Misses not forwarded over the run: their miss-ratio window was below the threshold.",
		  (double)b->filtered);
	write_one(x, "cacheperf_sample_period_changes_total", CP_PROM_COUNTER,
		  "Sample periods raised or lowered by the sample-rate cap over the run.",
		  (double)r->period_changes);
}

/* Label values of enum cp_bp_manager_reason (the report's wording has spaces). */
static const char *const release_names[CP_BPM_REASON_NR] = {
	[CP_BPM_KEEP] = "kept", [CP_BPM_FULL] = "full", [CP_BPM_SETTLED] = "settled",
	[CP_BPM_IDLE] = "idle", [CP_BPM_LIFETIME] = "lifetime", [CP_BPM_BUDGET] = "budget",
	[CP_BPM_GONE] = "gone",
};
_Static_assert(CP_BPM_GONE + 1 == CP_BPM_REASON_NR, "a label for every release reason");

static void write_breakpoints(struct ctx *x)
{
	const struct cp_bp_summary *bp = x->in->r->bp;
	struct labelled released[CP_BPM_REASON_NR];
	size_t n = 0;

	if (!bp)
		return;
	for (int i = CP_BPM_KEEP + 1; i < CP_BPM_REASON_NR; i++)
		released[n++] = (struct labelled){ release_names[i], bp->stats.released[i] };
	write_one(x, "cacheperf_breakpoints_armed_total", CP_PROM_COUNTER,
		  "Instructions armed with a hardware breakpoint over the run.",
		  (double)bp->stats.armed);
	write_one(x, "cacheperf_breakpoint_hits_total", CP_PROM_COUNTER,
		  "Hardware-breakpoint hits over the run.", (double)bp->stats.hits);
	write_labelled(x, "cacheperf_breakpoints_released_total", CP_PROM_COUNTER,
		       "Breakpoints let go over the run, by reason (idle, lifetime: expired).",
		       "reason", released, n);
	write_one(x, "cacheperf_breakpoints_watching", CP_PROM_GAUGE,
		  "Instructions armed now.", (double)bp->stats.watching);
}

/* A family of gauges with one label, @n values. */
static void write_gauges(struct ctx *x, const char *name, const char *help, const char *label,
			 const char *const *values, const double *v, size_t n)
{
	cp_prom_family(&x->w, name, CP_PROM_GAUGE, help);
	for (size_t i = 0; i < n; i++) {
		struct cp_prom_label l = { label, values[i] };

		cp_prom_sample(&x->w, &l, 1, v[i]);
	}
}

/* The highest estimate of the processes kept (the costliest by time spent). */
static __u32 proc_max_ppm(const struct cp_budget_spent *s)
{
	__u32 max = 0;

	for (__u32 i = 0; i < s->nr_procs; i++)
		if (s->procs[i].ppm > max)
			max = s->procs[i].ppm;
	return max;
}

/* --overhead: the budget, the unit costs and the estimate (live runs only). */
static void write_budget(struct ctx *x)
{
	const struct cp_report_budget *b = &x->in->r->budget;
	const struct cp_budget_spent *s = &b->spent;
	static const char *const probes[] = { "ticks", "breakpoints", "wakeups", "syscalls",
					      "allocation_probes" };
	static const char *const units[] = { "tick", "uprobe", "uretprobe", "breakpoint_hit",
					     "wakeup", "syscall", "syscall_programs",
					     "allocation_programs" };
	double spent[] = { cp_budget_ppm_of(s, s->ticks_ns) / 1e6,
			   cp_budget_ppm_of(s, s->bp_ns) / 1e6,
			   cp_budget_ppm_of(s, s->wakeups_ns) / 1e6,
			   cp_budget_ppm_of(s, s->syscalls_ns) / 1e6,
			   cp_budget_ppm_of(s, s->alloc_ns) / 1e6 };
	double cost[] = { b->unit.tick_ns / 1e9,   b->unit.uprobe_ns / 1e9,
			  b->unit.uretprobe_ns / 1e9, b->unit.bp_hit_ns / 1e9,
			  b->unit.wakeup_ns / 1e9, b->unit.syscall_ns / 1e9,
			  b->unit.syscall_prog_ns / 1e9, b->unit.alloc_prog_ns / 1e9 };

	if (!b->plan.budget_ppm)
		return;
	write_one(x, "cacheperf_overhead_budget_ratio", CP_PROM_GAUGE,
		  "The share of the targets' CPU time the probes may take (--overhead).",
		  b->plan.budget_ppm / 1e6);
	write_gauges(x, "cacheperf_overhead_estimated_ratio",
		     "The probes' estimated cost over the run, as a share of the targets' CPU time.",
		     "probe", probes, spent, 5);
	write_gauges(x, "cacheperf_probe_unit_cost_seconds",
		     "What one probe costs a target on this machine, measured at start "
		     "(allocation_programs: on the targets' first allocator calls, per call).",
		     "probe", units, cost, 8);
	write_one(x, "cacheperf_overhead_cpu_max_estimated_ratio", CP_PROM_GAUGE,
		  "The probes' estimated cost on the CPU they cost most, as a share of its time.",
		  s->nr_cpus ? s->cpu_ppm[s->cpu_max] / 1e6 : 0);
	write_one(x, "cacheperf_overhead_process_max_estimated_ratio", CP_PROM_GAUGE,
		  "The probes' estimated cost in the probed process they cost most, as a share of "
		  "its CPU time (0: no process probed on its own, as with -a).",
		  proc_max_ppm(s) / 1e6);
	write_one(x, "cacheperf_allocation_probes_attached_ratio", CP_PROM_GAUGE,
		  "The share of the run the allocation probes were attached (budget windows).",
		  s->alloc_run_ns ? (double)s->alloc_attached_ns / (double)s->alloc_run_ns : 0);
}

static void write_self(struct ctx *x)
{
	const struct cp_prom_input *in = x->in;
	const struct cp_report *r = in->r;
	struct cp_prom_label info[] = { { "source", r->source }, { "pmu", in->pmu } };

	write_one(x, "cacheperf_objects_tracked", CP_PROM_GAUGE,
		  "Objects (heap allocations, mappings) in the profiler's object table now.", (double)r->objects_live);
	write_one(x, "cacheperf_allocation_guard_backoffs_total", CP_PROM_COUNTER,
		  "Times the allocation-rate guard detached a process's allocation probes.",
		  (double)r->guard_backoffs);
	cp_prom_family(&x->w, "cacheperf_source_info", CP_PROM_GAUGE,
		       "The sample source in use and the sampling PMU this machine has (1).");
	cp_prom_sample(&x->w, info, 2, 1);
	write_one(x, "cacheperf_window_seconds", CP_PROM_GAUGE,
		  "Span of the summary the per-issue and per-process series describe.",
		  in->window_s);
	if (!in->self)
		return;
	write_one(x, "cacheperf_profiler_cpu_seconds_total", CP_PROM_COUNTER,
		  "User and system CPU time of the profiler.", in->self->cpu_seconds);
	write_one(x, "cacheperf_profiler_resident_memory_bytes", CP_PROM_GAUGE,
		  "Resident memory of the profiler.", (double)in->self->rss_bytes);
	write_one(x, "cacheperf_last_write_timestamp_seconds", CP_PROM_GAUGE,
		  "Unix time at which the profiler wrote this file.", in->self->write_time);
}

int cp_prom_metrics_write(const struct cp_prom_input *in, FILE *f)
{
	struct ctx x = { .in = in };
	int ret;

	cp_prom_writer_init(&x.w, f);
	ret = write_issues(&x);
	if (!ret)
		ret = write_processes(&x);
	if (ret)
		return ret;
	write_samples(&x);
	write_breakpoints(&x);
	write_budget(&x);
	write_self(&x);
	return cp_prom_writer_finish(&x.w);
}
