// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The live run loop and the profile's hooks. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf.skel.h"
#include "breakpoints/bp_report.h"
#include "budget/prog_cost.h"
#include "live/alloc_probes.h"
#include "machine/source.h"
#include "machine/target_file.h"
#include "live/cpu_costs.h"
#include "symbols/parse_worker.h"
#include "symbols/sym_server.h"
#include "symbols/unwind.h"
#include "symbols/stack_copies.h"
#include "live/bp_sampler.h"
#include "live/drain.h"
#include "live/rate_cap.h"
#include "live/run.h"
#include "live/signals.h"
#include "live/site_jobs.h"
#include "live/soft_source.h"
#include "live/stack_drain.h"
#include "machine/agent_cost.h"
#include "objects/alloc_events.h"
#include "objects/proc_maps.h"
#include "objects/stack_gen.h"
#include "profile/bpf_stats.h"
#include "profile/proc_identity.h"
#include "util/clock.h"
#include "util/log.h"

#define CP_IP_BATCH    4096 /* counter entries moved per map walk */
#define CP_STACK_BATCH 1024 /* stack counter entries moved per map walk */
/* re-read maps for an unmapped sample address at most this often */
#define CP_MAPS_REFRESH_FAST_NS 20000000ull
/* exec'd processes whose allocation probes wait for the end of the batch */
#define CP_PENDING_PROBES 64
/* how long an exec'd target's allocator is looked for again while its libraries are mapped */
#define CP_PROBE_RETRY_NS	2000000000ull
#define CP_PROBE_RETRY_EVERY_NS 5000000ull
#define CP_PROBE_RETRY_LAX_NS	45000000ull /* -a: a retry waits for a turn this long */
/* processes a second whose modules may be opened to unwind stack copies */
#define CP_UNWIND_OPENS_PER_S 8

struct cp_live {
	struct cp_profile *prof;
	struct cp_session *sess;
	struct cp_drain *drain;
	struct cp_recorder *rec;     /* --record; NULL otherwise */
	struct cp_bp_sampler *bps;   /* breakpoint sampling; NULL when off */
	bool bp_silent;		     /* off: breakpoints never fire here */
	struct cp_soft_source *soft; /* --source soft: decodes ticked ips; NULL otherwise */
	struct cp_rate_cap_cfg rate;
	struct cp_insn *batch;
	struct cp_stack_drain *stacks; /* the samples' call stacks */
	struct cp_stack_sample *stack_batch;
	bool ended;			  /* end facts final: the run is over */
	bool blind_warned;		  /* the PMU's samples carry no data source: said */
	__u64 cpu_first_ns, cpu_last_ns;  /* the targets' CPU time: first and last reading */
	__u64 bp_rate_ns, bp_rate_cpu_ns; /* when the hit rate last followed it, and it then */
	pid_t pending[CP_PENDING_PROBES]; /* exec'd, allocation probes not attached yet */
	int nr_pending;
	/*
	 * exec'd processes whose allocator is not mapped yet, asked again at
	 * retry_next until retry_until, the waits doubling from 5 ms
	 */
	pid_t retry[CP_PENDING_PROBES];
	__u64 retry_until[CP_PENDING_PROBES], retry_next[CP_PENDING_PROBES];
	bool retry_lax[CP_PENDING_PROBES]; /* woken for late: retry_due() */
	int nr_retry;
	struct cp_stack_copies copies; /* call sites' stack copies, for CFI */
	struct cp_site_jobs sites;     /* new call sites waiting to be unwound */
	__u64 sites_in_drain, sites_longest_ns;
	/* walked events' stack copies unwound since the last collect */
	struct cp_stack_sample *copied;
	size_t nr_copied;
	/* processes whose modules were opened for copies in second opens_s */
	__u64 opens_s;
	unsigned int opens;
	pid_t opened;		       /* the last of them: its next copies count no second open */
	__u64 opens_refused;	       /* copies not unwound: over CP_UNWIND_OPENS_PER_S */
	__u64 unwind_gone;	       /* copies not unwound: no maps of their process left */
	struct cp_agent_since agent;   /* the profiler's start-up ended: the loop began */
	struct cp_stack_gen stack_gen; /* the allocation stack maps' generations */
	__u64 drained_ns;	       /* the ring buffer was last read to its end then */
	struct cp_budget_intervals intervals; /* the budget's estimate per interval */
};

/* --- the profile's hooks, and the live-only records ------------------------ */

static void on_sample_hook(void *ctx, const struct cp_sample *s, bool miss)
{
	struct cp_live *l = ctx;

	if (miss && l->bps)
		cp_bp_sampler__note_miss(l->bps, s->tgid, s->cpu, s->ip, s->addr, s->time_ns);
}

static void on_proc_hook(void *ctx, const struct cp_proc_event *pe)
{
	struct cp_live *l = ctx;
	pid_t pid = (pid_t)pe->tgid;

	/* a new address space, or none: its instructions are other ones now */
	if (l->bps)
		cp_bp_sampler__forget(l->bps, pe->tgid, cp_now_ns());
	if (l->soft)
		cp_soft_source__forget(l->soft, pe->tgid);
	if (pe->kind == CP_PROC_EXEC) {
		/*
		 * A process a target started: probe its allocator too (-EEXIST: has
		 * it), but after the batch. Attaching takes milliseconds per probe;
		 * the snapshots of processes exec'd meanwhile, which may live less
		 * than that, come first.
		 */
		if (l->nr_pending < CP_PENDING_PROBES)
			l->pending[l->nr_pending++] = pid;
		else
			cp_session__probe_allocs(l->sess, pid, true);
	} else if (pe->kind == CP_PROC_EXIT) {
		/* gone before its probes were attached: nothing to attach */
		for (int i = 0; i < l->nr_pending; i++)
			if (l->pending[i] == pid)
				l->pending[i] = 0;
		/* asked again for its allocator: counted as skipped, it exited */
		for (int i = 0; i < l->nr_retry; i++)
			if (l->retry[i] == pid) {
				cp_session__probe_gone(l->sess, pid);
				l->retry[i] = 0;
			}
		if (l->sess->alloc)
			cp_alloc_probes__detach_pid(l->sess->alloc, pid);
	}
}

/* A breakpoint's event: disarm it at once. */
static void on_bp_event(struct cp_live *l, const void *data)
{
	if (l->bps)
		cp_bp_sampler__on_event(l->bps, data, l->prof->insns, l->prof->misses, cp_now_ns());
}

static void on_record_hook(void *ctx, const void *data, size_t size)
{
	struct cp_live *l = ctx;

	if (l->rec)
		cp_recorder__event(l->rec, data, size);
}

static void on_counters_hook(void *ctx, const struct cp_insn *v, size_t n)
{
	struct cp_live *l = ctx;

	if (l->rec)
		cp_recorder__counters(l->rec, v, n);
}

static void on_stacks_hook(void *ctx, const struct cp_stack_sample *v, size_t n)
{
	struct cp_live *l = ctx;

	if (l->rec)
		cp_recorder__stacks(l->rec, v, n);
}

/*
 * By how much the programs' run time over the run raised the estimate @s
 * made with @u over the one their first measure gave (0: not raised).
 */
static void budget_revised(const struct cp_run_end *e, const struct cp_unit_costs *u,
			   struct cp_budget_spent *s)
{
	struct cp_unit_costs first = *u;
	struct cp_budget_spent then = *s;

	s->prog_measures = e->alloc.prog_measures;
	if (!e->alloc.prog_ns_first)
		return;
	first.alloc_prog_ns = e->alloc.prog_ns_first;
	first.syscall_prog_ns = e->alloc.sys_prog_ns_first;
	cp_budget_estimate(&first, &then);
	s->revised_ppm = cp_prog_cost_revised_ppm(cp_budget_total_ns(&then), cp_budget_total_ns(s));
}

/* The costliest interval, priced with the final unit costs @u, into @s. */
static void budget_worst_interval(const struct cp_live *l, const struct cp_unit_costs *u,
				  struct cp_budget_spent *s)
{
	struct cp_budget_interval w;

	s->intervals = l->intervals.count;
	s->intervals_over = l->intervals.over;
	if (!cp_budget_intervals_worst(&l->intervals, u, &w))
		return;
	s->interval_ppm = w.ppm;
	s->interval_from_ns = w.from_ns;
	s->interval_to_ns = w.to_ns;
	s->interval_cpu_ns = w.cpu_ns;
}

/*
 * Once a step under a budget: the probes' counts and the targets' CPU time
 * for the estimate per interval, priced with the unit costs known now (the
 * programs' once measured on the targets' first calls).
 */
static void budget_reading(struct cp_live *l, __u64 now)
{
	struct cp_budget_reading r = {.at_ns = now, .cpu_ns = l->cpu_last_ns};
	struct cp_unit_costs u = l->prof->info.unit;
	__u32 budget = l->prof->info.budget.budget_ppm;

	if (!budget || !cp_budget_intervals_due(&l->intervals, now) ||
	    cp_cpu_costs__reading(l->sess->skel, &r))
		return;
	if (l->sess->alloc) {
		struct cp_alloc_probes_stats st;

		cp_alloc_probes__stats(l->sess->alloc, &st);
		u.alloc_prog_ns = st.prog_ns;
		u.syscall_prog_ns = st.sys_prog_ns;
	}
	cp_budget_intervals_add(&l->intervals, &u, budget, &r);
}

struct proc_spent {
	const struct cp_unit_costs *u;
	struct cp_budget_spent *s;
};

static void add_proc(void *ctx, const struct cp_budget_proc *p)
{
	struct proc_spent *ps = ctx;

	cp_budget_add_proc(ps->u, ps->s, *p);
}

/*
 * What the probes cost the targets so far, from the counts and @u: the
 * run's, each CPU's, each probed process's.
 */
static void budget_spent(const struct cp_live *l, const struct cp_unit_costs *u,
			 struct cp_run_end *e)
{
	struct cp_budget_spent *s = &e->spent;
	struct proc_spent ps = {u, s};

	memset(s, 0, sizeof(*s));
	s->target_cpu_ns = l->cpu_last_ns - l->cpu_first_ns;
	s->wall_ns = cp_now_ns() - l->prof->info.start_ns;
	s->ticks = e->bpf.ticks + e->bpf.ticks_kernel;
	if (l->bps)
		s->bp_hits = cp_bp_sampler__summary(l->bps)->stats.hits;
	s->alloc_calls = e->alloc.calls;
	s->alloc_attached_ns = e->alloc.attached_ns;
	s->alloc_run_ns = e->alloc.run_ns;
	cp_cpu_costs__estimate(l->sess->skel, u, s);
	cp_budget_estimate(u, s);
	budget_revised(e, u, s);
	budget_worst_interval(l, u, s);
	if (l->sess->alloc)
		cp_alloc_probes__each_proc(l->sess->alloc, add_proc, &ps);
}

/* The live end facts: the BPF counters and drops as they are now. */
/* What was lost on the way that only the live run counts. */
static void live_drops(const struct cp_live *l, struct cp_live_drops *d)
{
	struct bpf_program *prog;

	*d = (struct cp_live_drops){
		.stacks_lost = cp_stack_drain__lost(l->stacks),
		.alloc_stacks_missing = l->stack_gen.missing,
	};
	bpf_object__for_each_program(prog, l->sess->skel->obj)
	{
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			cp_live_drops_add_prog(d, bpf_program__name(prog), info.recursion_misses);
	}
}

/*
 * The programs' run time per call over the whole run, from the sums they
 * keep per CPU (bpf/cpu_cost.bpf.h), into @u: what the run's and each
 * process's estimate price a call at, as the intervals and CPUs are. The
 * highest of the measures sized the windows and was charged to the
 * account; priced at it, every call of a 60 s run cost what the dearest
 * 3 s under contention did, and a run whose every interval was inside the
 * budget came out over it. Without the sums, the measures.
 */
static void run_prog_ns(const struct cp_live *l, const struct cp_run_end *e,
			struct cp_unit_costs *u)
{
	struct cp_prog_cost none = {0}, prog, sys;
	struct cp_cpu_cost sum;

	u->alloc_prog_ns = e->alloc.prog_ns;
	u->syscall_prog_ns = e->alloc.sys_prog_ns;
	if (cp_cpu_costs__sum(l->sess->skel, &sum))
		return;
	if (sum.ticks)
		u->tick_prog_ns = sum.tick_prog_ns / sum.ticks;
	if (!l->sess->alloc)
		return;
	prog = (struct cp_prog_cost){.run_ns = sum.alloc_prog_ns, .calls = sum.alloc_prog_calls};
	sys = (struct cp_prog_cost){.run_ns = sum.sys_prog_ns, .calls = sum.syscalls};
	cp_prog_cost_per_call(&prog, &none, 1, &u->alloc_prog_ns);
	if (sum.sys_prog_ns)
		cp_prog_cost_per_call(&sys, &none, 1, &u->syscall_prog_ns);
}

static void live_end(const struct cp_live *l, struct cp_run_end *e)
{
	cp_drain__stats(l->drain, &e->bpf);
	e->malformed = cp_drain__malformed(l->drain);
	e->unknown = cp_drain__unknown(l->drain);
	e->guard_backoffs = l->sess->guard_backoffs;
	e->have_alloc = l->sess->alloc != NULL;
	if (l->sess->alloc)
		cp_alloc_probes__stats(l->sess->alloc, &e->alloc);
	if (l->soft)
		cp_soft_source__stats(l->soft, &e->soft);
	live_drops(l, &e->live);
	run_prog_ns(l, e, &l->prof->info.unit);
	budget_spent(l, &l->prof->info.unit, e);
	cp_agent_cost_read(&l->agent, &e->agent);
	cp_drain__timing(l->drain, &e->agent.drain);
	e->agent.drain.sites_queued = l->sites.queued;
	e->agent.drain.sites_in_drain = l->sites_in_drain;
	e->agent.drain.sites_most = l->sites.most;
	e->agent.drain.sites_longest_ns = l->sites_longest_ns;
}

static void on_end_facts_hook(void *ctx, struct cp_run_end *e)
{
	struct cp_live *l = ctx;

	if (!l->ended)
		live_end(l, e);
}

static const struct cp_bp_summary *on_bp_summary_hook(void *ctx)
{
	static const struct cp_bp_summary bp_off = {.disabled = true};
	static const struct cp_bp_summary bp_silent = {.disabled = true, .silent = true};
	struct cp_live *l = ctx;

	if (l->bps)
		return cp_bp_sampler__summary(l->bps);
	return l->bp_silent ? &bp_silent : &bp_off;
}

/* A call site's stack copy: kept for feed_site_frames(), which follows at once. */
static void on_ustack(struct cp_live *l, const struct cp_ustack_record *r)
{
	cp_stack_copies_put(&l->copies, r);
}

/*
 * Whether process @pid's modules may be opened for CFI unwinding now: at
 * most CP_UNWIND_OPENS_PER_S processes a second, for the sample and the
 * allocation stack copies together; refusals counted in opens_refused.
 */
static bool may_open_modules(struct cp_live *l, pid_t pid)
{
	__u64 now_s;

	if (cp_symbolizer__has_process_dwfl(l->prof->sym, pid))
		return true;
	now_s = cp_now_ns() / 1000000000ull;
	if (now_s != l->opens_s) {
		l->opens_s = now_s;
		l->opens = 0;
		l->opened = 0;
	}
	/* a process whose open failed (it exited) is one process, not one per copy */
	if (pid == l->opened)
		return true;
	if (l->opens >= CP_UNWIND_OPENS_PER_S) {
		l->opens_refused++;
		return false;
	}
	l->opens++;
	l->opened = pid;
	return true;
}

/* The frame-pointer walk of @ips (@n) reached where the thread started. */
static bool walk_whole(struct cp_live *l, pid_t pid, const __u64 *ips, size_t n)
{
	struct cp_symbol_info info;

	return n && !cp_symbolizer__resolve_now(l->prof->sym, pid, ips[n - 1] - 1, 0, &info) &&
	       cp_unwind_reached_start(info.function);
}

/*
 * CFI unwinding of @caller's stack copy into @ips when the frame-pointer
 * walk (@n frames there) stopped short: code without frame pointers on
 * the way, as libstdc++'s operator new. Returns the frames now in @ips.
 * Opening a process's modules for it takes ~17 ms, once per process, and
 * counts against the same cap as the samples' copies (may_open_modules()).
 */
static size_t unwind_short(struct cp_live *l, const struct cp_ustack_record *r, pid_t pid,
			   __u64 *ips, size_t n, size_t max)
{
	__u64 cfi[CP_ALLOC_STACK_DEPTH];
	size_t k;

	if (!r || walk_whole(l, pid, ips, n) || !may_open_modules(l, pid))
		return n;
	k = cp_unwind(l->prof->sym, r, cfi,
		      max < CP_ALLOC_STACK_DEPTH ? max : CP_ALLOC_STACK_DEPTH);
	if (k <= n)
		return n;
	memcpy(ips, cfi, k * sizeof(*ips));
	return k;
}

/* What the sample stack copies did over the run (-v). */
static void say_stack_copies(const struct cp_live *l)
{
	const struct cp_stack_copy_stats *b = &l->sess->skel->bss->stack_copy_stats;
	struct cp_stack_copy_tally t = cp_stack_drain__copies(l->stacks);

	if (b->copied || b->ring_full)
		cp_info("call stacks: %llu walked events copied, %llu made deeper by CFI; "
			"%llu counted on their frame-pointer walk, the copy ring full; "
			"%llu not unwound, over %d processes a second to open; "
			"%llu not unwound, their process gone before its modules were opened",
			(unsigned long long)t.copies, (unsigned long long)t.deeper,
			(unsigned long long)b->ring_full, (unsigned long long)l->opens_refused,
			CP_UNWIND_OPENS_PER_S, (unsigned long long)l->unwind_gone);
}

/* The copied stacks unwound so far into the profile (and a recording), one batch. */
static void flush_copied(struct cp_live *l)
{
	if (l->nr_copied)
		cp_profile__add_stacks(l->prof, l->copied, l->nr_copied);
	l->nr_copied = 0;
}

/* A walked event's stack copy: unwound at once, kept for the next collect. */
static void on_sample_ustack(struct cp_live *l, const struct cp_sample_ustack_record *r)
{
	if (cp_stack_drain__copy(l->stacks, r, &l->copied[l->nr_copied]))
		return;
	if (++l->nr_copied == CP_STACK_BATCH)
		flush_copied(l);
}

/*
 * The live-only records (records.c: live_only), which the profile never
 * sees and a recording never holds: a breakpoint's event, a call site's
 * and a walked event's stack copies. Their sizes are checked.
 */
static int on_live_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct cp_live *l = ctx;

	(void)size;
	if (type == CP_REC_BP)
		on_bp_event(l, data);
	else if (type == CP_REC_USTACK)
		on_ustack(l, data);
	else if (type == CP_REC_SAMPLE_USTACK)
		on_sample_ustack(l, data);
	else
		l->prof->counts.unknown++; /* a live-only row without its case here */
	return 0;
}

/* cp_stack_unwinder.whole: the walk reached its thread's start. */
static bool stack_whole(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr)
{
	return walk_whole(ctx, (pid_t)tgid, pcs, nr);
}

/*
 * cp_stack_unwinder.unwind: a sampled stack copy by CFI. Opening a
 * process's modules for it takes ~17 ms: at most CP_UNWIND_OPENS_PER_S
 * processes a second have them opened for copies (a `-- make` starts
 * compilers without frame pointers by the hundred); the copies of the
 * others keep their frame-pointer walks. A copy read after its process's
 * exit record (the copies' ring is read apart from the events') is walked
 * in the modules opened while it lived; one whose process had none opened
 * cannot be (its maps went with it), counted in unwind_gone.
 */
static size_t stack_unwind(void *ctx, const struct cp_ustack_record *r, __u64 *pcs, size_t max)
{
	struct cp_live *l = ctx;
	size_t n;

	if (!may_open_modules(l, (pid_t)r->tgid))
		return 0;
	n = cp_unwind(l->prof->sym, r, pcs, max);
	if (!n && !cp_symbolizer__has_process_dwfl(l->prof->sym, (pid_t)r->tgid))
		l->unwind_gone++;
	return n;
}

/*
 * A queued call site's frames (site_jobs.h): the walk deepened by CFI from
 * the site's stack copy where it stopped short, fed as a
 * CP_REC_ALLOC_STACK record, handled and recorded like any record, so a
 * replay reaches the same frames. @in_drain: run inside the ring-buffer
 * callback (the queue full, a process event next), counted.
 */
static void run_site_job(struct cp_live *l, struct cp_site_job *j, bool in_drain)
{
	struct cp_alloc_stack_record *r = &j->r;
	__u64 start = cp_now_ns(), took;

	r->nr = (__u32)unwind_short(l, j->have_copy ? &j->copy : NULL, (pid_t)r->tgid, r->ips, j->n,
				    CP_ALLOC_STACK_DEPTH);
	/* within its row (records.c): nr <= CP_ALLOC_STACK_DEPTH, a tgid, a stack id */
	cp_profile__feed(l->prof, r,
			 offsetof(struct cp_alloc_stack_record, ips) + r->nr * sizeof(r->ips[0]));
	took = cp_now_ns() - start;
	l->sites_in_drain += in_drain;
	if (took > l->sites_longest_ns)
		l->sites_longest_ns = took;
}

/* cp_site_jobs_run_pid()'s: before a process event, in the callback. */
static void run_site_job_in_drain(void *ctx, struct cp_site_job *j)
{
	run_site_job(ctx, j, true);
}

/* Between polls: the queued call sites, oldest first, for @budget_ns (0: all); at least one. */
static void run_site_jobs(struct cp_live *l, __u64 budget_ns)
{
	__u64 end = cp_now_ns() + budget_ns;
	struct cp_site_job *j;

	while ((j = cp_site_jobs_take(&l->sites))) {
		run_site_job(l, j, false);
		if (budget_ns && cp_now_ns() >= end)
			break;
	}
}

/*
 * A new call site an object event names: its frame-pointer walk read from
 * the BPF stack map now (the map's generation may end; a lookup), its
 * stack copy taken from the ring before newer ones overwrite it, and the
 * rest queued for between polls. The site's frames then follow its first
 * object event. A site whose stack cannot be read gets a record without
 * frames.
 */
static void feed_site_frames(struct cp_live *l, const struct cp_object_event *ev)
{
	pid_t pid = (pid_t)ev->tgid;
	const struct cp_ustack_record *copy;
	struct cp_alloc_stack_record *r;
	struct cp_site_job *j;
	__s64 stack_id;
	__u64 caller;
	size_t n;

	if (!cp_alloc_event_site(ev, &caller, &stack_id) ||
	    !cp_objects__callsite_unread(l->prof->objects, pid, caller, stack_id) ||
	    cp_site_jobs_has(&l->sites, ev->tgid, caller, stack_id))
		return;
	j = cp_site_jobs_add(&l->sites);
	if (!j) {
		/* the queue is full: its oldest runs now, in the callback */
		run_site_job(l, cp_site_jobs_take(&l->sites), true);
		j = cp_site_jobs_add(&l->sites);
		if (!j)
			return;
	}
	r = &j->r;
	*r = (struct cp_alloc_stack_record){
		.type = CP_REC_ALLOC_STACK,
		.tgid = ev->tgid,
		.caller = caller,
		.stack_id = stack_id,
	};
	n = cp_alloc_stack_read(l->sess->skel, r->stack_id, r->ips, CP_ALLOC_STACK_DEPTH);
	cp_stack_gen_read(&l->stack_gen, r->stack_id, n > 0);
	/*
	 * taken at the entry of an exit-probed operator new (bpf/alloc.bpf.c),
	 * the walk began inside the allocator; at a function's first
	 * instruction the kernel puts the return address second
	 */
	if (n > 1 && r->ips[0] != r->caller && r->ips[1] == r->caller)
		memmove(r->ips, r->ips + 1, --n * sizeof(r->ips[0]));
	else if (n && r->ips[0] != r->caller)
		r->ips[0] = r->caller;
	j->n = n;
	copy = cp_stack_copies_take(&l->copies, ev->tgid, caller);
	j->have_copy = copy != NULL;
	if (copy)
		j->copy = *copy;
}

/* cp_record_ops.sample of a live run: the profile's. */
static int on_sample_record(const struct cp_sample *s, void *ctx)
{
	struct cp_live *l = ctx;

	return l->prof->ops.sample(s, l->prof->ops.ctx);
}

/*
 * cp_record_ops.record of a live run: the profile's, after the frames of
 * the call site an object event names, if they are new.
 */
static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct cp_live *l = ctx;

	if (type == CP_REC_OBJECT) {
		struct cp_object_event ev;

		memcpy(&ev, data, sizeof(ev));
		feed_site_frames(l, &ev);
	} else if (type == CP_REC_PROC) {
		struct cp_proc_event pe;

		/* no frames after their process exec'd or exited: its maps and symbols go */
		memcpy(&pe, data, sizeof(pe));
		cp_site_jobs_run_pid(&l->sites, pe.tgid, run_site_job_in_drain, l);
	}
	return l->prof->ops.record(type, data, size, l->prof->ops.ctx);
}

/* The allocation guard backed off or resumed: objects of that process become doubtful. */
static void on_guard(pid_t pid, bool backed_off, void *ctx)
{
	struct cp_live *l = ctx;

	/* the resume is a little later than the re-attach: a few objects more in doubt */
	cp_objects__on_guard(l->prof->objects, pid, backed_off, cp_now_ns());
}

/*
 * Once a second under a budget: the breakpoint hit rate follows the CPUs
 * the targets used in that second (cp_budget_bp_rate()).
 */
static void follow_cpu(struct cp_live *l, const struct cp_live_cfg *cfg, __u64 now)
{
	if (!l->bps || !cfg->bp_rate_follows_cpu || !cfg->targets_cpu_ns)
		return;
	if (!l->bp_rate_ns) {
		l->bp_rate_ns = now;
		l->bp_rate_cpu_ns = l->cpu_last_ns;
		return;
	}
	if (now - l->bp_rate_ns < 1000000000ull)
		return;
	cp_bp_sampler__set_rate(l->bps, cp_budget_bp_rate(cfg->max_bp_rate,
							  l->cpu_last_ns - l->bp_rate_cpu_ns,
							  now - l->bp_rate_ns));
	l->bp_rate_ns = now;
	l->bp_rate_cpu_ns = l->cpu_last_ns;
}

/*
 * Ends the allocation stacks' generation when its map fills, and empties
 * the map of the one before once its events were read (objects/stack_gen.h).
 */
static void stack_gen_tick(struct cp_live *l, __u64 now)
{
	struct cacheperf *skel = l->sess->skel;

	switch (cp_stack_gen_step(&l->stack_gen, now, l->drained_ns)) {
	case CP_STACK_GEN_END:
		cp_stack_gen_ended(&l->stack_gen, now);
		__atomic_store_n(&skel->bss->alloc_stack_spare, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&skel->bss->alloc_stack_gen, l->stack_gen.gen, __ATOMIC_RELEASE);
		break;
	case CP_STACK_GEN_EMPTY:
		cp_alloc_stacks_empty(skel, !(l->stack_gen.gen & 1));
		cp_stack_gen_emptied(&l->stack_gen);
		__atomic_store_n(&skel->bss->alloc_stack_spare, cp_stack_gen_spare(&l->stack_gen),
				 __ATOMIC_RELEASE);
		break;
	case CP_STACK_GEN_WAIT:
		break;
	}
}

/* The allocation probes' windows, between the records of a long drain. */
static void drain_tick(void *ctx, __u64 now_ns)
{
	struct cp_live *l = ctx;

	if (l->sess->alloc)
		cp_alloc_probes__tick(l->sess->alloc, now_ns);
}

/* --- setup ----------------------------------------------------------------- */

int cp_live__new(struct cp_session *s, const struct cp_geometry *geo, struct cp_recorder *rec,
		 struct cp_live **out, char *err, size_t err_sz)
{
	struct cp_live *l = calloc(1, sizeof(*l));
	/* a new process maps its libraries and arenas in its first milliseconds */
	struct cp_profile_cfg cfg = {
		.l1d = geo->slot[CP_CACHE_L1D],
		.objects =
			{
				.maps_refresh_ns = CP_MAPS_REFRESH_FAST_NS,
				.src = rec ? cp_recorder__proc_source(rec) : NULL,
				/* glibc's chunk headers: objects allocated before attach */
				.read_mem = cp_proc_read_mem,
			},
		.describe = cp_proc_describe,
		.maps_text = rec ? cp_recorder__maps_text : NULL,
		.maps_ctx = rec,
	};
	struct cp_profile_hooks hooks = {
		.sample = on_sample_hook,
		.proc = on_proc_hook,
		.record = on_record_hook,
		.counters = on_counters_hook,
		.stacks = on_stacks_hook,
		.end_facts = on_end_facts_hook,
		.bp_summary = on_bp_summary_hook,
		.ctx = l,
	};
	struct cp_record_ops ops;
	int ret;

	*out = NULL;
	if (!l) {
		cp_recorder__close(rec, NULL, NULL, 0);
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	l->sess = s;
	cp_stack_gen_init(&l->stack_gen, bpf_map__max_entries(s->skel->maps.alloc_stacks));
	s->skel->bss->alloc_stack_spare = cp_stack_gen_spare(&l->stack_gen);
	l->rec = rec; /* owned from here on */
	l->prof = cp_profile__new(&cfg, &hooks);
	l->batch = calloc(CP_IP_BATCH, sizeof(*l->batch));
	l->stack_batch = calloc(CP_STACK_BATCH, sizeof(*l->stack_batch));
	l->copied = calloc(CP_STACK_BATCH, sizeof(*l->copied));
	if (!l->prof || !l->batch || !l->stack_batch || !l->copied ||
	    cp_site_jobs_init(&l->sites)) {
		cp_live__free(l);
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	s->on_guard = on_guard;
	s->on_guard_ctx = l;
	ops = (struct cp_record_ops){
		.sample = on_sample_record,
		.record = on_record,
		.ctx = l,
		.live = on_live_record,
		.live_ctx = l,
	};
	l->drain = cp_drain__new(s->skel, &ops);
	if (!l->drain) {
		ret = -errno;
		snprintf(err, err_sz, "cannot read the BPF ring buffer: %s", strerror(-ret));
		cp_live__free(l);
		return ret;
	}
	l->stacks = cp_stack_drain__new(s->skel);
	if (!l->stacks) {
		ret = -errno;
		snprintf(err, err_sz, "cannot read the BPF stack maps: %s", strerror(-ret));
		cp_live__free(l);
		return ret;
	}
	if (s->skel->rodata->targ_stack_copy_bytes)
		cp_stack_drain__set_unwinder(l->stacks, &(struct cp_stack_unwinder){
								.whole = stack_whole,
								.unwind = stack_unwind,
								.ctx = l,
							});
	if (s->alloc_windows)
		cp_drain__set_tick(l->drain, drain_tick, l);
	if (s->soft_on && !(l->soft = cp_soft_source__new(s->skel, l->prof->sym))) {
		ret = -errno;
		snprintf(err, err_sz, "cannot set up the soft source: %s", strerror(-ret));
		cp_live__free(l);
		return ret;
	}
	*out = l;
	return 0;
}

void cp_live__free(struct cp_live *l)
{
	if (!l)
		return;
	if (l->sess && l->sess->on_guard_ctx == l)
		l->sess->on_guard = NULL;
	/* breakpoints first: they deliver their last histories */
	cp_bp_sampler__free(l->bps);
	cp_soft_source__free(l->soft);
	cp_drain__free(l->drain);
	cp_stack_drain__free(l->stacks);
	cp_site_jobs_free(&l->sites);
	cp_recorder__close(l->rec, NULL, NULL, 0);
	cp_profile__free(l->prof);
	free(l->batch);
	free(l->stack_batch);
	free(l->copied);
	free(l);
}

struct cp_profile *cp_live__profile(struct cp_live *l)
{
	return l->prof;
}

/*
 * The period in effect of the first sampling event of @role (IBS and
 * software events sample loads and stores alike); 0 when none samples.
 */
static __u64 period_of(const struct cp_perf_events *set, enum cp_event_role role)
{
	for (int i = 0; set && i < cp_perf_events__nr(set); i++) {
		const struct cp_perf_event *e = cp_perf_events__get(set, i);

		if (e->period &&
		    (e->role == role || e->role == CP_EVENT_MEM || e->role == CP_EVENT_OTHER))
			return e->period;
	}
	return 0;
}

void cp_live__set_info(struct cp_live *l, const struct cp_run_info *info)
{
	struct cp_run_info in = *info;

	/* the periods the events were opened with (faults: every event) */
	in.load_period = period_of(l->sess->events, CP_EVENT_LOAD);
	in.store_period = period_of(l->sess->events, CP_EVENT_STORE);
	in.start_ns = cp_now_ns();
	cp_profile__set_info(l->prof, &in);
	/* the header comes first in a recording: before any maps read */
	if (l->rec)
		cp_recorder__info(l->rec, &in);
}

/* --- the loop ---------------------------------------------------------------- */

/*
 * The counter maps and the records waiting: all of them (@all), or what one
 * poll's budget reads (an interval's tick: the loop keeps its pace under a
 * flood; the next polls read the rest).
 */
static void collect(struct cp_live *l, bool all)
{
	size_t moved;
	int n;

	if (all)
		cp_drain__flush(l->drain);
	else
		cp_drain__poll(l->drain, 0);
	/* every output of an interval or a report shows each call site's frames */
	run_site_jobs(l, 0);
	do {
		n = cp_drain__ip_counts(l->drain, l->batch, CP_IP_BATCH);
		if (n > 0)
			cp_profile__add_counts(l->prof, l->batch, (size_t)n);
	} while (n == CP_IP_BATCH);
	do {
		n = cp_stack_drain__take(l->stacks, l->stack_batch, CP_STACK_BATCH, &moved);
		if (n > 0 && moved)
			cp_profile__add_stacks(l->prof, l->stack_batch, moved);
	} while (n == CP_STACK_BATCH);
	flush_copied(l);
	/* the stacks no counter or copy used since the last collect leave the stack map */
	cp_stack_drain__sweep(l->stacks);
}

void cp_live__collect(struct cp_live *l)
{
	collect(l, true);
}

/* The sampler's finished history, fed as a record: handled and recorded like a BPF one. */
static void on_bp_history(void *ctx, const struct cp_bp_finding *f, const struct cp_bp_insn *h)
{
	struct cp_live *l = ctx;
	struct cp_history_record rec = {.type = CP_REC_HISTORY, .tgid = f->tgid, .ip = f->ip};
	struct cp_bp_access acc[CP_HISTORY_MAX];
	size_t n = cp_bp_history(h, acc);

	for (size_t i = 0; i < n && i < CP_HISTORY_MAX; i++)
		rec.addrs[rec.nr++] = acc[i].addr;
	cp_profile__feed(l->prof, &rec, sizeof(rec));
}

/* Breakpoint sampling on the session's on_breakpoint; without it the run goes on. */
static void start_breakpoints(struct cp_live *l, const struct cp_live_cfg *c)
{
	const struct cp_cache_level *l1 = &l->prof->l1;

	l->bp_silent = c->bp_silent;
	struct cp_bp_sampler_cfg cfg = {
		.skel = l->sess->skel,
		.per_cpu = l->sess->scope.per_cpu,
		.sysfs_root = c->sysfs_root,
		.expiry_ns = (__u64)c->bp_expiry_ms * 1000000ull,
		.max_rate = c->max_bp_rate,
		.by_time = cp_source_of(l->prof->info.source)->by_time,
		.l1 = {l1->line_bytes, l1->sets, l1->ways},
		.on_history = on_bp_history,
		.ctx = l,
		.log = cp_log_file(CP_LOG_NOTICE),
	};

	if (!l->sess->bp_on)
		return;
	l->bps = cp_bp_sampler__new(&cfg);
	if (!l->bps)
		cp_warn("no breakpoint sampling: %s", strerror(errno));
}

/*
 * Whether process @pid, asked again for its allocator, waits for a turn the
 * loop takes anyway: under -a, when it maps the loader the profiler maps
 * (cp_alloc_probes__all_likely(): no file is asked), its libc is the one
 * the system-wide probes hold, and all a retry can find is an allocator of
 * its own, seldom. It is asked at the first turn
 * once due, and woken for CP_PROBE_RETRY_LAX_NS late at most: most
 * processes of a busy machine have exited by then (their exit record drops
 * them) and cost no turn of their own, where the prompt wake was half the
 * loop's turns under -a beside short processes. A container's process,
 * whose own libc the system-wide probes do not hold, is asked on time.
 */
static bool waits_for_turn(const struct cp_live *l, pid_t pid)
{
	return l->sess->alloc && cp_alloc_probes__all_likely(l->sess->alloc, pid);
}

/*
 * The allocation probes of the processes exec'd in the last batch. One
 * whose allocator is not mapped yet is asked again for a while: the
 * dynamic loader maps libc (a container's own, another file than the
 * system's), tcmalloc or jemalloc only once it runs, after the exec; a
 * target probed before its exec (the held `-- CMD` child) likewise.
 */
static void attach_pending(struct cp_live *l)
{
	__u64 now = cp_now_ns();
	int n = 0;

	for (int i = 0; i < l->nr_retry; i++) {
		__u64 since = now + CP_PROBE_RETRY_NS - l->retry_until[i];
		bool last = now >= l->retry_until[i];

		if (l->retry[i] <= 0)
			continue;
		if (last || now >= l->retry_next[i]) {
			if (cp_session__probe_allocs(l->sess, l->retry[i], last) != -EAGAIN || last)
				continue;
			l->retry_next[i] =
				now +
				(since > CP_PROBE_RETRY_EVERY_NS ? since : CP_PROBE_RETRY_EVERY_NS);
		}
		l->retry_until[n] = l->retry_until[i];
		l->retry_next[n] = l->retry_next[i];
		l->retry_lax[n] = l->retry_lax[i];
		l->retry[n++] = l->retry[i];
	}
	l->nr_retry = n;
	for (int i = 0; i < l->nr_pending; i++)
		if (l->pending[i] > 0 &&
		    cp_session__probe_allocs(l->sess, l->pending[i],
					     l->nr_retry >= CP_PENDING_PROBES) == -EAGAIN &&
		    l->nr_retry < CP_PENDING_PROBES) {
			l->retry_until[l->nr_retry] = now + CP_PROBE_RETRY_NS;
			l->retry_next[l->nr_retry] = now + CP_PROBE_RETRY_EVERY_NS;
			l->retry_lax[l->nr_retry] = waits_for_turn(l, l->pending[i]);
			l->retry[l->nr_retry++] = l->pending[i];
		}
	l->nr_pending = 0;
}

/* When the loop wakes for the next process asked again (0: none is due). */
static __u64 retry_due(const struct cp_live *l)
{
	__u64 due = 0;

	for (int i = 0; i < l->nr_retry; i++) {
		__u64 at = l->retry_next[i] + (l->retry_lax[i] ? CP_PROBE_RETRY_LAX_NS : 0);

		if (l->retry[i] > 0 && (!due || at < due))
			due = at;
	}
	return due;
}

/*
 * The sample-rate cap, every CP_RATE_CAP_NS from the start: under the
 * kernel's throttling limit, which it may lower while we run, as well as
 * --max-sample-rate.
 */
static void rate_tick(struct cp_live *l, const struct cp_live_cfg *cfg, __u64 now)
{
	int ret;

	struct cp_run_end *end = &l->prof->end;
	int without;
	__u64 throttles;

	l->rate.max_rate = cp_rate_cap_limit(cfg->max_sample_rate, cp_perf_max_sample_rate("/"));
	/* each CPU's period as it follows the cap: -v */
	ret = cp_perf_events__rate_cap(l->sess->events, &l->rate, now, cp_log_file(CP_LOG_INFO));
	if (ret > 0)
		end->period_changes += (__u64)ret;
	throttles = cp_perf_events__throttles(l->sess->events, &without);
	if (throttles > end->throttles && !end->throttles)
		cp_warn("the kernel throttled sampling (perf_event_max_sample_rate): samples are "
			"lost until the next tick; a lower --max-sample-rate avoids it");
	end->throttles = throttles;
}

/* Says once, while it runs, that the PMU's samples carry no data source. */
static void warn_blind(struct cp_live *l, const struct cp_stats *bpf)
{
	const struct cp_source_desc *src = cp_source_of(l->prof->info.source);

	if (l->blind_warned || !src->needs_pmu || !cp_stats_pmu_blind(bpf, src->every_op))
		return;
	l->blind_warned = true;
	cp_warn("%d %% or more of the PMU's samples carry no data source: this kernel does not "
		"decode them for this CPU (older than the CPU?); no miss can be found, try a newer "
		"kernel or --source soft",
		CP_BLIND_PCT);
}

static void interval_tick(struct cp_live *l, const struct cp_live_cfg *cfg, __u64 now)
{
	struct cp_profile *p = l->prof;
	struct cp_stats bpf;

	collect(l, false);
	cp_drain__stats(l->drain, &bpf);
	warn_blind(l, &bpf);
	if (!p->roll)
		return;
	cp_rolling__rotate(p->roll, now, &bpf);
	if (cfg->on_interval)
		cfg->on_interval(p, cfg->ctx);
	cp_profile__interval_done(p);
}

/* The epochs of --window-seconds: whole intervals, the last one partly in the window. */
static void start_rolling(struct cp_live *l, const struct cp_live_cfg *cfg)
{
	unsigned int n = (cfg->window_s + cfg->interval_s - 1) / cfg->interval_s;
	struct cp_profile *p = l->prof;
	struct cp_stats bpf;

	cp_drain__stats(l->drain, &bpf);
	p->roll = cp_rolling__new(&p->l1, n ? n : 1, p->info.start_ns, &bpf);
	if (!p->roll)
		cp_warn("no rolling summaries: out of memory");
}

/* @timeout_ms, or less to wake just after @when_ns (0: no such time), from @now_ns. */
static int wake_by(__u64 when_ns, __u64 now_ns, int timeout_ms)
{
	__u64 ms;

	if (!when_ns)
		return timeout_ms;
	ms = when_ns > now_ns ? (when_ns - now_ns) / 1000000ull + 1 : 0;
	return ms < (__u64)timeout_ms ? (int)ms : timeout_ms;
}

/* The targets' CPU time so far: the last reading stays when they are gone (they used it all). */
static void read_targets_cpu(struct cp_live *l, const struct cp_live_cfg *cfg)
{
	__u64 cpu;

	if (!cfg->targets_cpu_ns)
		return;
	cpu = cfg->targets_cpu_ns(cfg->ctx);
	if (cpu > l->cpu_last_ns)
		l->cpu_last_ns = cpu;
}

/* True when the run is over for a reason other than an error; sets the end reason. */
static bool run_over(struct cp_live *l, const struct cp_live_cfg *cfg, __u64 now, __u64 deadline)
{
	struct cp_run_end *e = &l->prof->end;

	if (cp_signals_stop_requested()) {
		snprintf(e->end_reason, sizeof(e->end_reason), "interrupted");
		return true;
	}
	if (deadline && now >= deadline) {
		snprintf(e->end_reason, sizeof(e->end_reason), "duration reached");
		return true;
	}
	return cfg->targets_gone &&
	       cfg->targets_gone(cfg->ctx, e->end_reason, sizeof(e->end_reason));
}

void cp_live__limit_memory(struct cp_live *l, __u64 max_memory_bytes)
{
	struct cp_profile *p = l->prof;

	cp_mem_guard_init(&p->lim.guard, max_memory_bytes);
	cp_self_mem_set_limit(max_memory_bytes); /* what copies of targets' files may take */
	cp_tf_kept_limit(max_memory_bytes);	 /* and the copies kept for reuse: half */
	/* the maps snapshots the symbolizer and the object table keep: an eighth each */
	cp_symbolizer__set_max_snap_bytes(p->sym, cp_maps_kept_max_bytes(max_memory_bytes));
	cp_objects__set_max_maps_bytes(p->objects, cp_maps_kept_max_bytes(max_memory_bytes));
	if (l->soft)
		cp_soft_source__set_max_maps_bytes(l->soft,
						   cp_maps_kept_max_bytes(max_memory_bytes));
}

int cp_live__run(struct cp_live *l, const struct cp_live_cfg *cfg, char *err, size_t err_sz)
{
	struct cp_profile *p = l->prof;
	__u64 interval_ns = (__u64)cfg->interval_s * 1000000000ull;
	__u64 deadline = 0, next_interval, next_cap, now, worked_ns = 0;
	struct cp_self_mem mem;
	/* the turn's work (CP_TURN_WORK_MS): the ticks after a poll, the readings before the next */
	bool work = true;
	int ret;

	/* rate_tick() sets the limit in effect before each decision */
	cp_rate_cap_cfg_init(&l->rate, cfg->max_sample_rate);
	/* a tenant's big file is parsed beside the drain, at a share of one CPU */
	cp_parse_worker_pace(CP_PW_LIVE_WAIT_MS, CP_PW_LIVE_PER_MILLE);
	cp_sym_server_pace(CP_PW_LIVE_WAIT_MS, 0); /* and described beside it */
	start_breakpoints(l, cfg);
	start_rolling(l, cfg);
	next_interval = p->info.start_ns + interval_ns;
	/* what repeats is said once an interval (util/log.h) */
	cp_log_set_period(cfg->interval_s, p->info.start_ns);
	if (cfg->duration_s)
		deadline = p->info.start_ns + (__u64)cfg->duration_s * 1000000000ull;
	/* the rate cap's first call takes its baseline */
	cp_perf_events__rate_cap(l->sess->events, &l->rate, p->info.start_ns, NULL);
	next_cap = p->info.start_ns + CP_RATE_CAP_NS;

	if (cfg->targets_cpu_ns)
		l->cpu_first_ns = l->cpu_last_ns = cfg->targets_cpu_ns(cfg->ctx);
	cp_budget_intervals_init(&l->intervals, p->info.start_ns);
	/* everything is loaded, measured and attached: the profiler's steady state begins */
	cp_agent_cost_begin(&l->agent);
	for (;;) {
		int timeout_ms = CP_TICK_MS;
		bool woken;

		now = cp_now_ns();
		/* -p: targets_gone() takes its answer from this reading */
		if (work || cfg->targets_gone)
			read_targets_cpu(l, cfg);
		if (run_over(l, cfg, now, deadline))
			break;
		if (work) {
			budget_reading(l, now);
			follow_cpu(l, cfg, now);
		}
		if (now >= next_cap) {
			rate_tick(l, cfg, now);
			next_cap = now + CP_RATE_CAP_NS;
		}
		if (now >= next_interval) {
			interval_tick(l, cfg, now);
			next_interval += interval_ns;
		}
		cp_log_tick(now);
		if (cp_signals_take_reopen_request() && cfg->on_reopen) {
			/* the Prometheus file's object labels name call sites by their frames */
			run_site_jobs(l, 0);
			cfg->on_reopen(p, cfg->ctx);
		}
		if (cp_signals_take_report_request() && cfg->on_report) {
			cp_live__collect(l);
			p->end.end_ns = cp_now_ns();
			cfg->on_report(p, cfg->ctx);
		}
		/* call sites wait to be unwound: the rings are read, and the loop comes back */
		if (l->sites.nr)
			timeout_ms = 0;
		timeout_ms = wake_by(deadline, now, timeout_ms);
		timeout_ms = wake_by(retry_due(l), now, timeout_ms);
		/* an allocation window ends on time, not at the next record batch */
		timeout_ms =
			wake_by(l->sess->alloc ? cp_alloc_probes__next_tick_ns(l->sess->alloc) : 0,
				now, timeout_ms);
		/* the maps an exec record reads serve the attach, and the soft source on a turn of work */
		cp_maps_turn(true);
		ret = cp_drain__poll(l->drain, timeout_ms);
		/* records ended the wait, not records found waiting when it ran out */
		woken = ret > 0 && cp_now_ns() - now < (__u64)timeout_ms * 1000000ull;
		/* the allocation probes wake us in batches: take what waits anyway */
		if (ret >= 0 || ret == -EINTR) {
			now = cp_now_ns();
			ret = cp_drain__poll(l->drain, 0);
			if (cp_drain__caught_up(l->drain))
				l->drained_ns = now;
		}
		/* the slow part of new call sites, off the callback: a few ms a turn */
		run_site_jobs(l, CP_SITE_JOBS_TURN_NS);
		/* records woke this turn soon after the last work: they are read, the rest waits */
		work = !woken || cp_now_ns() - worked_ns >= CP_TURN_WORK_MS * 1000000ull;
		attach_pending(l);
		if (work && l->sess->alloc) {
			cp_alloc_probes__tick(l->sess->alloc, cp_now_ns());
			stack_gen_tick(l, cp_now_ns());
		}
		if (l->bps)
			cp_bp_sampler__tick(l->bps, p->insns, p->misses, cp_now_ns());
		if (work && l->soft)
			cp_soft_source__tick(l->soft);
		cp_maps_turn(false);
		if (work) {
			cp_profile__limits_tick(p, false);
			worked_ns = now;
		}
		if (ret < 0 && ret != -EINTR) {
			snprintf(err, err_sz, "reading the ring buffer failed: %s", strerror(-ret));
			p->end.end_ns = cp_now_ns();
			return ret;
		}
	}
	if (l->bps)
		cp_bp_sampler__stop(l->bps, cp_now_ns());
	/* the interval that ends with the run is priced too, with the targets' time to its end */
	read_targets_cpu(l, cfg);
	l->intervals.next_ns = 0;
	budget_reading(l, cp_now_ns());
	/* a file whose worker is still at work gets its verdict before the outputs ask for it */
	cp_parse_worker_settle();
	cp_sym_server_pace(UINT_MAX, 0);
	/* the last counts first: an instruction only ticked enters the store with them */
	cp_live__collect(l);
	cp_profile__locate_waiting(p);
	say_stack_copies(l);
	cp_log_flush();
	p->end.end_ns = cp_now_ns();
	/* the memory the report states is counted afresh, memfds and all */
	cp_self_mem_scan(&mem);
	/* the report and the recording show the counters as the run ended */
	live_end(l, &p->end);
	l->ended = true;
	return 0;
}

int cp_live__finish(struct cp_live *l, char *err, size_t err_sz)
{
	struct cp_profile *p = l->prof;
	int ret;

	if (!l->ended)
		live_end(l, &p->end);
	ret = cp_recorder__close(l->rec, &p->end, err, err_sz);
	if (l->rec)
		cp_symbolizer__set_maps_text(p->sym, NULL, NULL, false);
	l->rec = NULL;
	return ret;
}
