// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiling loop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_events.h"
#include "alloc_probes.h"
#include "classify.h"
#include "drain.h"
#include "miss_store.h"
#include "object_stats.h"
#include "process_objects.h"
#include "profile.h"
#include "rate_cap.h"
#include "signals.h"
#include "symbolizer.h"

#define CP_IP_BATCH	4096	/* counter entries moved per map walk */
/* re-read maps for an unmapped sample address at most this often */
#define CP_MAPS_REFRESH_FAST_NS	20000000ull

struct cp_profile {
	struct cp_session *sess;
	struct cp_drain *drain;
	struct cp_insn_store *insns;
	struct cp_insn *batch;
	struct cp_objects *objects;		/* what an address belongs to, per process */
	struct cp_object_stats *ostats;		/* samples per object */
	struct cp_miss_store *misses;		/* misses per line and set */
	struct cp_cache_level l1;		/* the L1D misses map onto */
	struct cp_symbolizer *sym;		/* maps snapshot at a process's first sight */
	struct cp_rate_cap_cfg rate;
	__u64 received;
	__u64 object_events;
	__u64 execs;
	__u64 exits;
	__u64 period_changes;
	__u64 start_ns;
	__u64 end_ns;
	char end_reason[96];
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * A forwarded sample: a miss (PMU sources) or any access (sources without
 * hit/miss information). Resolved now, while its process and objects exist.
 */
static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct cp_profile *p = ctx;
	bool miss = s->flags & (CP_SAMPLE_MISS | CP_SAMPLE_ALL);
	struct cp_mem_access a = {
		.tgid = s->tgid, .tid = s->tid, .ip = s->ip, .addr = s->addr, .size = s->size,
		.weight = s->weight, .store = s->flags & CP_SAMPLE_STORE,
	};
	struct cp_ip_key key = { .tgid = s->tgid, .ip = s->ip };
	const struct cp_callsite *cs;
	struct cp_symbol_info info;
	struct cp_data_src d;
	struct cp_resolved r;

	p->received++;
	cp_data_src_decode(s->data_src, &d);
	a.hitm = d.snoop == CP_SNOOP_HITM;
	if (!s->addr)
		return 0;
	if (miss) {
		miss_store__add(p->misses, &a);
		insn_store__note_miss(p->insns, &key, s->addr, cp_cache_set_of(&p->l1, s->addr));
	}
	/*
	 * Symbolize now, while the process lives: an ip in a library mapped
	 * after the last snapshot makes the symbolizer take a new one, and the
	 * result stays cached for the report.
	 */
	cp_symbolizer__resolve(p->sym, (pid_t)s->tgid, s->ip, &info);
	if (cp_objects_resolve(p->objects, (pid_t)s->tgid, s->addr, &r) == -ENOMEM)
		return 0;
	cs = r.callsite ? cp_objects__callsite_get(p->objects, (pid_t)s->tgid, r.callsite) : NULL;
	object_stats__add(p->ostats, s->tgid, &r, cs ? cs->caller : 0,
			  s->flags & CP_SAMPLE_MISS);
	return 0;
}

static void on_proc(struct cp_profile *p, const struct cp_proc_event *pe)
{
	pid_t pid = (pid_t)pe->tgid;

	if (pe->kind == CP_PROC_EXEC) {
		p->execs++;
		cp_objects__on_exec(p->objects, pid);
		cp_symbolizer__refresh(p->sym, pid);
		/* a process a target started: probe its allocator too (-EEXIST: has it) */
		cp_session__probe_allocs(p->sess, pid);
	} else if (pe->kind == CP_PROC_EXIT) {
		p->exits++;
		if (p->sess->alloc)
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

static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct cp_profile *p = ctx;

	if (type == CP_REC_OBJECT) {
		cp_alloc_event_apply(p->objects, data, size);
		p->object_events++;
	} else if (type == CP_REC_PROC && size >= sizeof(struct cp_proc_event)) {
		on_proc(p, data);
	}
	return 0;
}

int cp_profile__new(struct cp_session *s, const struct cp_geometry *geo, struct cp_profile **out,
		    char *err, size_t err_sz)
{
	struct cp_drain_ops ops = { .sample = on_sample, .record = on_record };
	/* a new process maps its libraries and arenas in its first milliseconds */
	struct cp_objects_opts objects_opts = { .maps_refresh_ns = CP_MAPS_REFRESH_FAST_NS };
	struct cp_profile *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		goto nomem;
	p->sess = s;
	p->insns = insn_store__new(CP_MAX_INSNS);
	p->batch = calloc(CP_IP_BATCH, sizeof(*p->batch));
	p->objects = cp_objects__new(&objects_opts);
	p->ostats = object_stats__new(0);
	p->l1 = geo->slot[CP_CACHE_L1D];
	p->misses = miss_store__new(&p->l1, 0);
	p->sym = cp_symbolizer__new(0, 0);
	if (!p->insns || !p->batch || !p->objects || !p->ostats || !p->misses || !p->sym)
		goto nomem;
	ops.ctx = p;
	s->on_guard = on_guard;
	s->on_guard_ctx = p;
	p->drain = drain__new(s->skel, &ops);
	if (!p->drain) {
		snprintf(err, err_sz, "cannot read the BPF ring buffer: %s", strerror(errno));
		cp_profile__free(p);
		return -errno;
	}
	*out = p;
	return 0;
nomem:
	cp_profile__free(p);
	snprintf(err, err_sz, "out of memory");
	return -ENOMEM;
}

void cp_profile__free(struct cp_profile *p)
{
	if (!p)
		return;
	if (p->sess && p->sess->on_guard_ctx == p)
		p->sess->on_guard = NULL;
	drain__free(p->drain);
	insn_store__free(p->insns);
	free(p->batch);
	cp_objects__free(p->objects);
	object_stats__free(p->ostats);
	miss_store__free(p->misses);
	cp_symbolizer__free(p->sym);
	free(p);
}

void cp_profile__collect(struct cp_profile *p)
{
	int n;

	drain__poll(p->drain, 0);
	do {
		n = drain__ip_counts(p->drain, p->batch, CP_IP_BATCH);
		for (int i = 0; i < n; i++)
			insn_store__add(p->insns, &p->batch[i].key, &p->batch[i].counts);
	} while (n == CP_IP_BATCH);
}

/* True when the targets are gone; sets the end reason. */
static bool targets_gone(struct cp_profile *p, const struct cp_profile_cfg *cfg)
{
	if (cfg->child) {
		if (!cp_child_poll(cfg->child))
			return false;
		snprintf(p->end_reason, sizeof(p->end_reason), "the command exited with status %d",
			 cp_exit_code(cfg->child->status));
		return true;
	}
	if (!cfg->nr_pids)
		return false;
	for (int i = 0; i < cfg->nr_pids; i++)
		if (cp_pid_alive(cfg->pids[i]))
			return false;
	snprintf(p->end_reason, sizeof(p->end_reason), "%s exited",
		 cfg->nr_pids == 1 ? "the target" : "every target");
	return true;
}

static void interval_tick(struct cp_profile *p, __u64 now)
{
	int ret;

	cp_profile__collect(p);
	ret = cp_perf_events__rate_cap(p->sess->events, &p->rate, now, stderr);
	if (ret > 0)
		p->period_changes += (__u64)ret;
}

int cp_profile__run(struct cp_profile *p, const struct cp_profile_cfg *cfg, char *err,
		    size_t err_sz)
{
	const struct cp_options *opts = cfg->opts;
	__u64 interval_ns = (__u64)opts->interval_s * 1000000000ull;
	__u64 deadline = 0, next_interval, now;
	int ret;

	cp_rate_cap_cfg_init(&p->rate, opts->max_sample_rate);
	p->start_ns = now_ns();
	next_interval = p->start_ns + interval_ns;
	if (opts->duration_s)
		deadline = p->start_ns + (__u64)opts->duration_s * 1000000000ull;
	/* the rate cap's first call takes its baseline */
	cp_perf_events__rate_cap(p->sess->events, &p->rate, p->start_ns, NULL);

	for (;;) {
		int timeout_ms = CP_TICK_MS;

		now = now_ns();
		if (cp_signals_stop_requested()) {
			snprintf(p->end_reason, sizeof(p->end_reason), "interrupted");
			break;
		}
		if (deadline && now >= deadline) {
			snprintf(p->end_reason, sizeof(p->end_reason), "duration reached");
			break;
		}
		if (targets_gone(p, cfg))
			break;
		if (now >= next_interval) {
			interval_tick(p, now);
			next_interval += interval_ns;
		}
		if (cp_signals_take_report_request() && cfg->on_report) {
			cp_profile__collect(p);
			p->end_ns = now_ns();
			cfg->on_report(p, cfg->report_ctx);
		}
		if (deadline && deadline - now < (__u64)timeout_ms * 1000000ull)
			timeout_ms = (int)((deadline - now) / 1000000ull) + 1;
		ret = drain__poll(p->drain, timeout_ms);
		/* the allocation probes wake us in batches: take what waits anyway */
		if (ret >= 0 || ret == -EINTR)
			ret = drain__poll(p->drain, 0);
		if (p->sess->alloc)
			cp_alloc_probes__tick(p->sess->alloc, now_ns());
		if (ret < 0 && ret != -EINTR) {
			snprintf(err, err_sz, "reading the ring buffer failed: %s", strerror(-ret));
			p->end_ns = now_ns();
			return ret;
		}
	}
	cp_profile__collect(p);
	p->end_ns = now_ns();
	return 0;
}

void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r)
{
	__u64 end = p->end_ns ? p->end_ns : now_ns();
	struct cp_objects_stats os;

	drain__stats(p->drain, &r->bpf);
	r->insns = p->insns;
	r->objects = p->ostats;
	r->locate = cp_profile_locate;
	r->locate_ctx = (void *)p;
	r->received = p->received;
	r->malformed = drain__malformed(p->drain);
	r->unknown = drain__unknown(p->drain);
	r->period_changes = p->period_changes;
	r->execs = p->execs;
	r->object_events = p->object_events;
	r->guard_backoffs = p->sess->guard_backoffs;
	cp_objects__stats(p->objects, &os);
	r->backoff_doubtful = os.backoff_doubtful;
	r->backoff_unseen = os.backoff_unseen;
	r->have_alloc = p->sess->alloc != NULL;
	if (p->sess->alloc)
		cp_alloc_probes__stats(p->sess->alloc, &r->alloc);
	r->exits = p->exits;
	r->duration_s = (double)(end - p->start_ns) / 1e9;
	r->end_reason = p->end_reason;
}

int cp_profile_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz)
{
	struct cp_profile *p = ctx;
	struct cp_symbol_info info;

	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, ip, &info))
		return -1;
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

/*
 * cp_class_object_fn over the process objects, resolved at report time: an
 * object freed by then is not found (its line still counts). The
 * allocation stack is the allocator's immediate caller only.
 */
static int class_object(void *ctx, __u32 tgid, __u64 addr, struct cp_issue_object *out)
{
	struct cp_profile *p = ctx;
	const struct cp_callsite *cs;
	struct cp_resolved r;

	if (cp_objects_resolve(p->objects, (pid_t)tgid, addr, &r))
		return -1;
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
	cs = r.callsite ? cp_objects__callsite_get(p->objects, (pid_t)tgid, r.callsite) : NULL;
	/* a return address: the call is the instruction before it */
	if (cs && cs->caller && !class_locate(p, tgid, cs->caller - 1, &out->alloc_stack[0]))
		out->nr_frames = 1;
	return 0;
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

int cp_profile__classify(struct cp_profile *p, const struct cp_options *opts,
			 struct cp_classification *out)
{
	__u64 end = p->end_ns ? p->end_ns : now_ns();
	struct cp_stats b;
	struct cp_classify_input in = {
		.l1 = &p->l1,
		.insns = p->insns,
		.misses = p->misses,
		.load_period = period_of(p->sess->events, CP_EVENT_LOAD),
		.store_period = period_of(p->sess->events, CP_EVENT_STORE),
		.duration_s = (double)(end - p->start_ns) / 1e9,
		.locate = class_locate,
		.locate_ctx = p,
		.object_at = class_object,
		.object_ctx = p,
	};

	drain__stats(p->drain, &b);
	in.loads = b.samples[CP_ACCESS_LOAD];
	in.stores = b.samples[CP_ACCESS_STORE];
	in.load_misses = b.misses[CP_ACCESS_LOAD];
	in.store_misses = b.misses[CP_ACCESS_STORE];
	in.no_levels = cp_stats_levels_unknown(&b);
	return cp_classify(&in, &opts->classify, out);
}
