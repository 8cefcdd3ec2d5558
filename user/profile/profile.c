// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiling loop. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "objects/alloc_events.h"
#include "live/alloc_probes.h"
#include "classify/classify.h"
#include "live/bp_arm.h"
#include "breakpoints/bp_report.h"
#include "live/bp_sampler.h"
#include "live/drain.h"
#include "profile/run_limits.h"
#include "profile/miss_store.h"
#include "profile/seen_objects.h"
#include "objects/object_stats.h"
#include "objects/objects.h"
#include "profile/proc_identity.h"
#include "profile/proc_summary.h"
#include "report/report_emit.h"
#include "profile/profile.h"
#include "live/rate_cap.h"
#include "profile/rolling.h"
#include "cli/signals.h"
#include "live/soft_source.h"
#include "symbols/symbolizer.h"

#define CP_IP_BATCH	4096	/* counter entries moved per map walk */
/* re-read maps for an unmapped sample address at most this often */
#define CP_MAPS_REFRESH_FAST_NS	20000000ull
/* exec'd processes whose allocation probes wait for the end of the batch */
#define CP_PENDING_PROBES	64

struct cp_profile {
	struct cp_session *sess;		/* NULL offline */
	struct cp_drain *drain;			/* NULL offline */
	struct cp_drain_ops ops;		/* the handlers below, live and offline */
	struct cp_record_counts counts;		/* offline: records the checks dropped */
	struct cp_recorder *rec;		/* --record; NULL otherwise */
	struct cp_profile_offline off;
	struct cp_insn_store *insns;
	struct cp_insn *batch;
	struct cp_objects *objects;		/* what an address belongs to, per process */
	struct cp_object_stats *ostats;		/* samples per object */
	struct cp_miss_store *misses;		/* misses per line and set */
	struct cp_seen_objects *seen;		/* heap objects as samples found them */
	struct cp_rolling *roll;		/* the last window's epochs; NULL offline */
	struct cp_cache_level l1;		/* the L1D misses map onto */
	struct cp_bp_sampler *bps;		/* breakpoint sampling; NULL when off */
	struct cp_soft_source *soft;		/* --source soft: decodes ticked ips; NULL otherwise */
	struct cp_symbolizer *sym;		/* maps snapshot at a process's first sight */
	struct cp_rate_cap_cfg rate;
	__u64 received;
	__u64 object_events;
	__u64 execs;
	__u64 exits;
	struct cp_run_info info;
	struct cp_run_end end;
	bool ended;				/* end facts final: the run is over */
	pid_t pending[CP_PENDING_PROBES];	/* exec'd, allocation probes not attached yet */
	int nr_pending;
	struct cp_proc_summaries *procs;	/* per process (-a's report) */
	struct cp_limits_state lim;		/* --max-memory; limit 0 offline */
	__u64 snapshots_seen;			/* the symbolizer's, at the last RSS check */
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* Remembers the tracked heap object or mapping @addr fell in, for the classifier. */
static void note_seen(struct cp_profile *p, __u32 tgid, __u64 addr, const struct cp_resolved *r)
{
	struct cp_seen_object o = {
		.start = r->start, .size = r->size, .callsite = r->callsite, .tid = r->tid,
		.flags = r->flags, .kind = (__u16)r->kind,
	};

	if ((r->kind == CP_OBJ_HEAP || r->kind == CP_OBJ_MAPPING) && !r->before_attach && r->size)
		cp_seen_objects__note(p->seen, tgid, addr, p->l1.line_bytes, &o);
}

/* --max-memory: RSS checked when due, or @now (run_limits.h). */
static void limits_tick(struct cp_profile *p, bool now)
{
	cp_limits_tick(&p->lim, &(struct cp_limits_stores){ p->sym, p->objects, p->procs },
		       now_ns(), now);
}

/*
 * A forwarded sample: a miss (PMU sources) or any access (sources without
 * hit/miss information). Resolved now, while its process and objects exist.
 */
static void handle_sample(struct cp_profile *p, const struct cp_sample *s)
{
	bool miss = s->flags & (CP_SAMPLE_MISS | CP_SAMPLE_ALL);
	struct cp_mem_access a = {
		.tgid = s->tgid, .tid = s->tid, .ip = s->ip, .addr = s->addr, .size = s->size,
		.weight = s->weight, .store = s->flags & CP_SAMPLE_STORE, .time_ns = s->time_ns,
	};
	struct cp_ip_key key = { .tgid = s->tgid, .ip = s->ip };
	const struct cp_callsite *cs;
	struct cp_symbol_info info;
	struct cp_data_src d;
	struct cp_resolved r;
	struct cp_symbolizer_stats ss;
	int first = 1;

	/* a drain takes thousands of samples at once: memory is watched between them too */
	if (!(p->received++ & 255))
		limits_tick(p, false);
	proc_summaries__sample(p->procs, (pid_t)s->tgid, s->flags & CP_SAMPLE_MISS);
	cp_data_src_decode(s->data_src, &d);
	a.hitm = d.snoop == CP_SNOOP_HITM;
	if (!s->addr)
		return;
	if (miss) {
		__u32 set = cp_cache_set_of(&p->l1, s->addr);

		miss_store__add(p->misses, &a);
		first = insn_store__note_miss(p->insns, &key, s->addr, set);
		if (p->roll) {
			miss_store__add(cp_rolling__misses(p->roll), &a);
			insn_store__note_miss(cp_rolling__insns(p->roll), &key, s->addr, set);
		}
	}
	if (miss && p->bps)
		cp_bp_sampler__note_miss(p->bps, s->tgid, s->cpu, s->ip, s->addr, s->time_ns);
	/*
	 * Symbolize now, while the process lives: an ip in a library mapped
	 * after the last snapshot makes the symbolizer take a new one, and the
	 * result stays cached for the report. Until it succeeds: a lookup per
	 * sample of a located instruction was a tenth of a replay's time.
	 */
	if (first) {
		if (!cp_symbolizer__resolve(p->sym, (pid_t)s->tgid, s->ip, &info) && miss)
			insn_store__set_located(p->insns, &key);
		/* a lookup may have taken a snapshot (megabytes): check the memory now */
		cp_symbolizer__stats(p->sym, &ss);
		if (ss.snapshots != p->snapshots_seen) {
			p->snapshots_seen = ss.snapshots;
			limits_tick(p, true);
		}
	}
	if (cp_objects_resolve(p->objects, (pid_t)s->tgid, s->addr, &r) == -ENOMEM)
		return;
	if (miss)
		note_seen(p, s->tgid, s->addr, &r);
	cs = r.callsite ? cp_objects__callsite_get(p->objects, (pid_t)s->tgid, r.callsite) : NULL;
	object_stats__add(p->ostats, s->tgid, &r, cs ? cs->caller : 0,
			  s->flags & CP_SAMPLE_MISS);
}

/* Recorded after handling: what the handling read (maps) comes first in the file. */
static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct cp_profile *p = ctx;

	handle_sample(p, s);
	if (p->rec)
		cp_recorder__event(p->rec, s, sizeof(*s));
	return 0;
}

static void on_proc(struct cp_profile *p, const struct cp_proc_event *pe)
{
	pid_t pid = (pid_t)pe->tgid;

	/* a new address space, or none: its instructions are other ones now */
	if (p->bps)
		cp_bp_sampler__forget(p->bps, pe->tgid, now_ns());
	if (p->soft)
		cp_soft_source__forget(p->soft, pe->tgid);
	if (pe->kind == CP_PROC_EXEC) {
		p->execs++;
		proc_summaries__exec(p->procs, pid);
		cp_objects__on_exec(p->objects, pid);
		cp_symbolizer__refresh(p->sym, pid);
		/*
		 * A process a target started: probe its allocator too (-EEXIST: has
		 * it), but after the batch. Attaching takes milliseconds per probe;
		 * the snapshots of processes exec'd meanwhile, which may live less
		 * than that, come first.
		 */
		if (p->sess && p->nr_pending < CP_PENDING_PROBES)
			p->pending[p->nr_pending++] = pid;
		else if (p->sess)
			cp_session__probe_allocs(p->sess, pid);
	} else if (pe->kind == CP_PROC_EXIT) {
		p->exits++;
		proc_summaries__exit(p->procs, pid);
		/* gone before its probes were attached: nothing to attach */
		for (int i = 0; i < p->nr_pending; i++)
			if (p->pending[i] == pid)
				p->pending[i] = 0;
		if (p->sess && p->sess->alloc)
			cp_alloc_probes__detach_pid(p->sess->alloc, pid);
		cp_objects__on_exit(p->objects, pid);
	}
}

/* The allocation guard backed off or resumed: objects of that process become doubtful. */
static void on_guard(pid_t pid, bool backed_off, void *ctx)
{
	struct cp_profile *p = ctx;

	/* the resume is a little later than the re-attach: a few objects more in doubt */
	cp_objects__on_guard(p->objects, pid, backed_off, now_ns());
}


/*
 * cp_objects_opts.read_stack of a live profile: a new call site's frames
 * from the BPF stack map, written down for a replay before the object
 * event that made the site (which is recorded after its handling).
 */
static size_t read_stack(void *ctx, pid_t pid, __u64 caller, __s64 stack_id, __u64 *ips,
			 size_t max)
{
	struct cp_profile *p = ctx;
	struct cp_alloc_stack_record r = {
		.type = CP_REC_ALLOC_STACK, .tgid = (__u32)pid, .caller = caller,
		.stack_id = stack_id,
	};
	size_t n = p->sess ? cp_alloc_stack_read(p->sess->skel, stack_id, ips, max) : 0;

	if (p->rec && n) {
		r.nr = (__u32)(n < CP_ALLOC_STACK_DEPTH ? n : CP_ALLOC_STACK_DEPTH);
		memcpy(r.ips, ips, r.nr * sizeof(*ips));
		cp_recorder__event(p->rec, &r, offsetof(struct cp_alloc_stack_record, ips) +
				   r.nr * sizeof(*ips));
	}
	return n;
}

/* A recorded call-site stack (read_stack() of the run): into the site's frames. */
static void on_stack_record(struct cp_profile *p, const void *data, size_t size)
{
	size_t head = offsetof(struct cp_alloc_stack_record, ips);
	struct cp_alloc_stack_record r;

	if (size < head || size > sizeof(r))
		return;
	memcpy(&r, data, size);
	if (r.nr > CP_ALLOC_STACK_DEPTH || size != head + r.nr * sizeof(r.ips[0]) || !r.tgid ||
	    r.stack_id < 0)
		return;
	cp_objects__callsite_frames(p->objects, (pid_t)r.tgid, r.caller, r.stack_id, r.ips, r.nr);
}

/* A finished breakpoint history: the classifier's evidence of conflict or capacity. */
static void on_history_record(struct cp_profile *p, const void *data)
{
	struct cp_history_record h;
	struct cp_ip_key key;

	memcpy(&h, data, sizeof(h));
	key.tgid = h.tgid;
	key.ip = h.ip;
	for (__u32 i = 0; i < h.nr && i < CP_HISTORY_MAX; i++) {
		struct cp_resolved r;

		insn_store__add_history(p->insns, &key, h.addrs[i]);
		/* the objects a conflict's lines lie in, while they live */
		if (!cp_objects_resolve(p->objects, (pid_t)h.tgid, h.addrs[i], &r))
			note_seen(p, h.tgid, h.addrs[i], &r);
	}
}
static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct cp_profile *p = ctx;

	if (type == CP_REC_OBJECT) {
		cp_alloc_event_apply(p->objects, data, size);
		p->object_events++;
	} else if (type == CP_REC_PROC && size >= sizeof(struct cp_proc_event)) {
		struct cp_proc_event pe;

		memcpy(&pe, data, sizeof(pe));
		on_proc(p, &pe);
	} else if (type == CP_REC_HISTORY && size == sizeof(struct cp_history_record)) {
		on_history_record(p, data);
	} else if (type == CP_REC_ALLOC_STACK) {
		on_stack_record(p, data, size);
	} else if (type == CP_REC_BP && size >= sizeof(struct cp_bp_event) && p->bps) {
		cp_bp_sampler__on_event(p->bps, data, p->insns, p->misses, now_ns());
	}
	if (p->rec)
		cp_recorder__event(p->rec, data, size);
	return 0;
}

/* The stores and handlers, live or offline. */
static struct cp_profile *profile_alloc(const struct cp_cache_level *l1d,
					const struct cp_objects_opts *objects_opts,
					cp_proc_describe_fn describe)
{
	struct cp_profile *p = calloc(1, sizeof(*p));
	struct cp_objects_opts oo = *objects_opts;

	if (!p)
		return NULL;
	if (oo.read_stack)
		oo.read_stack_ctx = p;
	objects_opts = &oo;
	p->ops = (struct cp_drain_ops){ .sample = on_sample, .record = on_record, .ctx = p };
	p->insns = insn_store__new(CP_MAX_INSNS);
	p->batch = calloc(CP_IP_BATCH, sizeof(*p->batch));
	p->objects = cp_objects__new(objects_opts);
	p->ostats = object_stats__new(0);
	p->l1 = *l1d;
	p->misses = miss_store__new(&p->l1, 0);
	p->seen = cp_seen_objects__new(0);
	p->sym = cp_symbolizer__new(0, 0);
	p->procs = proc_summaries__new(0, describe, NULL);
	if (!p->insns || !p->batch || !p->objects || !p->ostats || !p->misses || !p->seen ||
	    !p->sym || !p->procs) {
		cp_profile__free(p);
		return NULL;
	}
	return p;
}

int cp_profile__new(struct cp_session *s, const struct cp_geometry *geo, struct cp_recorder *rec,
		    struct cp_profile **out, char *err, size_t err_sz)
{
	/* a new process maps its libraries and arenas in its first milliseconds */
	struct cp_objects_opts objects_opts = {
		.maps_refresh_ns = CP_MAPS_REFRESH_FAST_NS,
		.src = rec ? cp_recorder__proc_source(rec) : NULL,
		.read_stack = read_stack,
	};
	struct cp_profile *p = profile_alloc(&geo->slot[CP_CACHE_L1D], &objects_opts,
					     cp_proc_describe);

	*out = NULL;
	if (!p) {
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	p->sess = s;
	s->on_guard = on_guard;
	s->on_guard_ctx = p;
	p->drain = drain__new(s->skel, &p->ops);
	if (!p->drain) {
		int ret = -errno;

		snprintf(err, err_sz, "cannot read the BPF ring buffer: %s", strerror(-ret));
		cp_profile__free(p);
		return ret;
	}
	if (s->soft_on && !(p->soft = cp_soft_source__new(s->skel, p->sym))) {
		int ret = -errno;

		snprintf(err, err_sz, "cannot set up the soft source: %s", strerror(-ret));
		cp_profile__free(p);
		return ret;
	}
	p->rec = rec;	/* owned from here on */
	if (rec)
		cp_symbolizer__set_maps_text(p->sym, cp_recorder__maps_text, rec, false);
	*out = p;
	return 0;
}

int cp_profile__new_offline(const struct cp_run_info *info, const struct cp_profile_offline *off,
			    struct cp_profile **out, char *err, size_t err_sz)
{
	/*
	 * The replay's clock is not the run's: maps are re-read where the run
	 * re-read them (cp_profile__maps_changed), never on the replay's own.
	 * No /proc: globals are read from the files the maps name.
	 */
	struct cp_objects_opts objects_opts = {
		.maps_refresh_ns = ~0ull, .src = off->src, .proc_root = "/nonexistent/proc",
		.path_map = off->path_map,
	};
	struct cp_cache_level l1d = info->cache[CP_CACHE_L1D];
	struct cp_profile *p;

	*out = NULL;
	if (!cp_cache_level_check(&l1d)) {
		snprintf(err, err_sz, "the recorded L1D geometry is not usable: %s", l1d.problem);
		return -EINVAL;
	}
	/* no /proc of the run's processes: summaries without comm or cgroup */
	p = profile_alloc(&l1d, &objects_opts, NULL);
	if (!p) {
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	p->off = *off;
	p->info = *info;
	cp_symbolizer__set_maps_text(p->sym, off->maps_text, off->ctx, true);
	cp_symbolizer__set_path_map(p->sym, off->path_map);
	*out = p;
	return 0;
}

void cp_profile__free(struct cp_profile *p)
{
	if (!p)
		return;
	if (p->sess && p->sess->on_guard_ctx == p)
		p->sess->on_guard = NULL;
	/* breakpoints first: they deliver their last histories */
	cp_bp_sampler__free(p->bps);
	cp_soft_source__free(p->soft);
	drain__free(p->drain);
	cp_recorder__close(p->rec, NULL, NULL, 0);
	insn_store__free(p->insns);
	free(p->batch);
	cp_objects__free(p->objects);
	object_stats__free(p->ostats);
	miss_store__free(p->misses);
	cp_seen_objects__free(p->seen);
	cp_rolling__free(p->roll);
	cp_symbolizer__free(p->sym);
	proc_summaries__free(p->procs);
	free(p);
}

/*
 * The period in effect of the first sampling event of @role (IBS and
 * software events sample loads and stores alike); 0 when none samples.
 */
static __u64 period_of(const struct cp_perf_events *set, enum cp_event_role role)
{
	for (int i = 0; set && i < cp_perf_events__nr(set); i++) {
		const struct cp_perf_event *e = cp_perf_events__get(set, i);

		if (e->period && (e->role == role || e->role == CP_EVENT_MEM ||
				  e->role == CP_EVENT_OTHER))
			return e->period;
	}
	return 0;
}

void cp_profile__set_info(struct cp_profile *p, const struct cp_run_info *info)
{
	p->info = *info;
	/* the periods the events were opened with (faults: every event) */
	if (p->sess) {
		p->info.load_period = period_of(p->sess->events, CP_EVENT_LOAD);
		p->info.store_period = period_of(p->sess->events, CP_EVENT_STORE);
	}
	/* the header comes first in a recording: before any maps read */
	p->info.start_ns = now_ns();
	if (p->rec)
		cp_recorder__info(p->rec, &p->info);
}

void cp_profile__set_end(struct cp_profile *p, const struct cp_run_end *end)
{
	p->end = *end;
}

void cp_profile__maps_changed(struct cp_profile *p, pid_t pid, bool symbols)
{
	if (symbols)
		cp_symbolizer__refresh(p->sym, pid);
	else if (cp_objects__tracked(p->objects, pid))
		cp_objects__refresh(p->objects, pid);
}

_Static_assert(CP_PROFILE_HINT_STAGES == CP_OBJ_HINT_STAGES, "the object's stages are the last");

void cp_profile__hint(struct cp_profile *p, const void *data, size_t size, int stage)
{
	const struct cp_sample *s = data;
	struct cp_ip_key key;

	if (size != sizeof(*s) || s->type != CP_REC_SAMPLE)
		return;
	key = (struct cp_ip_key){ .tgid = s->tgid, .ip = s->ip };
	if (stage == 0) {
		miss_store__prefetch(p->misses, s->tgid, s->addr);
		insn_store__prefetch(p->insns, &key);
		cp_seen_objects__prefetch(p->seen, s->tgid, s->addr, p->l1.line_bytes);
	} else if (stage == 1) {
		insn_store__prefetch_entry(p->insns, &key);
	}
	cp_objects_hint(p->objects, (pid_t)s->tgid, s->addr, stage);
}

int cp_profile__feed(struct cp_profile *p, const void *data, size_t size)
{
	return cp_record_dispatch(&p->ops, &p->counts, data, size);
}

void cp_profile__add_counts(struct cp_profile *p, const struct cp_insn *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		insn_store__add(p->insns, &v[i].key, &v[i].counts);
		if (p->roll)
			insn_store__add(cp_rolling__insns(p->roll), &v[i].key, &v[i].counts);
	}
	if (p->rec)
		cp_recorder__counters(p->rec, v, n);
}

void cp_profile__collect(struct cp_profile *p)
{
	int n;

	if (!p->drain)
		return;
	drain__poll(p->drain, 0);
	do {
		n = drain__ip_counts(p->drain, p->batch, CP_IP_BATCH);
		if (n > 0)
			cp_profile__add_counts(p, p->batch, (size_t)n);
	} while (n == CP_IP_BATCH);
}

/* True when the targets are gone; sets the end reason. */
static bool targets_gone(struct cp_profile *p, const struct cp_profile_cfg *cfg)
{
	if (cfg->child) {
		if (!cp_child_poll(cfg->child))
			return false;
		snprintf(p->end.end_reason, sizeof(p->end.end_reason), "the command exited with status %d",
			 cp_exit_code(cfg->child->status));
		return true;
	}
	if (!cfg->nr_pids)
		return false;
	for (int i = 0; i < cfg->nr_pids; i++)
		if (cp_pid_alive(cfg->pids[i]))
			return false;
	snprintf(p->end.end_reason, sizeof(p->end.end_reason), "%s exited",
		 cfg->nr_pids == 1 ? "the target" : "every target");
	return true;
}

/* Breakpoint sampling on the session's on_breakpoint; without it the run goes on. */
/* The sampler's finished history, fed as a record: handled and recorded like a BPF one. */
static void on_bp_history(void *ctx, const struct cp_bp_finding *f, const struct cp_bp_insn *h)
{
	struct cp_history_record rec = { .type = CP_REC_HISTORY, .tgid = f->tgid, .ip = f->ip };
	struct cp_bp_access acc[CP_HISTORY_MAX];
	size_t n = cp_bp_history(h, acc);

	for (size_t i = 0; i < n && i < CP_HISTORY_MAX; i++)
		rec.addrs[rec.nr++] = acc[i].addr;
	cp_profile__feed(ctx, &rec, sizeof(rec));
}

static void start_breakpoints(struct cp_profile *p, const struct cp_options *opts)
{
	struct cp_bp_sampler_cfg cfg = {
		.skel = p->sess->skel,
		.per_cpu = p->sess->scope.per_cpu,
		.sysfs_root = opts->sysfs_root,
		.expiry_ns = (__u64)opts->bp_expiry_ms * 1000000ull,
		.max_rate = opts->max_bp_rate,
		.by_time = p->info.source == CP_SOURCE_SOFT,
		.l1 = { p->l1.line_bytes, p->l1.sets, p->l1.ways },
		.on_history = on_bp_history,
		.ctx = p,
		.log = stderr,
	};

	if (!p->sess->bp_on)
		return;
	p->bps = cp_bp_sampler__new(&cfg);
	if (!p->bps)
		fprintf(stderr, "cacheperf-bpf: warning: no breakpoint sampling: %s\n",
			strerror(errno));
}

/* The allocation probes of the processes exec'd in the last batch. */
static void attach_pending(struct cp_profile *p)
{
	for (int i = 0; i < p->nr_pending; i++)
		if (p->pending[i] > 0)
			cp_session__probe_allocs(p->sess, p->pending[i]);
	p->nr_pending = 0;
}

static void interval_tick(struct cp_profile *p, const struct cp_profile_cfg *cfg, __u64 now)
{
	struct cp_stats bpf;
	int ret;

	cp_profile__collect(p);
	ret = cp_perf_events__rate_cap(p->sess->events, &p->rate, now, stderr);
	if (ret > 0)
		p->end.period_changes += (__u64)ret;
	if (!p->roll)
		return;
	drain__stats(p->drain, &bpf);
	cp_rolling__rotate(p->roll, now, &bpf);
	if (cfg->on_interval)
		cfg->on_interval(p, cfg->report_ctx);
}

/* The epochs of --window-seconds: whole intervals, the last one partly in the window. */
static void start_rolling(struct cp_profile *p, const struct cp_options *opts)
{
	unsigned int n = (opts->window_s + opts->interval_s - 1) / opts->interval_s;
	struct cp_stats bpf;

	drain__stats(p->drain, &bpf);
	p->roll = cp_rolling__new(&p->l1, n ? n : 1, p->info.start_ns, &bpf);
	if (!p->roll)
		fprintf(stderr, "cacheperf-bpf: warning: no rolling summaries: out of memory\n");
}

/* The live end facts: the BPF counters and drops as they are now. */
static void live_end(const struct cp_profile *p, struct cp_run_end *e)
{
	drain__stats(p->drain, &e->bpf);
	e->malformed = drain__malformed(p->drain);
	e->unknown = drain__unknown(p->drain);
	e->guard_backoffs = p->sess->guard_backoffs;
	e->have_alloc = p->sess->alloc != NULL;
	if (p->sess->alloc)
		cp_alloc_probes__stats(p->sess->alloc, &e->alloc);
	if (p->soft)
		cp_soft_source__stats(p->soft, &e->soft);
}

int cp_profile__run(struct cp_profile *p, const struct cp_profile_cfg *cfg, char *err,
		    size_t err_sz)
{
	const struct cp_options *opts = cfg->opts;
	__u64 interval_ns = (__u64)opts->interval_s * 1000000000ull;
	__u64 deadline = 0, next_interval, now;
	int ret;

	cp_rate_cap_cfg_init(&p->rate, opts->max_sample_rate);
	cp_mem_guard_init(&p->lim.guard, opts->max_memory_bytes);
	start_breakpoints(p, opts);
	start_rolling(p, opts);
	next_interval = p->info.start_ns + interval_ns;
	if (opts->duration_s)
		deadline = p->info.start_ns + (__u64)opts->duration_s * 1000000000ull;
	/* the rate cap's first call takes its baseline */
	cp_perf_events__rate_cap(p->sess->events, &p->rate, p->info.start_ns, NULL);

	for (;;) {
		int timeout_ms = CP_TICK_MS;

		now = now_ns();
		if (cp_signals_stop_requested()) {
			snprintf(p->end.end_reason, sizeof(p->end.end_reason), "interrupted");
			break;
		}
		if (deadline && now >= deadline) {
			snprintf(p->end.end_reason, sizeof(p->end.end_reason), "duration reached");
			break;
		}
		if (targets_gone(p, cfg))
			break;
		if (now >= next_interval) {
			interval_tick(p, cfg, now);
			next_interval += interval_ns;
		}
		if (cp_signals_take_reopen_request() && cfg->on_reopen)
			cfg->on_reopen(p, cfg->report_ctx);
		if (cp_signals_take_report_request() && cfg->on_report) {
			cp_profile__collect(p);
			p->end.end_ns = now_ns();
			cfg->on_report(p, cfg->report_ctx);
		}
		if (deadline && deadline - now < (__u64)timeout_ms * 1000000ull)
			timeout_ms = (int)((deadline - now) / 1000000ull) + 1;
		ret = drain__poll(p->drain, timeout_ms);
		/* the allocation probes wake us in batches: take what waits anyway */
		if (ret >= 0 || ret == -EINTR)
			ret = drain__poll(p->drain, 0);
		attach_pending(p);
		if (p->sess->alloc)
			cp_alloc_probes__tick(p->sess->alloc, now_ns());
		if (p->bps)
			cp_bp_sampler__tick(p->bps, p->insns, p->misses, now_ns());
		if (p->soft)
			cp_soft_source__tick(p->soft);
		limits_tick(p, false);
		if (ret < 0 && ret != -EINTR) {
			snprintf(err, err_sz, "reading the ring buffer failed: %s", strerror(-ret));
			p->end.end_ns = now_ns();
			return ret;
		}
	}
	if (p->bps)
		cp_bp_sampler__stop(p->bps, now_ns());
	cp_profile__collect(p);
	p->end.end_ns = now_ns();
	/* the report and the recording show the counters as the run ended */
	live_end(p, &p->end);
	p->ended = true;
	return 0;
}

int cp_profile__finish(struct cp_profile *p, char *err, size_t err_sz)
{
	int ret;

	if (p->drain && !p->ended)
		live_end(p, &p->end);
	ret = cp_recorder__close(p->rec, &p->end, err, err_sz);
	if (p->rec)
		cp_symbolizer__set_maps_text(p->sym, NULL, NULL, false);
	p->rec = NULL;
	return ret;
}

void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r)
{
	static const struct cp_bp_summary bp_off = { .disabled = true };
	struct cp_run_end e = p->end;
	struct cp_objects_stats os;

	if (p->drain && !p->ended)
		live_end(p, &e);
	if (!e.end_ns)
		e.end_ns = now_ns();
	r->source = cp_source_name(p->info.source);
	r->source_reason = p->info.source_reason[0] ? p->info.source_reason : NULL;
	r->targets = p->info.targets;
	r->nr_targets = (int)p->info.nr_targets;
	r->launched = p->info.launched;
	r->bpf = e.bpf;
	r->insns = p->insns;
	r->objects = p->ostats;
	r->locate = cp_profile_locate;
	r->locate_ctx = (void *)p;
	r->received = p->received;
	/* offline: the run's drops, plus what the replayed checks dropped (a bad file) */
	r->malformed = e.malformed + p->counts.malformed;
	r->unknown = e.unknown + p->counts.unknown;
	r->period_changes = e.period_changes;
	r->execs = p->execs;
	r->object_events = p->object_events;
	r->guard_backoffs = e.guard_backoffs;
	cp_objects__stats(p->objects, &os);
	r->backoff_doubtful = os.backoff_doubtful;
	r->backoff_unseen = os.backoff_unseen;
	r->have_alloc = e.have_alloc;
	r->soft = e.soft;
	r->alloc = e.alloc;
	r->exits = p->exits;
	r->objects_live = os.store.live;
	r->insns_dropped = insn_store__dropped(p->insns);
	r->duration_s = e.end_ns > p->info.start_ns ?
		(double)(e.end_ns - p->info.start_ns) / 1e9 : 0;
	/* offline: the histories were recorded, the manager's figures are not */
	r->bp = p->bps ? cp_bp_sampler__summary(p->bps) : p->sess ? &bp_off : NULL;
	r->end_reason = p->end.end_reason;
	r->procs = p->procs;
	cp_limits_fill(&p->lim, &(struct cp_limits_stores){ p->sym, p->objects, p->procs },
		       p->misses, p->insns, &r->limits);
}

int cp_profile_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz)
{
	struct cp_profile *p = ctx;
	struct cp_symbol_info info;

	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, ip, &info))
		return p->off.explain ? p->off.explain(p->off.ctx, tgid, ip, buf, sz) : -1;
	cp_symbol_info_format(&info, buf, sz);
	return 0;
}

void cp_profile__snapshot(struct cp_profile *p, pid_t pid)
{
	cp_symbolizer__refresh(p->sym, pid);
}

/* cp_class_locate_fn over the symbolizer: "f inlined into g" as the function. */
static int class_locate(void *ctx, __u32 tgid, __u64 ip, struct cp_src_loc *out)
{
	struct cp_profile *p = ctx;
	struct cp_symbol_info info;
	size_t len;

	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, ip, &info))
		return -1;
	snprintf(out->module, sizeof(out->module), "%s", info.module ? info.module : "");
	if (info.function)
		snprintf(out->function, sizeof(out->function), "%s", info.function);
	else if (info.module)
		snprintf(out->function, sizeof(out->function), "%s+0x%llx",
			 strrchr(info.module, '/') ? strrchr(info.module, '/') + 1 : info.module,
			 (unsigned long long)info.module_offset);
	for (__u32 i = 0; i < info.nr_inlined && info.function; i++) {
		len = strlen(out->function);
		snprintf(out->function + len, sizeof(out->function) - len, " inlined into %s",
			 info.inlined[i].function ? info.inlined[i].function : "??");
	}
	snprintf(out->file, sizeof(out->file), "%s", info.file ? info.file : "");
	out->line = info.line;
	return info.function || info.file || info.module ? 0 : -1;
}

static void alloc_frame(struct cp_profile *p, __u32 tgid, __u64 ip, struct cp_issue_object *out)
{
	struct cp_src_loc *l;

	if (out->nr_frames >= CP_ISSUE_MAX_FRAMES) {
		out->more_frames = true;
		return;
	}
	l = &out->alloc_stack[out->nr_frames++];
	/* a return address: the call is the instruction before it. An unknown
	 * frame stays, by address, so the frames around it keep their places. */
	if (class_locate(p, tgid, ip - 1, l))
		snprintf(l->function, sizeof(l->function), "0x%llx", (unsigned long long)ip);
}

/*
 * The allocation stack of call site @id: its caller (read apart, exact),
 * then the frames of its stack id above the caller. An allocator's stack,
 * taken at its return, begins at the caller. A system call's (mmap) begins
 * inside the wrapper that made it: the frames up to the caller are skipped;
 * a wrapper that sets up no frame of its own (a leaf, like glibc's mmap)
 * hides its caller from the frame-pointer walk, so the frame after the
 * wrapper's is the caller's caller.
 */
static void alloc_stack(struct cp_profile *p, __u32 tgid, __u64 id, struct cp_issue_object *out)
{
	const struct cp_callsite *cs = cp_objects__callsite_get(p->objects, (pid_t)tgid, id);
	size_t n = 0, i = 0;
	const __u64 *ips = cp_objects__callsite_stack(p->objects, (pid_t)tgid, id, &n);

	if (!cs || !cs->caller)
		return;
	while (i < n && ips[i] != cs->caller)
		i++;
	alloc_frame(p, tgid, cs->caller, out);
	for (i = i < n ? i + 1 : 1; i < n; i++)
		alloc_frame(p, tgid, ips[i], out);
}

/*
 * cp_class_object_fn: the heap object or mapping a sample or a breakpoint
 * history found at @addr (user/seen_objects.h), else the process objects at
 * report time (globals, stacks, what lives on). Its allocation stack: the call
 * site's frames (user/callsites.h).
 */
static int class_object(void *ctx, __u32 tgid, __u64 addr, struct cp_issue_object *out)
{
	struct cp_profile *p = ctx;
	struct cp_seen_object so;
	struct cp_resolved r;

	/* what the samples touched first: the object may be freed, its memory reused */
	if (!cp_seen_objects__find(p->seen, tgid, addr, p->l1.line_bytes, &so)) {
		memset(&r, 0, sizeof(r));
		r.kind = so.kind;
		r.start = so.start;
		r.size = so.size;
		r.callsite = so.callsite;
		r.tid = so.tid;
		r.flags = so.flags;
		/* as the object store names a tracked object */
		snprintf(r.name, sizeof(r.name), "%s", cp_object_kind_name(r.kind));
	} else if (cp_objects_resolve(p->objects, (pid_t)tgid, addr, &r)) {
		return -1;
	}
	out->kind = r.kind;
	out->start = r.start;
	out->size = r.size;
	out->callsite = r.callsite;
	out->nr_objects = 1;
	snprintf(out->name, sizeof(out->name), "%s", r.name);
	if (r.tid) {
		out->nr_tids = 1;
		out->alloc_tids[0] = r.tid;
	}
	if (r.callsite)
		alloc_stack(p, tgid, r.callsite, out);
	return 0;
}


/* Classifies @insns and @misses (the run's or a window's) with @r's totals. */
static int classify_stores(struct cp_profile *p, const struct cp_insn_store *insns,
			   const struct cp_miss_store *misses, const struct cp_report *r,
			   const struct cp_classify_cfg *cfg, struct cp_classification *out)
{
	struct cp_classify_input in = {
		.l1 = &p->l1,
		.insns = insns,
		.misses = misses,
		/* the periods the events started with, live and offline alike */
		.load_period = p->info.load_period,
		.store_period = p->info.store_period,
		.duration_s = r->duration_s,
		.loads = r->bpf.samples[CP_ACCESS_LOAD],
		.stores = r->bpf.samples[CP_ACCESS_STORE],
		.load_misses = r->bpf.misses[CP_ACCESS_LOAD],
		.store_misses = r->bpf.misses[CP_ACCESS_STORE],
		.no_levels = cp_stats_levels_unknown(&r->bpf),
		/* soft: time shares (ticks per instruction come with the
		 * counters) and pattern evidence (classify.h) */
		.soft = p->info.source == CP_SOURCE_SOFT,
		.time_samples = r->bpf.ticks,
		.geo = r->geo,
		.locate = class_locate,
		.locate_ctx = p,
		.object_at = class_object,
		.object_ctx = p,
	};

	return cp_classify(&in, cfg, out);
}

int cp_profile__classify(struct cp_profile *p, const struct cp_report *r,
			 const struct cp_classify_cfg *cfg, struct cp_classification *out)
{
	return classify_stores(p, p->insns, p->misses, r, cfg, out);
}

int cp_profile__summary(struct cp_profile *p, const struct cp_classify_cfg *cfg,
			struct cp_summary *out)
{
	const struct cp_insn_store *insns = p->insns;
	const struct cp_miss_store *misses = p->misses;
	__u64 end_ns;
	int ret;

	memset(out, 0, sizeof(*out));
	cp_profile__fill_report(p, &out->report);
	out->run_s = out->report.duration_s;
	out->run_bpf = out->report.bpf;
	out->window_s = out->report.duration_s;
	if (p->roll) {
		/* the counters of the window ending now, not of the run */
		ret = cp_rolling__window(p->roll, p->insns, &out->report.bpf, &out->win);
		if (ret)
			return ret;
		end_ns = now_ns();
		insns = out->win.insns;
		misses = out->win.misses;
		out->report.bpf = out->win.bpf;
		out->report.insns = insns;
		out->report.objects = NULL;	/* samples per object are the run's */
		out->window_s = end_ns > out->win.start_ns ?
			(double)(end_ns - out->win.start_ns) / 1e9 : 0;
		out->report.duration_s = out->window_s;
	}
	snprintf(out->end_reason, sizeof(out->end_reason), "summary of the last %.0f s",
		 out->window_s);
	out->report.end_reason = out->end_reason;
	ret = classify_stores(p, insns, misses, &out->report, cfg, &out->issues);
	if (ret) {
		cp_summary_free(out);
		return ret;
	}
	out->report.issues = &out->issues;
	out->report.classify_cfg = cfg;
	return 0;
}

void cp_summary_free(struct cp_summary *s)
{
	cp_classification_free(&s->issues);
	cp_window_free(&s->win);
}

const struct cp_run_info *cp_profile__info(const struct cp_profile *p)
{
	return &p->info;
}

int cp_profile__report(struct cp_profile *p, const struct cp_geometry *geo,
		       const struct cp_report_opts *o, char *err, size_t err_sz)
{
	struct cp_classification issues;
	struct cp_geometry recorded;
	struct cp_report r = { 0 };
	int ret;

	memset(&issues, 0, sizeof(issues));
	cp_profile__fill_report(p, &r);
	if (!geo) {
		/* offline: the caches the run assumed, as its recording says */
		memset(&recorded, 0, sizeof(recorded));
		memcpy(recorded.slot, p->info.cache, sizeof(recorded.slot));
		for (int s = 0; s < CP_CACHE_NR_SLOTS; s++)
			recorded.source[s] = CP_GEO_RECORDED;
		geo = &recorded;
	}
	r.geo = geo;
	r.top = o->classify->top;
	r.classify_cfg = o->classify;
	ret = cp_profile__classify(p, &r, o->classify, &issues);
	if (ret)
		fprintf(stderr, "cacheperf-bpf: cannot classify the misses: %s\n", strerror(-ret));
	else
		r.issues = &issues;
	ret = cp_report_emit(&r, o->output, o->json, err, err_sz);
	cp_classification_free(&issues);
	return ret;
}
