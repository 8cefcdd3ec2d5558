// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A profile's report: fill, classify, write. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/source.h"
#include "objects/allocator.h"
#include "report/profile_html.h"
#include "report/profile_callers.h"
#include "report/profile_report.h"
#include "util/clock.h"
#include "util/path.h"
#include "util/log.h"

static int report_alloc_site(void *ctx, __u32 tgid, __u64 callsite, char *buf, size_t sz);

void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r)
{
	struct cp_run_end e = p->end;
	struct cp_objects_stats os;

	/* a run still going: its counters as they are now */
	if (p->hooks.end_facts)
		p->hooks.end_facts(p->hooks.ctx, &e);
	if (!e.end_ns)
		e.end_ns = cp_now_ns();
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
	r->alloc_site = report_alloc_site;
	r->received = p->received;
	/* offline: the run's drops, plus what the replayed checks dropped (a bad file) */
	r->malformed = e.malformed + p->counts.malformed;
	r->unknown = e.unknown + p->counts.unknown;
	r->period_changes = e.period_changes;
	r->throttles = e.throttles;
	r->execs = p->execs;
	r->object_events = p->object_events;
	r->chunk_objects = p->chunk_objects;
	r->guard_backoffs = e.guard_backoffs;
	cp_objects__stats(p->objects, &os);
	r->backoff_doubtful = os.backoff_doubtful;
	r->backoff_unseen = os.backoff_unseen;
	r->have_alloc = e.have_alloc;
	r->soft = e.soft;
	r->alloc = e.alloc;
	r->live = e.live;
	r->exits = p->exits;
	r->objects_live = os.store.live;
	r->insns_dropped = cp_insn_store__dropped(p->insns);
	r->duration_s =
		e.end_ns > p->info.start_ns ? (double)(e.end_ns - p->info.start_ns) / 1e9 : 0;
	/* offline: the histories were recorded, the manager's figures are not */
	r->bp = p->hooks.bp_summary ? p->hooks.bp_summary(p->hooks.ctx) : NULL;
	r->end_reason = p->end.end_reason;
	r->procs = p->procs;
	r->callers.fn = cp_profile_insn_callers;
	r->callers.ctx = (void *)p;
	r->budget.plan = p->info.budget;
	r->budget.unit = p->info.unit;
	r->budget.spent = e.spent;
	r->agent = e.agent;
	cp_limits_fill(&p->lim, &(struct cp_limits_stores){p->sym, p->objects, p->procs}, p->misses,
		       p->insns, &r->limits);
	r->limits.stacks_held = cp_stack_store__held(p->stacks);
	r->limits.stacks_evicted = cp_stack_store__evicted(p->stacks);
	cp_shared_maps__stats(p->shared, &r->limits.shared);
}

int cp_profile_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz)
{
	struct cp_profile *p = ctx;
	struct cp_symbol_info info;

	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, ip, &info))
		return p->cfg.explain ? p->cfg.explain(p->cfg.explain_ctx, tgid, ip, buf, sz) : -1;
	cp_symbol_info_format(&info, buf, sz);
	return 0;
}

/* @info's innermost function, file and line into @out ("lib.so+0x1234" without a name). */
static void fill_loc(const struct cp_symbol_info *info, struct cp_src_loc *out)
{
	snprintf(out->module, sizeof(out->module), "%s", info->module ? info->module : "");
	if (info->function)
		snprintf(out->function, sizeof(out->function), "%s", info->function);
	else if (info->module)
		snprintf(out->function, sizeof(out->function), "%s+0x%llx",
			 cp_base_name(info->module), (unsigned long long)info->module_offset);
	snprintf(out->file, sizeof(out->file), "%s", info->file ? info->file : "");
	out->line = info->line;
}

/* cp_class_locate_fn over the symbolizer: the innermost function and its inline callers. */
static int class_locate(void *ctx, __u32 tgid, __u64 ip, struct cp_src_loc *out,
			struct cp_src_callers *callers)
{
	struct cp_profile *p = ctx;
	struct cp_symbol_info info;

	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, ip, &info))
		return -1;
	fill_loc(&info, out);
	for (__u32 i = 0; i < info.nr_inlined && info.function; i++) {
		const struct cp_inline_caller *ic = &info.inlined[i];
		struct cp_src_caller *c;

		if (callers->nr == CP_LOC_MAX_CALLERS) {
			callers->more = true;
			break;
		}
		c = &callers->c[callers->nr++];
		snprintf(c->function, sizeof(c->function), "%s",
			 ic->function ? ic->function : "??");
		snprintf(c->file, sizeof(c->file), "%s", ic->file ? cp_base_name(ic->file) : "");
		c->line = ic->line;
	}
	callers->more |= (info.flags & CP_SYM_INLINE_TRUNCATED) != 0;
	return info.function || info.file || info.module ? 0 : -1;
}

/*
 * A call site's frames as symbolized, before the allocator's and its
 * wrappers' go from the top: room for all that are shown and as many again.
 */
#define CP_FRAMES_MAX (2 * CP_ISSUE_MAX_FRAMES + 8)

struct frames {
	__u32 nr;
	bool more; /* there were more than CP_FRAMES_MAX */
	struct cp_src_loc v[CP_FRAMES_MAX];
};

/* The next of @max frames at @v (*@nr used), or NULL (and *@more) when they are full. */
static struct cp_src_loc *next_frame(struct cp_src_loc *v, __u32 max, __u32 *nr, bool *more)
{
	if (*nr >= max) {
		*more = true;
		return NULL;
	}
	return &v[(*nr)++];
}

void cp_profile_return_frames(struct cp_profile *p, __u32 tgid, __u64 ip, struct cp_src_loc *v,
			      __u32 max, __u32 *nr, bool *more)
{
	struct cp_symbol_info info;
	struct cp_src_loc *l = next_frame(v, max, nr, more);

	if (!l)
		return;
	/* a return address: the call is the instruction before it. An unknown
	 * frame stays, by address, so the frames around it keep their places. */
	if (cp_symbolizer__resolve(p->sym, (pid_t)tgid, ip - 1, &info) ||
	    !(info.function || info.file || info.module)) {
		snprintf(l->function, sizeof(l->function), "0x%llx", (unsigned long long)ip);
		return;
	}
	fill_loc(&info, l);
	for (__u32 i = 0; i < info.nr_inlined && info.function; i++) {
		const struct cp_inline_caller *c = &info.inlined[i];

		l->inlined = true;
		l = next_frame(v, max, nr, more);
		if (!l)
			return;
		snprintf(l->module, sizeof(l->module), "%s", info.module ? info.module : "");
		snprintf(l->function, sizeof(l->function), "%s", c->function ? c->function : "??");
		snprintf(l->file, sizeof(l->file), "%s", c->file ? c->file : "");
		l->line = c->line;
	}
}

/*
 * How many frames at the top of @f are the allocator's or its wrappers'
 * (objects/alloc_wrappers.h), to go: the first frame shown is the user's.
 * A stack of nothing else stays whole (0).
 */
static __u32 wrapper_frames(const struct cp_profile *p, const struct frames *f)
{
	__u32 k = 0;

	while (k < f->nr &&
	       cp_alloc_wrapper_frame(p->alloc_wrappers, f->v[k].function, f->v[k].file))
		k++;
	return k < f->nr ? k : 0;
}

/*
 * The allocation stack of call site @id: its caller (read apart, exact),
 * then the frames of its stack id above the caller. An allocator's stack,
 * taken at its return, begins at the caller. A system call's (mmap) begins
 * inside the wrapper that made it: the frames up to the caller are skipped;
 * a wrapper that sets up no frame of its own (a leaf, like glibc's mmap)
 * hides its caller from the frame-pointer walk, so the frame after the
 * wrapper's is the caller's caller. The allocator's frames at the top go,
 * then at most CP_ISSUE_MAX_FRAMES are shown. Returns how many went.
 */
static __u32 alloc_stack(struct cp_profile *p, __u32 tgid, __u64 id, struct cp_issue_object *out)
{
	const struct cp_callsite *cs = cp_objects__callsite_get(p->objects, (pid_t)tgid, id);
	size_t n = 0, i = 0;
	const __u64 *ips = cp_objects__callsite_stack(p->objects, (pid_t)tgid, id, &n);
	struct frames *f;
	__u32 k;

	if (!cs || !cs->caller)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return 0;
	while (i < n && ips[i] != cs->caller)
		i++;
	cp_profile_return_frames(p, tgid, cs->caller, f->v, CP_FRAMES_MAX, &f->nr, &f->more);
	for (i = i < n ? i + 1 : 1; i < n; i++)
		cp_profile_return_frames(p, tgid, ips[i], f->v, CP_FRAMES_MAX, &f->nr, &f->more);
	k = wrapper_frames(p, f);
	out->nr_frames = f->nr - k < CP_ISSUE_MAX_FRAMES ? f->nr - k : CP_ISSUE_MAX_FRAMES;
	memcpy(out->alloc_stack, f->v + k, out->nr_frames * sizeof(out->alloc_stack[0]));
	out->more_frames = f->more || f->nr - k > CP_ISSUE_MAX_FRAMES;
	free(f);
	return k;
}

/* cp_report.alloc_site: the first frame alloc_stack() shows, when frames went before it. */
static int report_alloc_site(void *ctx, __u32 tgid, __u64 callsite, char *buf, size_t sz)
{
	struct cp_issue_object *o = calloc(1, sizeof(*o));
	const struct cp_src_loc *l;
	int ret = -1;

	if (!o)
		return -1;
	if (alloc_stack(ctx, tgid, callsite, o) && o->nr_frames) {
		l = &o->alloc_stack[0];
		if (l->file[0] && l->line)
			snprintf(buf, sz, "%s (%s:%u)", l->function, cp_base_name(l->file),
				 l->line);
		else
			snprintf(buf, sz, "%s", l->function);
		ret = 0;
	}
	free(o);
	return ret;
}

/* The shared file of line space @space as an object: its offsets are the file's. */
static int shared_file_object(const struct cp_profile *p, __u32 space, struct cp_issue_object *out)
{
	struct cp_shared_file f;

	out->kind = CP_OBJ_MAPPING;
	out->nr_objects = 1;
	if (cp_shared_maps__file(p->shared, space, &f)) {
		snprintf(out->name, sizeof(out->name), "shared file no longer followed");
		return 0;
	}
	out->size = f.mapped;
	snprintf(out->name, sizeof(out->name), "%s", f.name);
	return 0;
}

/*
 * cp_class_object_fn: the heap object or mapping a sample or a breakpoint
 * history found at @addr (user/profile/seen_objects.h), else the process objects at
 * report time (globals, stacks, what lives on). Its allocation stack: the call
 * site's frames (user/objects/callsites.h).
 */
static int class_object(void *ctx, __u32 tgid, __u64 addr, struct cp_issue_object *out)
{
	struct cp_profile *p = ctx;
	struct cp_seen_object so;
	struct cp_resolved r, m;

	/* a shared file's line: @addr is an offset in the file (profile/shared_maps.h) */
	if (cp_space_is_file(tgid))
		return shared_file_object(p, tgid, out);
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
	} else if (cp_objects__resolve(p->objects, (pid_t)tgid, addr, &r)) {
		return -1;
	}
	out->kind = r.kind;
	out->start = r.start;
	/* memory no allocation was seen for: its mapping's size is no object's */
	out->size = r.kind == CP_OBJ_UNKNOWN ? 0 : r.size;
	out->callsite = r.callsite;
	out->nr_objects = 1;
	out->flags = r.flags;
	snprintf(out->name, sizeof(out->name), "%s", r.name);
	/*
	 * a mapping of a file (shared memory too): the file, as /proc/PID/maps
	 * names it; a seen object has no path, resolving gives it
	 */
	if (r.kind == CP_OBJ_MAPPING && !r.path[0] &&
	    !cp_objects__resolve(p->objects, (pid_t)tgid, addr, &m) && m.kind == CP_OBJ_MAPPING)
		memcpy(r.path, m.path, sizeof(r.path));
	if (r.kind == CP_OBJ_MAPPING && r.path[0])
		snprintf(out->name, sizeof(out->name), "%.*s", (int)sizeof(out->name) - 1, r.path);
	if (r.flags & CP_OBJ_F_CHUNK)
		out->before_attach = !p->info.launched;
	/* an allocator whose metadata we do not read: say so, name no object */
	if (r.kind == CP_OBJ_UNKNOWN && r.before_attach && r.allocator != CP_ALLOCATOR_LIBC &&
	    r.allocator != CP_ALLOCATOR_EXEC)
		snprintf(out->allocator, sizeof(out->allocator), "%s",
			 cp_allocator_kind_name((enum cp_allocator_kind)r.allocator));
	if (r.tid) {
		out->nr_tids = 1;
		out->alloc_tids[0] = r.tid;
	}
	if (r.callsite)
		alloc_stack(p, tgid, r.callsite, out);
	return 0;
}

/*
 * The caches a report assumes: @geo, or when it is NULL (offline) the
 * ones the run assumed, as its recording says, filled into @recorded.
 */
static const struct cp_geometry *report_geometry(const struct cp_profile *p,
						 const struct cp_geometry *geo,
						 struct cp_geometry *recorded)
{
	if (geo)
		return geo;
	memset(recorded, 0, sizeof(*recorded));
	memcpy(recorded->slot, p->info.cache, sizeof(recorded->slot));
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++)
		recorded->source[s] = CP_GEO_RECORDED;
	return recorded;
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
		.soft = cp_source_of(p->info.source)->by_time,
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

int cp_profile__summary(struct cp_profile *p, const struct cp_geometry *geo,
			const struct cp_classify_cfg *cfg, struct cp_summary *out)
{
	const struct cp_insn_store *insns = p->insns;
	const struct cp_miss_store *misses = p->misses;
	__u64 end_ns;
	int ret;

	memset(out, 0, sizeof(*out));
	cp_profile__fill_report(p, &out->report);
	/* soft sources judge capacity by the cache a stream exceeds: the window as the run */
	out->report.geo = report_geometry(p, geo, &out->geo);
	out->run_s = out->report.duration_s;
	out->run_bpf = out->report.bpf;
	out->window_s = out->report.duration_s;
	if (p->roll) {
		/* the counters of the window ending now, not of the run */
		ret = cp_rolling__window(p->roll, p->insns, &out->report.bpf, &out->win);
		if (ret)
			return ret;
		end_ns = cp_now_ns();
		insns = out->win.insns;
		misses = out->win.misses;
		out->report.bpf = out->win.bpf;
		out->report.insns = insns;
		out->report.objects = NULL; /* samples per object are the run's */
		out->window_s =
			end_ns > out->win.start_ns ? (double)(end_ns - out->win.start_ns) / 1e9 : 0;
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
	cp_roll_window_free(&s->win);
}

int cp_profile__judge(struct cp_profile *p, const struct cp_geometry *geo,
		      const struct cp_classify_cfg *cfg, struct cp_report *r,
		      struct cp_geometry *recorded, struct cp_classification *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	memset(r, 0, sizeof(*r));
	cp_profile__fill_report(p, r);
	r->geo = report_geometry(p, geo, recorded);
	r->top = cfg->top;
	r->classify_cfg = cfg;
	ret = cp_profile__classify(p, r, cfg, out);
	if (!ret)
		r->issues = out;
	return ret;
}
