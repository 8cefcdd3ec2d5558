// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON report (see report_json.h and docs/json.md). */
#include <stdlib.h>

#include "classify/issue.h"
#include "util/json_writer.h"
#include "report/report_agent.h"
#include "report/report_json.h"

void cp_report_geometry_json(struct cp_json *j, const struct cp_geometry *geo)
{
	static const char *const keys[CP_CACHE_NR_SLOTS] = {"l1d", "l2", "llc"};

	cp_json_object(j, "geometry");
	for (int s = 0; geo && s < CP_CACHE_NR_SLOTS; s++) {
		const struct cp_cache_level *l = &geo->slot[s];

		cp_json_object(j, keys[s]);
		cp_json_u64(j, "size", l->size_bytes);
		cp_json_u64(j, "ways", l->ways);
		cp_json_u64(j, "sets", l->sets);
		cp_json_u64(j, "line", l->line_bytes);
		cp_json_str(j, "from", cp_geo_source_name(geo->source[s]));
		cp_json_end(j);
	}
	cp_json_end(j);
}

/* Samples lost before they could be counted or classified. */
static __u64 dropped_samples(const struct cp_report *r)
{
	return r->bpf.drop_ringbuf + r->bpf.drop_ipmap + r->bpf.drop_window +
	       (r->insns ? cp_insn_store__dropped(r->insns) : 0);
}

static void put_totals(struct cp_json *j, const struct cp_report *r)
{
	const struct cp_stats *b = &r->bpf;

	cp_json_object(j, "totals");
	cp_json_u64(j, "load_samples", b->samples[CP_ACCESS_LOAD]);
	cp_json_u64(j, "store_samples", b->samples[CP_ACCESS_STORE]);
	cp_json_u64(j, "load_misses", b->misses[CP_ACCESS_LOAD]);
	cp_json_u64(j, "store_misses", b->misses[CP_ACCESS_STORE]);
	cp_json_u64(j, "level_unknown", b->na[CP_ACCESS_LOAD] + b->na[CP_ACCESS_STORE]);
	cp_json_u64(j, "forwarded", b->forwarded);
	cp_json_u64(j, "filtered", b->filtered);
	cp_json_u64(j, "dropped", dropped_samples(r));
	cp_json_u64(j, "ticks", b->ticks);
	cp_json_u64(j, "ticks_kernel", b->ticks_kernel);
	cp_json_u64(j, "ticks_skid", b->ticks_skid);
	cp_json_u64(j, "kernel_samples", b->kernel_ip);
	cp_json_end(j);
}

static void put_drops(struct cp_json *j, const struct cp_report *r)
{
	const struct cp_stats *b = &r->bpf;

	cp_json_object(j, "drops");
	cp_json_u64(j, "ring_buffer", b->drop_ringbuf);
	cp_json_u64(j, "counter_map", b->drop_ipmap);
	cp_json_u64(j, "window", b->drop_window);
	cp_json_u64(j, "instruction_store", r->insns ? cp_insn_store__dropped(r->insns) : 0);
	cp_json_u64(j, "target_filter", b->drop_targets);
	cp_json_u64(j, "proc_records", b->drop_proc);
	cp_json_u64(j, "object_table", r->objects ? cp_object_stats__dropped(r->objects) : 0);
	cp_json_u64(j, "malformed_records", r->malformed);
	cp_json_u64(j, "unknown_records", r->unknown);
	cp_json_u64(j, "records_received", r->received);
	cp_json_u64(j, "period_changes", r->period_changes);
	cp_json_u64(j, "kernel_throttles", r->throttles);
	cp_json_u64(j, "soft_pending_full", b->drop_pending);
	cp_json_u64(j, "soft_descriptors_full", r->soft.drop_insns);
	cp_json_u64(j, "stack_map", b->drop_stack_map);
	cp_json_u64(j, "stack_counter_map", b->drop_stack_counts);
	cp_json_u64(j, "no_user_stack", b->no_ustack);
	cp_json_u64(j, "stack_lost_at_take", r->live.stacks_lost);
	cp_json_u64(j, "stack_store_evicted", r->limits.stacks_evicted);
	cp_json_u64(j, "bpf_recursion_misses", r->live.recursion_misses);
	cp_json_object(j, "bpf_recursion_misses_by_program");
	for (__u32 i = 0; i < r->live.nr_progs; i++)
		cp_json_u64(j, r->live.progs[i].name, r->live.progs[i].misses);
	cp_json_end(j);
	if (r->have_alloc) {
		cp_json_u64(j, "alloc_events_applied", r->object_events);
		cp_json_u64(j, "alloc_ring_buffer", r->alloc.bpf.drop_ringbuf);
		cp_json_u64(j, "alloc_live_map_full", r->alloc.bpf.drop_live_full);
		cp_json_u64(j, "alloc_entry_map_full", r->alloc.bpf.drop_entry_full);
		cp_json_u64(j, "alloc_stack_errors", r->alloc.bpf.stack_errors);
		cp_json_u64(j, "alloc_stacks_missing", r->live.alloc_stacks_missing);
		cp_json_u64(j, "alloc_guard_backoffs", r->guard_backoffs);
		cp_json_u64(j, "alloc_syscall_windows_skipped", r->alloc.syscall_windows_skipped);
	}
	cp_json_end(j);
}

/* function, file, line of @l (and its module, @with_module); null what is unknown. */
static void put_loc(struct cp_json *j, const struct cp_src_loc *l, bool known, bool with_module)
{
	if (with_module)
		cp_json_str(j, "module", known && l->module[0] ? l->module : NULL);
	cp_json_str(j, "function", known && l->function[0] ? l->function : NULL);
	cp_json_str(j, "file", known && l->file[0] ? l->file : NULL);
	if (known && l->line)
		cp_json_u64(j, "line", l->line);
	else
		cp_json_null(j, "line");
}

/* "inlined_from": the functions an instruction's was inlined into, innermost first. */
static void put_callers(struct cp_json *j, const struct cp_src_callers *cs, bool known)
{
	cp_json_array(j, "inlined_from");
	for (__u32 i = 0; known && i < cs->nr && i < CP_LOC_MAX_CALLERS; i++) {
		cp_json_object(j, NULL);
		cp_json_str(j, "function", cs->c[i].function);
		cp_json_str(j, "file", cs->c[i].file[0] ? cs->c[i].file : NULL);
		if (cs->c[i].line)
			cp_json_u64(j, "line", cs->c[i].line);
		else
			cp_json_null(j, "line");
		cp_json_end(j);
	}
	cp_json_end(j);
}

/* [[first, last], ...]: the runs of set bits of @mask, as byte offsets. */
static void put_byte_runs(struct cp_json *j, const char *key, __u64 mask)
{
	int b, e;

	cp_json_array(j, key);
	for (b = cp_byte_run(mask, 0, &e); b >= 0; b = cp_byte_run(mask, e + 1, &e)) {
		cp_json_array(j, NULL);
		cp_json_u64(j, NULL, (__u64)b);
		cp_json_u64(j, NULL, (__u64)e);
		cp_json_end(j);
	}
	cp_json_end(j);
}

/* {function, file, line, inlined} of each frame, innermost first. */
static void put_frames(struct cp_json *j, const char *key, const struct cp_src_loc *v, __u32 n)
{
	cp_json_array(j, key);
	for (__u32 i = 0; i < n; i++) {
		cp_json_object(j, NULL);
		put_loc(j, &v[i], true, false);
		cp_json_bool(j, "inlined", v[i].inlined);
		cp_json_end(j);
	}
	cp_json_end(j);
}

/* "callers": the paths into @in's line, most first: {share, count, unit, frames, more_frames}. */
static void put_insn_callers(struct cp_json *j, const struct cp_issue_insn *in,
			     const struct cp_callers_view *v)
{
	unsigned int max = v && v->top > CP_CALLERS_JSON_MIN ? v->top : CP_CALLERS_JSON_MIN;
	struct cp_insn_callers c = {0};

	cp_json_array(j, "callers");
	c.paths = v && v->fn ? calloc(max, sizeof(*c.paths)) : NULL;
	if (c.paths && !v->fn(v->ctx, in, max, &c) && c.total) {
		for (__u32 i = 0; i < c.nr; i++) {
			const struct cp_caller_path *cp = &c.paths[i];

			cp_json_object(j, NULL);
			cp_json_double(j, "share", (double)cp->count / (double)c.total, 4);
			cp_json_u64(j, "count", cp->count);
			cp_json_str(j, "unit", c.unit);
			put_frames(j, "frames", cp->frames, cp->nr_frames);
			cp_json_bool(j, "more_frames", cp->more);
			cp_json_end(j);
		}
	}
	free(c.paths);
	cp_json_end(j);
}

static void put_object(struct cp_json *j, const struct cp_issue_object *o)
{
	cp_json_object(j, NULL);
	cp_json_str(j, "kind", cp_object_kind_name(o->kind));
	cp_json_u64(j, "size", o->size);
	cp_json_str(j, "name", o->name[0] ? o->name : NULL);
	cp_json_hex(j, "start", o->start);
	cp_json_u64(j, "count", o->nr_objects);
	cp_json_u64(j, "refs", o->refs);
	/* only where they apply: reports without them keep their keys */
	if (o->flags & CP_OBJ_F_CHUNK) {
		cp_json_str(j, "found_by", "glibc_chunk");
		cp_json_bool(j, "before_attach", o->before_attach);
	}
	if (o->allocator[0])
		cp_json_str(j, "allocator", o->allocator);
	put_frames(j, "alloc_stack", o->alloc_stack,
		   o->nr_frames < CP_ISSUE_MAX_FRAMES ? o->nr_frames : CP_ISSUE_MAX_FRAMES);
	cp_json_array(j, "alloc_tids");
	for (__u32 i = 0; i < o->nr_tids && i < CP_ISSUE_MAX_TIDS; i++)
		cp_json_u64(j, NULL, o->alloc_tids[i]);
	cp_json_end(j);
	cp_json_end(j);
}

static void put_sharing(struct cp_json *j, const struct cp_issue *is)
{
	const struct cp_issue_sharing *s = &is->sharing;
	__u32 pids[CP_ISSUE_MAX_PIDS];
	size_t nr_pids = cp_issue_pids(is, pids);

	cp_json_object(j, "sharing");
	cp_json_hex(j, "line", s->line_addr);
	/* true: "line" is an offset in a file several processes map shared */
	cp_json_bool(j, "line_in_file", cp_space_is_file(s->line_space));
	cp_json_u64(j, "line_bytes", s->line_bytes);
	cp_json_u64(j, "lines", s->nr_lines);
	cp_json_u64(j, "line_misses", s->line_misses);
	cp_json_u64(j, "object_size", s->object_size);
	cp_json_array(j, "threads");
	for (__u32 i = 0; i < s->nr_threads && i < CP_LINE_MAX_THREADS; i++) {
		cp_json_object(j, NULL);
		cp_json_u64(j, "tid", s->thr[i].tid);
		cp_json_u64(j, "pid", s->thr[i].pid ? s->thr[i].pid : is->tgid);
		cp_json_u64(j, "accesses", s->thr[i].accesses);
		put_byte_runs(j, "read_bytes", s->thr[i].read_mask);
		put_byte_runs(j, "write_bytes", s->thr[i].write_mask);
		cp_json_end(j);
	}
	cp_json_end(j);
	cp_json_u64(j, "other_threads_accesses", s->more_threads);
	/* more than one: sharing between processes, on memory they map shared */
	cp_json_array(j, "pids");
	for (size_t i = 0; i < nr_pids; i++)
		cp_json_u64(j, NULL, pids[i]);
	cp_json_end(j);
	/* a line both truly and falsely shared: the bytes the line's other issue has */
	put_byte_runs(j, "other_part_bytes", s->other_part);
	cp_json_end(j);
}

/* One key of an evidence object. */
struct u64_field {
	const char *key;
	__u64 v;
};

static void put_u64s(struct cp_json *j, const struct u64_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cp_json_u64(j, f[i].key, f[i].v);
}

static void put_conflict(struct cp_json *j, const struct cp_issue_conflict *c)
{
	const struct u64_field f[] = {
		{"set", c->set},
		{"ways", c->ways},
		{"accesses", c->accesses},
		{"history", c->history},
		{"distinct_lines", c->distinct_lines},
		{"set_misses", c->set_misses},
	};

	cp_json_object(j, "conflict");
	put_u64s(j, f, sizeof(f) / sizeof(f[0]));
	cp_json_end(j);
}

static void put_stream(struct cp_json *j, const struct cp_issue_capacity *c)
{
	const struct u64_field f[] = {
		{"footprint", c->footprint},
		{"object_size", c->object_bytes},
		{"sampled_lines", c->sampled_lines},
		{"level_size", c->level_bytes},
	};

	cp_json_object(j, "stream");
	cp_json_i64(j, "stride", c->stride);
	put_u64s(j, f, sizeof(f) / sizeof(f[0]));
	cp_json_str(j, "level", cp_cache_slot_name(c->level));
	cp_json_end(j);
}

static void put_issue(struct cp_json *j, const struct cp_issue *is,
		      const struct cp_callers_view *callers)
{
	cp_json_object(j, NULL);
	cp_json_str(j, "type", cp_issue_type_name(is->type));
	cp_json_str(j, "origin", cp_issue_origin_name(is->origin));
	cp_json_u64(j, "pid", is->tgid);
	cp_json_double(j, "score", is->score, 4);
	cp_json_double(j, "misses_per_s", is->misses_per_s, 0);
	if (is->have_cost)
		cp_json_double(j, "cost_cycles_per_s", is->cost_cycles_per_s, 0);
	else
		cp_json_null(j, "cost_cycles_per_s");
	cp_json_u64(j, "samples", is->samples);
	cp_json_u64(j, "misses", is->misses);
	cp_json_array(j, "instructions");
	for (__u32 i = 0; i < is->nr_insns && i < CP_ISSUE_MAX_INSNS; i++) {
		const struct cp_issue_insn *in = &is->insns[i];

		cp_json_object(j, NULL);
		cp_json_hex(j, "ip", in->ip);
		/* the issue's process, or another sharing its memory */
		cp_json_u64(j, "pid", in->tgid);
		put_loc(j, &in->loc, in->have_loc, true);
		put_callers(j, &in->callers, in->have_loc);
		cp_json_u64(j, "samples", in->samples);
		cp_json_u64(j, "misses", in->misses);
		cp_json_u64(j, "ips", in->nr_ips);
		put_insn_callers(j, in, callers);
		cp_json_end(j);
	}
	cp_json_end(j);
	cp_json_u64(j, "more_instructions", is->more_insns);
	cp_json_array(j, "objects");
	for (__u32 i = 0; i < is->nr_objects && i < CP_ISSUE_MAX_OBJECTS; i++)
		put_object(j, &is->objects[i]);
	cp_json_end(j);
	cp_json_u64(j, "more_objects", is->more_objects);
	if (is->type == CP_ISSUE_FALSE_SHARING || is->type == CP_ISSUE_TRUE_SHARING)
		put_sharing(j, is);
	if (is->type == CP_ISSUE_CONFLICT)
		put_conflict(j, &is->conflict);
	if (is->type == CP_ISSUE_CAPACITY && is->capacity.stream)
		put_stream(j, &is->capacity);
	cp_json_str(j, "hint", is->hint);
	cp_json_end(j);
}

static void put_targets(struct cp_json *j, const struct cp_report *r)
{
	cp_json_bool(j, "system_wide", r->nr_targets == 0);
	cp_json_array(j, "targets");
	for (int i = 0; i < r->nr_targets; i++) {
		cp_json_object(j, NULL);
		cp_json_u64(j, "pid", (__u64)r->targets[i].pid);
		cp_json_str(j, "comm", r->targets[i].comm);
		cp_json_end(j);
	}
	cp_json_end(j);
	cp_json_u64(j, "followed", r->bpf.followed);
	cp_json_u64(j, "execs", r->execs);
	cp_json_u64(j, "exits", r->exits);
}

int cp_report_json(const struct cp_report *r, const struct cp_classification *c, FILE *f)
{
	struct cp_json j;

	cp_json_init(&j, f);
	cp_json_object(&j, NULL);
	cp_json_u64(&j, "version", CP_JSON_VERSION);
	cp_json_str(&j, "source", r->source);
	cp_json_str(&j, "source_reason", r->source_reason);
	cp_json_str(&j, "impact", c && c->soft ? "time_share" : "miss_share");
	cp_json_str(&j, "note", c && c->soft ? CP_SOFT_NOTE : NULL);
	cp_json_double(&j, "duration_s", r->duration_s, 3);
	cp_json_str(&j, "end_reason", r->end_reason);
	put_targets(&j, r);
	cp_report_geometry_json(&j, r->geo);
	put_totals(&j, r);
	cp_json_object(&j, "filter");
	cp_json_bool(&j, "applies", c && c->app_filter_applies);
	cp_json_bool(&j, "passed", c && c->app_filter_passed);
	cp_json_double(&j, "load_miss_ratio", c ? c->load_miss_ratio : 0, 4);
	cp_json_double(&j, "store_miss_ratio", c ? c->store_miss_ratio : 0, 4);
	cp_json_end(&j);
	cp_json_array(&j, "issues");
	for (size_t i = 0; c && i < c->nr_issues; i++)
		put_issue(&j, &c->issues[i], &r->callers);
	cp_json_end(&j);
	cp_json_u64(&j, "suppressed", c ? c->suppressed : 0);
	cp_json_u64(&j, "beyond_top", c ? c->beyond_top : 0);
	if (c && c->soft) {
		cp_json_u64(&j, "time_samples", c->time_samples);
		cp_json_u64(&j, "unproven", c->unproven);
		cp_json_u64(&j, "unproven_no_history", c->unproven_no_history);
	}
	put_drops(&j, r);
	cp_report_procs_json(&j, r->nr_targets ? NULL : r->procs,
			     r->top ? r->top : CP_REPORT_TOP_DEFAULT);
	cp_report_limits_json(&j, &r->limits);
	cp_report_budget_json(&j, &r->budget);
	cp_report_agent_json(&j, &r->agent);
	cp_json_end(&j);
	if (cp_json_finish(&j))
		return -1;
	return fflush(f) ? -1 : 0;
}
