// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiling loop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_events.h"
#include "alloc_probes.h"
#include "bp_sampler.h"
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
	struct cp_bp_sampler *bps;		/* breakpoint sampling; NULL when off */
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
		.tgid = s->tgid, .tid = s->tid, .addr = s->addr, .size = s->size,
		.store = s->flags & CP_SAMPLE_STORE,
	};
	const struct cp_callsite *cs;
	struct cp_symbol_info info;
	struct cp_data_src d;
	struct cp_resolved r;

	p->received++;
	cp_data_src_decode(s->data_src, &d);
	a.hitm = d.snoop == CP_SNOOP_HITM;
	if (!s->addr)
		return 0;
	if (miss)
		miss_store__add(p->misses, &a);
	if (miss && p->bps)
		cp_bp_sampler__note_miss(p->bps, s->tgid, s->cpu, s->ip, s->addr, s->time_ns);
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

	/* a new address space, or none: its instructions are other ones now */
	if (p->bps)
		cp_bp_sampler__forget(p->bps, pe->tgid, now_ns());
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

static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct cp_profile *p = ctx;

	if (type == CP_REC_OBJECT) {
		cp_alloc_event_apply(p->objects, data, size);
		p->object_events++;
	} else if (type == CP_REC_PROC && size >= sizeof(struct cp_proc_event)) {
		on_proc(p, data);
	} else if (type == CP_REC_BP && size >= sizeof(struct cp_bp_event) && p->bps) {
		cp_bp_sampler__on_event(p->bps, data, p->insns, p->misses, now_ns());
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
	/* breakpoints first: they deliver their last histories */
	cp_bp_sampler__free(p->bps);
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

/* Breakpoint sampling on the session's on_breakpoint; without it the run goes on. */
static void start_breakpoints(struct cp_profile *p, const struct cp_options *opts)
{
	struct cp_bp_sampler_cfg cfg = {
		.skel = p->sess->skel,
		.per_cpu = p->sess->scope.per_cpu,
		.sysfs_root = opts->sysfs_root,
		.expiry_ns = (__u64)opts->bp_expiry_ms * 1000000ull,
		.max_rate = opts->max_bp_rate,
		.l1 = { p->l1.line_bytes, p->l1.sets, p->l1.ways },
		.log = stderr,
	};

	if (!p->sess->bp_on)
		return;
	p->bps = cp_bp_sampler__new(&cfg);
	if (!p->bps)
		fprintf(stderr, "cacheperf-bpf: warning: no breakpoint sampling: %s\n",
			strerror(errno));
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
	start_breakpoints(p, opts);
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
		if (p->bps)
			cp_bp_sampler__tick(p->bps, p->insns, p->misses, now_ns());
		if (ret < 0 && ret != -EINTR) {
			snprintf(err, err_sz, "reading the ring buffer failed: %s", strerror(-ret));
			p->end_ns = now_ns();
			return ret;
		}
	}
	if (p->bps)
		cp_bp_sampler__stop(p->bps, now_ns());
	cp_profile__collect(p);
	p->end_ns = now_ns();
	return 0;
}

void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r)
{
	static const struct cp_bp_summary bp_off = { .disabled = true };
	__u64 end = p->end_ns ? p->end_ns : now_ns();

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
	r->have_alloc = p->sess->alloc != NULL;
	if (p->sess->alloc)
		cp_alloc_probes__stats(p->sess->alloc, &r->alloc);
	r->exits = p->exits;
	r->duration_s = (double)(end - p->start_ns) / 1e9;
	r->bp = p->bps ? cp_bp_sampler__summary(p->bps) : &bp_off;
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
