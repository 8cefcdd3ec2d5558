// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The record handlers and the stores they feed, live and offline alike. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "machine/source.h"
#include "objects/alloc_events.h"
#include "objects/proc_maps.h"
#include "profile/profile.h"
#include "util/clock.h"

/* Remembers the tracked heap object or mapping @addr fell in, for the classifier. */
static void note_seen(struct cp_profile *p, __u32 tgid, __u64 addr, const struct cp_resolved *r)
{
	struct cp_seen_object o = {
		.start = r->start,
		.size = r->size,
		.callsite = r->callsite,
		.tid = r->tid,
		.flags = r->flags,
		.kind = (__u16)r->kind,
	};

	if ((r->kind == CP_OBJ_HEAP || r->kind == CP_OBJ_MAPPING) && !r->before_attach && r->size)
		cp_seen_objects__note(p->seen, tgid, addr, p->l1.line_bytes, &o);
}

void cp_profile__limits_tick(struct cp_profile *p, bool now)
{
	cp_limits_tick(&p->lim, &(struct cp_limits_stores){p->sym, p->objects, p->procs},
		       cp_now_ns(), now);
}

/*
 * Every record once handled, to the hooks (--record): what the handling
 * read comes first, the process it described after it (an exec record,
 * replayed, forgets its process's old description).
 */
static void recorded(struct cp_profile *p, const void *data, size_t size)
{
	if (!p->hooks.record)
		return;
	p->hooks.record(p->hooks.ctx, data, size);
	if (p->desc_pending) {
		p->desc_pending = false;
		p->hooks.record(p->hooks.ctx, &p->desc, sizeof(p->desc));
	}
}

/* cp_proc_described_fn: a process's comm and cgroup as read now, for the recording. */
static void on_described(void *ctx, const struct cp_proc_summary *s)
{
	struct cp_profile *p = ctx;
	struct cp_proc_desc_record *d = &p->desc;

	if (!p->hooks.record)
		return;
	/* one record described two (a chunk object's feed in between): the first goes now */
	if (p->desc_pending)
		p->hooks.record(p->hooks.ctx, d, sizeof(*d));
	memset(d, 0, sizeof(*d));
	d->type = CP_REC_PROC_DESC;
	d->pid = (__u32)s->pid;
	d->v2 = s->cg.v2;
	snprintf(d->comm, sizeof(d->comm), "%s", s->comm);
	snprintf(d->container_id, sizeof(d->container_id), "%s", s->cg.container_id);
	snprintf(d->runtime, sizeof(d->runtime), "%s", s->cg.runtime ? s->cg.runtime : "");
	snprintf(d->cgroup, sizeof(d->cgroup), "%s", s->cg.path);
	p->desc_pending = true;
}

/* A recorded description (on_described()): the process named as the live run named it. */
static void on_desc_record(struct cp_profile *p, const void *data)
{
	struct cp_proc_desc_record d;
	struct cp_cgroup_info cg;

	memcpy(&d, data, sizeof(d));
	/* a recording is a tenant's file like any other: every string ends here */
	d.comm[sizeof(d.comm) - 1] = '\0';
	d.container_id[sizeof(d.container_id) - 1] = '\0';
	d.runtime[sizeof(d.runtime) - 1] = '\0';
	d.cgroup[sizeof(d.cgroup) - 1] = '\0';
	cp_cgroup_info_unknown(&cg);
	snprintf(cg.path, sizeof(cg.path), "%s", d.cgroup);
	cg.v2 = d.v2 != 0;
	cp_container_named(d.container_id, d.runtime, cg.container_id, &cg.runtime);
	cp_proc_summaries__describe_as(p->procs, (pid_t)d.pid, d.comm, &cg);
}

/*
 * @addr (of a sample or a breakpoint history) lies in heap memory no
 * allocation was seen for: in a live run, the object glibc's chunk headers
 * give (cp_objects__chunk_event()) is fed as an object event, handled and
 * recorded as one from the probes, before the record that found it, so that
 * a replay, which reads no memory, resolves the same. @r is resolved again.
 */
static void find_chunk(struct cp_profile *p, __u32 tgid, __u64 addr, __u64 time_ns,
		       struct cp_resolved *r)
{
	struct cp_object_event ev;

	if (!r->before_attach ||
	    cp_objects__chunk_event(p->objects, (pid_t)tgid, addr, time_ns, &ev))
		return;
	cp_profile__feed(p, &ev, sizeof(ev));
	cp_objects__resolve(p->objects, (pid_t)tgid, addr, r);
}

/*
 * A forwarded sample: a miss (PMU sources) or any access (sources without
 * hit/miss information). Resolved now, while its process and objects exist.
 */
static void handle_sample(struct cp_profile *p, const struct cp_sample *s)
{
	bool miss = s->flags & (CP_SAMPLE_MISS | CP_SAMPLE_ALL);
	struct cp_mem_access a = {
		.tgid = s->tgid,
		.tid = s->tid,
		.ip = s->ip,
		.addr = s->addr,
		.size = s->size,
		.weight = s->weight,
		.store = s->flags & CP_SAMPLE_STORE,
		.time_ns = s->time_ns,
	};
	struct cp_ip_key key = {.tgid = s->tgid, .ip = s->ip};
	const struct cp_callsite *cs;
	struct cp_symbol_info info;
	struct cp_data_src d;
	struct cp_resolved r;
	struct cp_symbolizer_stats ss;
	int first = 1;

	/* a drain takes thousands of samples at once: memory is watched between them too */
	if (!(p->received++ & 255))
		cp_profile__limits_tick(p, false);
	if (s->time_ns > p->last_sample_ns)
		p->last_sample_ns = s->time_ns;
	cp_proc_summaries__sample(p->procs, (pid_t)s->tgid, s->flags & CP_SAMPLE_MISS);
	cp_data_src_decode(s->data_src, &d);
	a.hitm = d.snoop == CP_SNOOP_HITM;
	if (!s->addr)
		return;
	if (miss) {
		__u32 set = cp_cache_set_of(&p->l1, s->addr);
		const struct cp_map *m =
			cp_objects__shared_map(p->objects, (pid_t)s->tgid, s->addr);

		/* memory processes share: the file's lines, where every process's accesses meet */
		if (m)
			cp_shared_maps__place(p->shared, m, &a.addr, &a.space);

		cp_miss_store__add(p->misses, &a);
		first = cp_insn_store__note_miss(p->insns, &key, s->addr, set);
		if (p->roll) {
			cp_miss_store__add(cp_rolling__misses(p->roll), &a);
			cp_insn_store__note_miss(cp_rolling__insns(p->roll), &key, s->addr, set);
		}
	}
	if (p->hooks.sample)
		p->hooks.sample(p->hooks.ctx, s, miss);
	/*
	 * Symbolize now, while the process lives: an ip in a library mapped
	 * after the last snapshot makes the symbolizer take a new one, and the
	 * result stays cached for the report. Until it succeeds: a lookup per
	 * sample of a located instruction was a tenth of a replay's time.
	 */
	if (first) {
		/* a file refused for now (memory) is no location: a later sample asks again */
		if (!cp_symbolizer__resolve_now(p->sym, (pid_t)s->tgid, s->ip, s->time_ns, &info) &&
		    miss && !(info.flags & CP_SYM_REFUSED_FOR_NOW))
			cp_insn_store__set_located(p->insns, &key);
		/* a lookup may have taken a snapshot (megabytes): check the memory now */
		cp_symbolizer__stats(p->sym, &ss);
		if (ss.snapshots != p->snapshots_seen) {
			p->snapshots_seen = ss.snapshots;
			cp_profile__limits_tick(p, true);
		}
	}
	if (cp_objects__resolve(p->objects, (pid_t)s->tgid, s->addr, &r) == -ENOMEM)
		return;
	find_chunk(p, s->tgid, s->addr, s->time_ns, &r);
	if (miss)
		note_seen(p, s->tgid, s->addr, &r);
	cs = r.callsite ? cp_objects__callsite_get(p->objects, (pid_t)s->tgid, r.callsite) : NULL;
	cp_object_stats__add(p->ostats, s->tgid, &r, cs ? cs->caller : 0,
			     s->flags & CP_SAMPLE_MISS);
}

static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct cp_profile *p = ctx;

	handle_sample(p, s);
	recorded(p, s, sizeof(*s));
	return 0;
}

/* @who: the exec record's comm and cgroup (NULL: a record without them). */
static void on_proc(struct cp_profile *p, const struct cp_proc_event *pe,
		    const struct cp_proc_exec_event *who)
{
	pid_t pid = (pid_t)pe->tgid;

	if (pe->kind == CP_PROC_EXEC) {
		char comm[sizeof(who->comm) + 1] = "";

		p->execs++;
		/* the new image's maps, read once for the objects, the symbolizer and the hook */
		cp_maps_hold(pid);
		if (who)
			memcpy(comm, who->comm, sizeof(who->comm));
		cp_proc_summaries__exec(p->procs, pid, comm, who ? who->cgroup_id : 0,
					who ? who->cgroup_v1 : 0);
		cp_objects__on_exec(p->objects, pid);
		cp_symbolizer__exec(p->sym, pid, pe->time_ns);
	} else if (pe->kind == CP_PROC_EXIT) {
		p->exits++;
		cp_proc_summaries__exit(p->procs, pid);
		cp_objects__on_exit(p->objects, pid);
		cp_symbolizer__exit(p->sym, pid);
	}
	if (p->hooks.proc)
		p->hooks.proc(p->hooks.ctx, pe);
	cp_maps_release();
}

/* A call site's frames (live/run.c feed_site_frames(), or a recording's), checked: the site's. */
static void on_stack_record(struct cp_profile *p, const void *data, size_t size)
{
	struct cp_alloc_stack_record r;

	memcpy(&r, data, size);
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

		cp_insn_store__add_history(p->insns, &key, h.addrs[i]);
		/* the objects a conflict's lines lie in, while they live */
		if (cp_objects__resolve(p->objects, (pid_t)h.tgid, h.addrs[i], &r))
			continue;
		find_chunk(p, h.tgid, h.addrs[i], 0, &r);
		note_seen(p, h.tgid, h.addrs[i], &r);
	}
}

/*
 * A record of a type other than a sample, its size already checked against
 * its type's row (records.c), and no live-only one: to its handler, then
 * to the recording.
 */
static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct cp_profile *p = ctx;

	switch (type) {
	case CP_REC_OBJECT: {
		bool applied = !cp_alloc_event_apply(p->objects, data, size);
		struct cp_object_event ev;

		memcpy(&ev, data, sizeof(ev));
		/* an object from the chunk headers is no event of the probes */
		if (!(ev.flags & CP_OBJ_EV_F_CHUNK))
			p->object_events++;
		else if (applied)
			p->chunk_objects++;
		else
			return 0; /* not kept: find_chunk() tries again, nothing to replay */
		break;
	}
	case CP_REC_PROC: {
		struct cp_proc_exec_event who = {0};

		/* an older recording's record: the event alone, or no v1 cgroups (0: unknown) */
		memcpy(&who, data, size);
		on_proc(p, &who.ev, size >= CP_PROC_EXEC_V2_ONLY_SIZE ? &who : NULL);
		break;
	}
	case CP_REC_HISTORY:
		on_history_record(p, data);
		break;
	case CP_REC_ALLOC_STACK:
		on_stack_record(p, data, size);
		break;
	case CP_REC_PROC_DESC:
		on_desc_record(p, data);
		break;
	default:
		/* a type the table knows and this switch does not: a defect, counted */
		p->counts.unknown++;
		return 0;
	}
	recorded(p, data, size);
	return 0;
}

struct cp_profile *cp_profile__new(const struct cp_profile_cfg *cfg,
				   const struct cp_profile_hooks *hooks)
{
	struct cp_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cfg = *cfg;
	if (hooks)
		p->hooks = *hooks;
	p->ops = (struct cp_record_ops){.sample = on_sample, .record = on_record, .ctx = p};
	p->insns = cp_insn_store__new(CP_MAX_INSNS);
	p->objects = cp_objects__new(&cfg->objects);
	p->ostats = cp_object_stats__new(0);
	p->l1 = cfg->l1d;
	p->misses = cp_miss_store__new(&p->l1, 0);
	p->shared = cp_shared_maps__new();
	p->seen = cp_seen_objects__new(0);
	p->sym = cp_symbolizer__new(0, 0);
	p->procs = cp_proc_summaries__new(0, cfg->describe, NULL);
	if (p->procs)
		cp_proc_summaries__on_described(p->procs, on_described, p);
	p->stacks = cp_stack_store__new(0);
	p->interval_stacks = cp_stack_store__new(CP_MAX_INTERVAL_STACKS);
	if (!p->insns || !p->objects || !p->ostats || !p->misses || !p->shared || !p->seen ||
	    !p->sym || !p->procs || !p->stacks || !p->interval_stacks) {
		cp_profile__free(p);
		return NULL;
	}
	if (cfg->maps_text)
		cp_symbolizer__set_maps_text(p->sym, cfg->maps_text, cfg->maps_ctx,
					     cfg->maps_offline);
	if (cfg->path_map)
		cp_symbolizer__set_path_map(p->sym, cfg->path_map);
	return p;
}

void cp_profile__free(struct cp_profile *p)
{
	if (!p)
		return;
	cp_insn_store__free(p->insns);
	cp_objects__free(p->objects);
	cp_object_stats__free(p->ostats);
	cp_miss_store__free(p->misses);
	cp_shared_maps__free(p->shared);
	cp_seen_objects__free(p->seen);
	cp_rolling__free(p->roll);
	cp_timeline__free(p->timeline);
	cp_symbolizer__free(p->sym);
	cp_proc_summaries__free(p->procs);
	cp_stack_store__free(p->stacks);
	cp_stack_store__free(p->interval_stacks);
	free(p);
}

void cp_profile__set_info(struct cp_profile *p, const struct cp_run_info *info)
{
	p->info = *info;
}

void cp_profile__set_end(struct cp_profile *p, const struct cp_run_end *end)
{
	p->end = *end;
}

const struct cp_run_info *cp_profile__info(const struct cp_profile *p)
{
	return &p->info;
}

void cp_profile__maps_changed(struct cp_profile *p, pid_t pid, bool symbols)
{
	if (symbols)
		cp_symbolizer__refresh(p->sym, pid);
	else if (cp_objects__tracked(p->objects, pid))
		cp_objects__refresh(p->objects, pid);
}

void cp_profile__locate_waiting(struct cp_profile *p)
{
	size_t n = cp_insn_store__count(p->insns);
	const struct cp_insn **v = n ? malloc(n * sizeof(*v)) : NULL;
	struct cp_symbol_info info;

	if (!v)
		return;
	n = cp_insn_store__top(p->insns, v, n);
	for (size_t i = 0; i < n; i++)
		if (!v[i]->located &&
		    !cp_symbolizer__resolve(p->sym, (pid_t)v[i]->key.tgid, v[i]->key.ip, &info))
			cp_insn_store__set_located(p->insns, &v[i]->key);
	free(v);
}

_Static_assert(CP_PROFILE_HINT_STAGES == CP_OBJ_HINT_STAGES, "the object's stages are the last");

void cp_profile__hint(struct cp_profile *p, const void *data, size_t size, int stage)
{
	const struct cp_sample *s = data;
	struct cp_ip_key key;

	if (size != sizeof(*s) || s->type != CP_REC_SAMPLE)
		return;
	key = (struct cp_ip_key){.tgid = s->tgid, .ip = s->ip};
	if (stage == 0) {
		cp_miss_store__prefetch(p->misses, s->tgid, s->addr);
		cp_insn_store__prefetch(p->insns, &key);
		cp_seen_objects__prefetch(p->seen, s->tgid, s->addr, p->l1.line_bytes);
	} else if (stage == 1) {
		cp_insn_store__prefetch_entry(p->insns, &key);
	}
	cp_objects__hint(p->objects, (pid_t)s->tgid, s->addr, stage);
}

int cp_profile__feed(struct cp_profile *p, const void *data, size_t size)
{
	return cp_record_dispatch(&p->ops, &p->counts, data, size);
}

void cp_profile__add_counts(struct cp_profile *p, const struct cp_insn *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cp_insn_store__add(p->insns, &v[i].key, &v[i].counts);
		if (p->roll)
			cp_insn_store__add(cp_rolling__insns(p->roll), &v[i].key, &v[i].counts);
	}
	/* the run's facts came first (live: before the loop; a recording: its header) */
	if (!p->timeline)
		p->timeline = cp_timeline__new(cp_source_of(p->info.source)->by_time);
	if (p->timeline)
		cp_timeline__add(p->timeline, v, n, p->received, p->last_sample_ns);
	if (p->hooks.counters)
		p->hooks.counters(p->hooks.ctx, v, n);
}

void cp_profile__add_stacks(struct cp_profile *p, const struct cp_stack_sample *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cp_stack_store__add(p->stacks, v[i].tgid, v[i].pcs, v[i].nr, &v[i].c);
		/* rolling epochs (-i): the interval's own, for its profile */
		if (p->roll)
			cp_stack_store__add(p->interval_stacks, v[i].tgid, v[i].pcs, v[i].nr,
					    &v[i].c);
	}
	if (p->hooks.stacks)
		p->hooks.stacks(p->hooks.ctx, v, n);
}

void cp_profile__interval_done(struct cp_profile *p)
{
	cp_stack_store__clear(p->interval_stacks);
}

int cp_profile__for_each_stack(const struct cp_profile *p, cp_stack_fn fn, void *ctx)
{
	return cp_stack_store__for_each(p->stacks, fn, ctx);
}

void cp_profile__snapshot(struct cp_profile *p, pid_t pid)
{
	cp_symbolizer__refresh(p->sym, pid);
}
