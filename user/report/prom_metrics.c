// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The metrics of the Prometheus text file (see prom_metrics.h, docs/prometheus.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "breakpoints/bp_manager.h"
#include "machine/source.h"
#include "profile/insn_store.h"
#include "profile/proc_summaries.h"
#include "objects/object_stats.h"
#include "report/prom_metrics.h"
#include "report/prom_writer.h"

/*
 * The identities of the processes this write names, each looked up once:
 * each in an allocation of its own (the pointers handed out stay valid
 * while more are added), found by pid in an open-addressing index. Under
 * -a a write names thousands of processes, each on many instructions.
 */
struct idents {
	struct ident_of {
		__u32 pid;
		ssize_t total; /* its entry of proc_totals()'s, -1 until known */
		struct cp_prom_ident id;
	} * *v;
	size_t nr, cap;
	size_t *slots; /* index in v + 1, 0: empty; a power of two, over 2 * nr */
	size_t nr_slots;
};

struct ctx {
	const struct cp_prom_input *in;
	struct cp_prom_writer w;
	struct idents ids;
};

/*
 * @pid's comm now (it may have exec'd or renamed itself), else the one its
 * summary read, else a target's at start; its container and cgroup from its
 * summary (none in a recording).
 */
static void make_ident(const struct cp_prom_input *in, __u32 pid, struct cp_prom_ident *out)
{
	const struct cp_proc_summary *ps = cp_proc_summaries__find(in->r->procs, (pid_t)pid);
	char comm[CP_COMM_LEN * 4] = "";

	if (!in->comm || in->comm(in->comm_ctx, pid, comm, sizeof(comm))) {
		comm[0] = '\0';
		if (ps && ps->comm[0])
			snprintf(comm, sizeof(comm), "%s", ps->comm);
		for (int i = 0; !comm[0] && i < in->r->nr_targets; i++)
			if ((__u32)in->r->targets[i].pid == pid)
				snprintf(comm, sizeof(comm), "%s", in->r->targets[i].comm);
	}
	cp_prom_ident_make(out, pid, in->pid_label, comm, ps ? &ps->cg : NULL);
}

static size_t ident_home(const struct idents *t, __u32 pid)
{
	return ((size_t)pid * 2654435761u) & (t->nr_slots - 1);
}

/* Makes the index twice as large and places every identity again; false when out of memory. */
static bool idents_grow(struct idents *t)
{
	size_t n = t->nr_slots ? 2 * t->nr_slots : 128;
	size_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return false;
	free(t->slots);
	t->slots = slots;
	t->nr_slots = n;
	for (size_t i = 0; i < t->nr; i++) {
		size_t h = ident_home(t, t->v[i]->pid);

		while (t->slots[h])
			h = (h + 1) & (n - 1);
		t->slots[h] = i + 1;
	}
	return true;
}

/* @pid's identity, made on first use (NULL: out of memory). */
static struct ident_of *ident_of(struct ctx *x, __u32 pid)
{
	struct idents *t = &x->ids;
	struct ident_of *e;
	size_t h;

	if ((t->nr + 1) * 2 > t->nr_slots && !idents_grow(t))
		return NULL;
	for (h = ident_home(t, pid); t->slots[h]; h = (h + 1) & (t->nr_slots - 1))
		if (t->v[t->slots[h] - 1]->pid == pid)
			return t->v[t->slots[h] - 1];
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct ident_of **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return NULL;
	e->pid = pid;
	e->total = -1;
	make_ident(x->in, pid, &e->id);
	t->v[t->nr++] = e;
	t->slots[h] = t->nr;
	return e;
}

static void idents_free(struct idents *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
}

/* @pid's identity (NULL: out of memory). */
static const struct cp_prom_ident *ident(struct ctx *x, __u32 pid)
{
	struct ident_of *e = ident_of(x, pid);

	return e ? &e->id : NULL;
}

/* One issue series: the issues with the same labels, summed. */
struct series {
	const char *type, *origin;
	struct cp_prom_ident id;
	char location[CP_PROM_TEXT_MAX + 1];
	char object[CP_PROM_TEXT_MAX + 1];
	double share, rate, cost;
	bool have_cost;
};

static bool same_series(const struct series *a, const struct series *b)
{
	return !strcmp(a->type, b->type) && !strcmp(a->origin, b->origin) &&
	       cp_prom_ident_equal(&a->id, &b->id) && !strcmp(a->location, b->location) &&
	       !strcmp(a->object, b->object);
}

static void add_series(struct series *into, const struct series *s)
{
	into->share += s->share;
	into->rate += s->rate;
	into->cost += s->cost;
	into->have_cost |= s->have_cost;
}

/*
 * The issues as series, in rank order: an issue whose labels a series has
 * already is summed into it, wherever it ranks (two workers of one service
 * make one series); at most @top series, what does not fit goes to "other",
 * written last. Returns how many, or 0 when out of memory.
 */
static size_t issue_series(struct ctx *x, struct series *out)
{
	const struct cp_classification *c = x->in->issues;
	size_t n = 0, top = x->in->top ? x->in->top : 1;
	struct series other = {.type = "other", .origin = ""};

	for (size_t i = 0; c && i < c->nr_issues; i++) {
		const struct cp_issue *is = &c->issues[i];
		const struct cp_prom_ident *id = ident(x, is->tgid);
		struct series s = {
			.type = cp_issue_type_name(is->type),
			.origin = cp_issue_origin_name(is->origin),
			.share = is->score,
			.rate = is->misses_per_s,
			.cost = is->cost_cycles_per_s,
			.have_cost = is->have_cost,
		};
		size_t k;

		if (!id)
			return 0;
		s.id = *id;
		cp_prom_location(is, s.location, sizeof(s.location));
		cp_prom_object(is, s.object, sizeof(s.object));
		for (k = 0; k < n && !same_series(&out[k], &s); k++)
			;
		if (k < n)
			add_series(&out[k], &s);
		else if (n < top)
			out[n++] = s;
		else
			add_series(&other, &s);
	}
	out[n++] = other;
	return n;
}

#define CP_ISSUE_LABELS 8

/* The labels of @s into @l: how many (the pid only with --prom-pid-label). */
static size_t issue_labels(const struct ctx *x, const struct series *s,
			   struct cp_prom_label l[CP_ISSUE_LABELS])
{
	size_t n = 0;

	l[n++] = (struct cp_prom_label){"type", s->type};
	l[n++] = (struct cp_prom_label){"origin", s->origin};
	if (x->in->pid_label)
		l[n++] = (struct cp_prom_label){"pid", s->id.pid};
	l[n++] = (struct cp_prom_label){"comm", s->id.comm};
	l[n++] = (struct cp_prom_label){"container", s->id.container};
	l[n++] = (struct cp_prom_label){"cgroup", s->id.cgroup};
	l[n++] = (struct cp_prom_label){"location", s->location};
	l[n++] = (struct cp_prom_label){"object", s->object};
	return n;
}

enum issue_value { ISSUE_SHARE, ISSUE_RATE, ISSUE_COST };

/* @last: "other", always written (0 when nothing is past the top). */
static void write_issue_family(struct ctx *x, const struct series *s, size_t n,
			       enum issue_value what, const char *name, const char *help)
{
	struct cp_prom_label l[CP_ISSUE_LABELS];

	cp_prom_family(&x->w, name, CP_PROM_GAUGE, help);
	for (size_t i = 0; i < n; i++) {
		double v = what == ISSUE_SHARE	? s[i].share
			   : what == ISSUE_RATE ? s[i].rate
						: s[i].cost;

		if (what == ISSUE_COST && !s[i].have_cost && i + 1 < n)
			continue;
		cp_prom_sample(&x->w, l, issue_labels(x, &s[i], l), v);
	}
}

static int write_issues(struct ctx *x)
{
	const struct cp_classification *c = x->in->issues;
	size_t top = x->in->top ? x->in->top : 1;
	size_t max = (c && c->nr_issues < top ? c->nr_issues : top) + 1;
	struct series *s = calloc(max, sizeof(*s));
	size_t n;

	if (!s)
		return -ENOMEM;
	n = issue_series(x, s);
	if (!n) {
		free(s);
		return -ENOMEM;
	}
	write_issue_family(x, s, n, ISSUE_SHARE, "cacheperf_issue_miss_share_ratio",
			   "Share of the window's sampled misses that the issue explains (0..1).");
	write_issue_family(x, s, n, ISSUE_RATE, "cacheperf_issue_misses_per_second",
			   "Estimated misses per second of the issue in the window (samples x "
			   "period / seconds).");
	if (cp_source_named(x->in->r->source)->has_latency)
		write_issue_family(x, s, n, ISSUE_COST, "cacheperf_issue_latency_cycles_per_second",
				   "Estimated load latency of the issue's misses, cycles per "
				   "second of the window.");
	free(s);
	cp_prom_family(&x->w, "cacheperf_issues", CP_PROM_GAUGE,
		       "Serious issues found in the window (with their own series or in other).");
	cp_prom_sample(&x->w, NULL, 0, c ? (double)(c->nr_issues + c->beyond_top) : 0);
	cp_prom_family(
		&x->w, "cacheperf_issues_suppressed", CP_PROM_GAUGE,
		"Minor issue candidates below a ratio filter in the window (paper section 2.2.2).");
	cp_prom_sample(&x->w, NULL, 0, c ? (double)c->suppressed : 0);
	return 0;
}

/* The window's samples of the processes with one identity (or of "other"). */
struct proc_total {
	const struct cp_prom_ident *id; /* NULL: "other" */
	__u64 loads, stores, load_misses, store_misses;
};

static void add_total(struct proc_total *into, const struct cp_ip_counts *c)
{
	into->loads += c->loads;
	into->stores += c->stores;
	into->load_misses += c->load_misses;
	into->store_misses += c->store_misses;
}

static int by_samples(const void *a, const void *b)
{
	const struct proc_total *x = a, *y = b;
	__u64 sx = x->loads + x->stores, sy = y->loads + y->stores;
	int d;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	/* equal: by labels, so the file does not depend on the store's order */
	d = strcmp(x->id->comm, y->id->comm);
	if (!d)
		d = strcmp(x->id->cgroup, y->id->cgroup);
	if (!d)
		d = strcmp(x->id->container, y->id->container);
	return d ? d : strcmp(x->id->pid, y->id->pid);
}

/*
 * The window's samples summed by process identity (with --prom-pid-label:
 * by process), most samples first, at most CP_PROM_MAX_PROCS and one
 * "other" for the rest: how many; -ENOMEM.
 */
static ssize_t proc_totals(struct ctx *x, const struct cp_insn_store *s, struct proc_total **out)
{
	size_t n = s ? cp_insn_store__count(s) : 0, nr = 0;
	const struct cp_insn **list = calloc(n ? n : 1, sizeof(*list));
	struct proc_total *t = calloc(n ? n : 1, sizeof(*t));

	*out = NULL;
	if (!list || !t)
		goto nomem;
	n = n ? cp_insn_store__top(s, list, n) : 0;
	for (size_t i = 0; i < n; i++) {
		struct ident_of *e = ident_of(x, list[i]->key.tgid);
		size_t k;

		if (!e)
			goto nomem;
		/* once per process: processes of one identity (no pid label) share a total */
		if (e->total < 0) {
			for (k = 0; k < nr && !cp_prom_ident_equal(t[k].id, &e->id); k++)
				;
			if (k == nr)
				t[nr++].id = &e->id;
			e->total = (ssize_t)k;
		}
		add_total(&t[e->total], &list[i]->counts);
	}
	free(list);
	qsort(t, nr, sizeof(*t), by_samples);
	if (nr > CP_PROM_MAX_PROCS) {
		struct proc_total *o = &t[CP_PROM_MAX_PROCS];

		for (size_t i = CP_PROM_MAX_PROCS + 1; i < nr; i++) {
			struct cp_ip_counts c = {.loads = t[i].loads,
						 .stores = t[i].stores,
						 .load_misses = t[i].load_misses,
						 .store_misses = t[i].store_misses};

			add_total(o, &c);
		}
		o->id = NULL;
		nr = CP_PROM_MAX_PROCS + 1;
	}
	*out = t;
	return (ssize_t)nr;
nomem:
	free(list);
	free(t);
	return -ENOMEM;
}

enum proc_value { PROC_SAMPLES, PROC_MISSES, PROC_LOAD_RATIO, PROC_STORE_RATIO };

/*
 * "other" is named in every label: container and cgroup can never be
 * "other" (64 hex digits; a path from "/"), so it is no process's series.
 */
static const struct cp_prom_ident other_ident = {
	.pid = "other",
	.comm = "other",
	.container = "other",
	.cgroup = "other",
};

static void write_proc_family(struct ctx *x, const struct proc_total *t, size_t n,
			      enum proc_value what, const char *name, const char *help)
{
	cp_prom_family(&x->w, name, CP_PROM_GAUGE, help);
	for (size_t i = 0; i < n; i++) {
		const struct cp_prom_ident *id = t[i].id ? t[i].id : &other_ident;
		struct cp_prom_label l[4];
		size_t nl = 0;
		double v;

		if (what == PROC_LOAD_RATIO && !t[i].loads)
			continue;
		if (what == PROC_STORE_RATIO && !t[i].stores)
			continue;
		v = what == PROC_SAMPLES      ? (double)(t[i].loads + t[i].stores)
		    : what == PROC_MISSES     ? (double)(t[i].load_misses + t[i].store_misses)
		    : what == PROC_LOAD_RATIO ? (double)t[i].load_misses / (double)t[i].loads
					      : (double)t[i].store_misses / (double)t[i].stores;
		if (x->in->pid_label)
			l[nl++] = (struct cp_prom_label){"pid", id->pid};
		l[nl++] = (struct cp_prom_label){"comm", id->comm};
		l[nl++] = (struct cp_prom_label){"container", id->container};
		l[nl++] = (struct cp_prom_label){"cgroup", id->cgroup};
		cp_prom_sample(&x->w, l, nl, v);
	}
}

static int write_processes(struct ctx *x)
{
	const struct cp_stats *run = x->in->run ? x->in->run : &x->in->r->bpf;
	struct proc_total *t;
	ssize_t n = proc_totals(x, x->in->r->insns, &t);

	if (n < 0)
		return (int)n;
	write_proc_family(x, t, (size_t)n, PROC_SAMPLES, "cacheperf_process_samples",
			  "Sampled loads and stores of the process in the window.");
	/*
	 * Without cache levels every sample counts as a miss: nothing to say.
	 * Judged over the run, not the window, so the families do not come and go.
	 */
	if (!cp_stats_levels_unknown(run)) {
		write_proc_family(x, t, (size_t)n, PROC_MISSES, "cacheperf_process_misses",
				  "Sampled L1 misses of the process in the window.");
		write_proc_family(
			x, t, (size_t)n, PROC_LOAD_RATIO, "cacheperf_process_load_miss_ratio",
			"Sampled load misses over sampled loads of the process in the window.");
		write_proc_family(
			x, t, (size_t)n, PROC_STORE_RATIO, "cacheperf_process_store_miss_ratio",
			"Sampled store misses over sampled stores of the process in the window.");
	}
	free(t);
	return 0;
}

/* One family with a sample per (label value, value) pair. */
struct labelled {
	const char *value;
	double n; /* a count (exact up to 2^53) or a measure */
};

static void write_labelled(struct ctx *x, const char *name, enum cp_prom_type type,
			   const char *help, const char *label, const struct labelled *v, size_t n)
{
	cp_prom_family(&x->w, name, type, help);
	for (size_t i = 0; i < n; i++) {
		struct cp_prom_label l = {label, v[i].value};

		cp_prom_sample(&x->w, label ? &l : NULL, label ? 1 : 0, v[i].n);
	}
}

static void write_one(struct ctx *x, const char *name, enum cp_prom_type type, const char *help,
		      double v)
{
	cp_prom_family(&x->w, name, type, help);
	cp_prom_sample(&x->w, NULL, 0, v);
}

/*
 * What the run lost, each counter of the report's Drops section (and of
 * its JSON "drops") in the family of its unit, so that sum() of a family
 * adds like things: samples, process events, allocation events, records.
 * A family without a reason has one counter.
 */
struct loss {
	const char *family;
	const char *reason; /* NULL: the family's only sample */
	__u64 n;
};

struct loss_family {
	const char *name, *help;
};

static const struct loss_family loss_families[] = {
	{"cacheperf_samples_lost_total",
	 "Samples lost over the run (a soft tick is a sample), by where: ring_buffer (record not "
	 "delivered), counter_map (not counted per instruction), no_window (no miss window for "
	 "the CPU), soft_pending (its instruction could not be queued for decoding)."},
	{"cacheperf_instruction_store_full_total",
	 "Updates of instructions the instruction store had no room for over the run (an "
	 "interval's counts or a forwarded miss)."},
	{"cacheperf_object_samples_lost_total",
	 "Samples not counted per object over the run: the samples-per-object table was full."},
	{"cacheperf_soft_instructions_lost_total",
	 "Instructions the soft source decoded but had no room to install over the run: their "
	 "ticks are not counted."},
	{"cacheperf_process_events_lost_total",
	 "Process events lost over the run: ring_buffer (exec and exit records), target_filter "
	 "(forks of a target not followed: the filter map was full)."},
	{"cacheperf_records_rejected_total",
	 "Ring-buffer records received but rejected over the run: malformed (wrong size), "
	 "unknown (wrong type)."},
	{"cacheperf_allocation_events_lost_total",
	 "Allocation events lost over the run: ring_buffer (records), live_map (objects not "
	 "kept, so their free is not seen), entry_map (allocator calls not followed)."},
	{"cacheperf_allocation_stack_errors_total",
	 "Allocations kept without their call stack over the run (the stack could not be read)."},
	{"cacheperf_kernel_throttles_total",
	 "Times the kernel throttled a per-CPU sampling event over the run (its samples are lost "
	 "until the next tick)."},
	{"cacheperf_sample_stacks_lost_total",
	 "Samples counted without their call stack over the run: stack_map (the stack map had "
	 "no room), counter_map (the per-stack counter map was full), no_user_stack (no user "
	 "stack could be read), lost_at_take (the stack was gone from the map when its counts "
	 "were taken), store_evicted (evicted from the interval's stacks at their cap)."},
};
#define CP_PROM_NR_LOSSES 24

static size_t loss_list(const struct cp_report *r, const struct cp_stats *b,
			struct loss out[CP_PROM_NR_LOSSES])
{
	const struct cp_alloc_stats *a = &r->alloc.bpf;
	const char *samples = loss_families[0].name, *procs = loss_families[4].name;
	const char *records = loss_families[5].name, *alloc = loss_families[6].name;
	const char *stacks = loss_families[9].name;
	struct loss v[CP_PROM_NR_LOSSES] = {
		{samples, "ring_buffer", b->drop_ringbuf},
		{samples, "counter_map", b->drop_ipmap},
		{samples, "no_window", b->drop_window},
		{samples, "soft_pending", b->drop_pending},
		{loss_families[1].name, NULL, r->insns_dropped},
		{loss_families[2].name, NULL,
		 r->objects ? cp_object_stats__dropped(r->objects) : 0},
		{loss_families[3].name, NULL, r->soft.drop_insns},
		{procs, "ring_buffer", b->drop_proc},
		{procs, "target_filter", b->drop_targets},
		{records, "malformed", r->malformed},
		{records, "unknown", r->unknown},
		{alloc, "ring_buffer", a->drop_ringbuf},
		{alloc, "live_map", a->drop_live_full},
		{alloc, "entry_map", a->drop_entry_full},
		{loss_families[7].name, NULL, a->stack_errors},
		{loss_families[8].name, NULL, r->throttles},
		{stacks, "stack_map", b->drop_stack_map},
		{stacks, "counter_map", b->drop_stack_counts},
		{stacks, "no_user_stack", b->no_ustack},
		{stacks, "lost_at_take", r->live.stacks_lost},
		{stacks, "store_evicted", r->limits.stacks_evicted},
	};
	size_t n = 0;

	while (n < CP_PROM_NR_LOSSES && v[n].family)
		n++;
	memcpy(out, v, sizeof(v));
	return n;
}

__u64 cp_prom_drops_sum(const struct cp_report *r, const struct cp_stats *run)
{
	struct loss d[CP_PROM_NR_LOSSES];
	size_t n = loss_list(r, run ? run : &r->bpf, d);
	__u64 sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += d[i].n;
	return sum;
}

static void write_losses(struct ctx *x, const struct cp_stats *b)
{
	struct loss d[CP_PROM_NR_LOSSES];
	size_t n = loss_list(x->in->r, b, d);

	for (size_t f = 0; f < sizeof(loss_families) / sizeof(loss_families[0]); f++) {
		cp_prom_family(&x->w, loss_families[f].name, CP_PROM_COUNTER,
			       loss_families[f].help);
		for (size_t i = 0; i < n; i++) {
			struct cp_prom_label l = {"reason", d[i].reason};

			if (d[i].family == loss_families[f].name)
				cp_prom_sample(&x->w, &l, d[i].reason ? 1 : 0, (double)d[i].n);
		}
	}
}

/* The runs the kernel skipped, by BPF program (those with any; none: no sample). */
static void write_prog_misses(struct ctx *x)
{
	const struct cp_live_drops *d = &x->in->r->live;
	struct labelled v[CP_MAX_PROG_DROPS];

	for (__u32 i = 0; i < d->nr_progs; i++)
		v[i] = (struct labelled){d->progs[i].name, d->progs[i].misses};
	write_labelled(x, "cacheperf_bpf_recursion_misses_total", CP_PROM_COUNTER,
		       "Runs of a BPF program of the profiler the kernel skipped over the run, by "
		       "program: a BPF program was already running on that CPU (live runs only; "
		       "the programs with any).",
		       "program", v, d->nr_progs);
}

static void write_samples(struct ctx *x)
{
	const struct cp_report *r = x->in->r;
	const struct cp_stats *b = x->in->run ? x->in->run : &r->bpf;
	struct labelled samples[] = {
		{"load", b->samples[CP_ACCESS_LOAD]},
		{"store", b->samples[CP_ACCESS_STORE]},
	};
	struct labelled misses[] = {
		{"load", b->misses[CP_ACCESS_LOAD]},
		{"store", b->misses[CP_ACCESS_STORE]},
	};

	write_labelled(x, "cacheperf_samples_total", CP_PROM_COUNTER,
		       "Sampled accesses of the targets over the run, by access.", "access",
		       samples, 2);
	write_labelled(x, "cacheperf_sample_misses_total", CP_PROM_COUNTER,
		       "Of them, sampled L1 misses (sources with cache levels).", "access", misses,
		       2);
	write_one(x, "cacheperf_received_total", CP_PROM_COUNTER,
		  "Ring-buffer records the profiler received over the run.", (double)r->received);
	write_losses(x, b);
	write_prog_misses(x);
	write_one(x, "cacheperf_samples_filtered_total", CP_PROM_COUNTER,
		  "Misses not forwarded over the run: their miss-ratio window was below the "
		  "threshold.",
		  (double)b->filtered);
	write_one(x, "cacheperf_sample_period_changes_total", CP_PROM_COUNTER,
		  "Sample periods raised or lowered by the sample-rate cap over the run.",
		  (double)r->period_changes);
}

/* Label values of enum cp_bp_manager_reason (the report's wording has spaces). */
static const char *const release_names[CP_BPM_REASON_NR] = {
	[CP_BPM_KEEP] = "kept", [CP_BPM_FULL] = "full",		[CP_BPM_SETTLED] = "settled",
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
		released[n++] = (struct labelled){release_names[i], bp->stats.released[i]};
	write_one(x, "cacheperf_breakpoints_armed_total", CP_PROM_COUNTER,
		  "Instructions armed with a hardware breakpoint over the run.",
		  (double)bp->stats.armed);
	write_one(x, "cacheperf_breakpoint_hits_total", CP_PROM_COUNTER,
		  "Hardware-breakpoint hits over the run.", (double)bp->stats.hits);
	write_labelled(x, "cacheperf_breakpoints_released_total", CP_PROM_COUNTER,
		       "Breakpoints let go over the run, by reason (idle, lifetime: expired).",
		       "reason", released, n);
	write_one(x, "cacheperf_breakpoints_watching", CP_PROM_GAUGE, "Instructions armed now.",
		  (double)bp->stats.watching);
	write_one(x, "cacheperf_breakpoint_candidates_dropped_total", CP_PROM_COUNTER,
		  "Instructions that qualified for a breakpoint but were not tracked over the run "
		  "(the candidate table was full).",
		  (double)bp->stats.dropped);
}

/* A family of gauges with one label, @n values. */
static void write_gauges(struct ctx *x, const char *name, const char *help, const char *label,
			 const char *const *values, const double *v, size_t n)
{
	cp_prom_family(&x->w, name, CP_PROM_GAUGE, help);
	for (size_t i = 0; i < n; i++) {
		struct cp_prom_label l = {label, values[i]};

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
	static const char *const probes[] = {"ticks", "breakpoints", "wakeups", "syscalls",
					     "allocation_probes"};
	static const char *const units[] = {
		"tick",	   "uprobe",	       "uretprobe",	      "breakpoint_hit", "wakeup",
		"syscall", "syscall_programs", "allocation_programs", "tick_program"};
	double spent[] = {
		cp_budget_ppm_of(s, s->ticks_ns) / 1e6, cp_budget_ppm_of(s, s->bp_ns) / 1e6,
		cp_budget_ppm_of(s, s->wakeups_ns) / 1e6, cp_budget_ppm_of(s, s->syscalls_ns) / 1e6,
		cp_budget_ppm_of(s, s->alloc_ns) / 1e6};
	double cost[] = {b->unit.tick_ns / 1e9,		b->unit.uprobe_ns / 1e9,
			 b->unit.uretprobe_ns / 1e9,	b->unit.bp_hit_ns / 1e9,
			 b->unit.wakeup_ns / 1e9,	b->unit.syscall_ns / 1e9,
			 b->unit.syscall_prog_ns / 1e9, b->unit.alloc_prog_ns / 1e9,
			 b->unit.tick_prog_ns / 1e9};

	if (!b->plan.budget_ppm)
		return;
	write_one(x, "cacheperf_overhead_budget_ratio", CP_PROM_GAUGE,
		  "The share of the targets' CPU time the probes may take (--overhead).",
		  b->plan.budget_ppm / 1e6);
	write_gauges(
		x, "cacheperf_overhead_estimated_ratio",
		"The probes' estimated cost over the run, as a share of the targets' CPU time.",
		"probe", probes, spent, 5);
	write_gauges(x, "cacheperf_probe_unit_cost_seconds",
		     "What one probe costs a target on this machine, measured at start "
		     "(allocation_programs: per call, tick_program: per tick, as the programs "
		     "time themselves).",
		     "probe", units, cost, 9);
	write_one(x, "cacheperf_overhead_cpu_max_estimated_ratio", CP_PROM_GAUGE,
		  "The probes' estimated cost on the CPU they cost most, as a share of its time.",
		  s->nr_cpus ? s->cpu_ppm[s->cpu_max] / 1e6 : 0);
	write_one(x, "cacheperf_overhead_process_max_estimated_ratio", CP_PROM_GAUGE,
		  "The probes' estimated cost in the probed process they cost most, as a share of "
		  "its CPU time (0: no process probed on its own, as with -a).",
		  proc_max_ppm(s) / 1e6);
	write_one(x, "cacheperf_overhead_interval_max_estimated_ratio", CP_PROM_GAUGE,
		  "The probes' estimated cost in the costliest interval of 10 s, as a share of "
		  "the targets' CPU time in it (0: the run was shorter than an interval).",
		  s->interval_ppm / 1e6);
	write_one(x, "cacheperf_allocation_probes_attached_ratio", CP_PROM_GAUGE,
		  "The share of the run the allocation probes were attached (budget windows).",
		  s->alloc_run_ns ? (double)s->alloc_attached_ns / (double)s->alloc_run_ns : 0);
}

/* The sealed copies of targets' files: made once per file content, reused by later processes. */
static void write_copies(struct ctx *x, const struct cp_copy_stats *c)
{
	const struct labelled v[] = {
		{"made", c->made},
		{"reused", c->hits},
		{"evicted", c->evictions},
	};

	write_labelled(x, "cacheperf_file_copies_total", CP_PROM_COUNTER,
		       "Sealed copies of targets' files: made, reused by a later process, evicted.",
		       "result", v, sizeof(v) / sizeof(v[0]));
	write_one(x, "cacheperf_file_copies_kept_bytes", CP_PROM_GAUGE,
		  "Memory the kept sealed copies of targets' files hold (in --max-memory).",
		  (double)c->held_bytes);
}

/* The profiler's own CPU time and memory (machine/agent_cost.h): a live run's only. */
static void write_agent(struct ctx *x, const struct cp_agent_cost *a)
{
	struct labelled cpu[] = {
		{"startup", a->startup_cpu_ns / 1e9},
		{"steady", a->steady_cpu_ns / 1e9},
	};
	struct labelled mem[] = {
		{"now", (double)a->memory_bytes},
		{"peak", (double)a->peak_memory_bytes},
	};

	if (!a->known)
		return;
	write_labelled(x, "cacheperf_agent_cpu_seconds_total", CP_PROM_COUNTER,
		       "User and system CPU time of the profiler, all its threads, by phase: "
		       "startup (from its exec until sampling began: loading, calibration, "
		       "attaching) and steady (since).",
		       "phase", cpu, 2);
	if (a->memory_known)
		write_labelled(
			x, "cacheperf_agent_memory_bytes", CP_PROM_GAUGE,
			"The profiler's memory as the kernel counts it, now and at its peak.",
			"kind", mem, 2);
}

static void write_self(struct ctx *x)
{
	const struct cp_prom_input *in = x->in;
	const struct cp_report *r = in->r;
	struct cp_prom_label info[] = {{"source", r->source}, {"pmu", in->pmu}};

	write_one(x, "cacheperf_objects_tracked", CP_PROM_GAUGE,
		  "Objects (heap allocations, mappings) in the profiler's object table now.",
		  (double)r->objects_live);
	write_one(x, "cacheperf_allocation_guard_backoffs_total", CP_PROM_COUNTER,
		  "Times the allocation-rate guard detached a process's allocation probes.",
		  (double)r->guard_backoffs);
	cp_prom_family(&x->w, "cacheperf_source_info", CP_PROM_GAUGE,
		       "The sample source in use and the sampling PMU this machine has (1).");
	cp_prom_sample(&x->w, info, 2, 1);
	write_one(x, "cacheperf_window_seconds", CP_PROM_GAUGE,
		  "Span of the summary the per-issue and per-process series describe.",
		  in->window_s);
	write_agent(x, &r->agent);
	if (!in->self)
		return;
	write_copies(x, &in->self->copies);
	write_one(x, "cacheperf_last_write_timestamp_seconds", CP_PROM_GAUGE,
		  "Unix time at which the profiler wrote this file.", in->self->write_time);
}

int cp_prom_metrics_write(const struct cp_prom_input *in, FILE *f)
{
	struct ctx x = {.in = in};
	int ret;

	cp_prom_writer_init(&x.w, f);
	ret = write_issues(&x);
	if (!ret)
		ret = write_processes(&x);
	idents_free(&x.ids);
	if (ret)
		return ret;
	write_samples(&x);
	write_breakpoints(&x);
	write_budget(&x);
	write_self(&x);
	return cp_prom_writer_finish(&x.w);
}
