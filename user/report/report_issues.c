// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The issues section of the text report (pure: classification in, text out). */
#include <stdlib.h>
#include <string.h>

#include "classify/issue.h"
#include "report/report_issues.h"
#include "util/path.h"
#include "util/printable.h"

/* The names in @loc as they may be printed: the target chose them (printable.h). */
struct shown_loc {
	char file[CP_LOC_FILE_LEN];
	char function[CP_LOC_FUNCTION_LEN];
	char module[CP_LOC_MODULE_LEN];
};

static void show_loc(const struct cp_src_loc *loc, struct shown_loc *s)
{
	cp_printable(cp_base_name(loc->file), s->file, sizeof(s->file));
	cp_printable(loc->function, s->function, sizeof(s->function));
	cp_printable(cp_base_name(loc->module), s->module, sizeof(s->module));
}

/* " <- lr.c: 155 (main)" for each function the instruction's was inlined into. */
static void print_callers(const struct cp_src_callers *cs, FILE *f)
{
	for (__u32 i = 0; i < cs->nr && i < CP_LOC_MAX_CALLERS; i++) {
		char fn[CP_LOC_CALLER_LEN], file[CP_LOC_CALLER_LEN];

		cp_printable(cs->c[i].function, fn, sizeof(fn));
		cp_printable(cs->c[i].file, file, sizeof(file));
		if (file[0] && cs->c[i].line)
			fprintf(f, " \u2190 %s: %u (%s)", file, cs->c[i].line, fn);
		else
			fprintf(f, " \u2190 %s", fn);
	}
	if (cs->more)
		fprintf(f, " \u2190 \u2026");
}

/* "work.c: 94 (worker)", "worker (work)", or "0x401234" for what is known. */
static void print_loc(const struct cp_src_loc *loc, bool have, __u64 ip, FILE *f)
{
	struct shown_loc s;

	show_loc(loc, &s);
	if (have && loc->file[0] && loc->line)
		fprintf(f, "%s: %u", s.file, loc->line);
	else if (have && loc->function[0])
		fprintf(f, "%s", s.function);
	else
		fprintf(f, "0x%llx", (unsigned long long)ip);
	if (have && loc->function[0] && loc->file[0] && loc->line)
		fprintf(f, " (%s)", s.function);
	if (have && !(loc->file[0] && loc->line) && loc->module[0])
		fprintf(f, " in %s", s.module);
}

/*
 * "work.c: 94 (worker)", "worker (work)", or "0x401234" for what is known;
 * code inlined: "stddefines.h: 58 (CALLOC) <- lr.c: 155 (main)".
 */
static void print_insn_loc(const struct cp_issue_insn *in, FILE *f)
{
	print_loc(&in->loc, in->have_loc, in->ip, f);
	if (in->have_loc)
		print_callers(&in->callers, f);
}

/* What the counts of @soft issues are: ticks on accesses, not misses. */
static const char *unit(bool soft)
{
	return soft ? "samples" : "misses";
}

/* An allocation frame: "f (file.c:12)", "f in lib.so", "f" or "0x7f...". */
static void print_frame(const struct cp_src_loc *loc, FILE *f)
{
	struct shown_loc s;

	show_loc(loc, &s);
	fprintf(f, "%s", loc->function[0] ? s.function : "??");
	if (loc->file[0] && loc->line)
		fprintf(f, " (%s:%u)", s.file, loc->line);
	else if (loc->module[0])
		fprintf(f, " in %s", s.module);
}

/* "f (a.c:3) ← g (a.c:9) ← …": a call path's frames, innermost first. */
static void print_path(const struct cp_caller_path *cp, FILE *f)
{
	if (!cp->nr_frames)
		fprintf(f, "(no caller frames)");
	for (__u32 k = 0; k < cp->nr_frames && k < CP_CALLER_MAX_FRAMES; k++) {
		fprintf(f, "%s", k ? " \u2190 " : "");
		print_frame(&cp->frames[k], f);
	}
	if (cp->more)
		fprintf(f, " \u2190 \u2026");
}

/*
 *       called from (2 of 3 paths; 96 samples with a stack):
 *         66.7 %  b (w.c:30) ← main (w.c:50)
 */
static void print_insn_callers(const struct cp_issue_insn *in, const struct cp_callers_view *v,
			       FILE *f)
{
	struct cp_insn_callers c = {0};

	if (!v || !v->top || !v->fn)
		return;
	c.paths = calloc(v->top, sizeof(*c.paths));
	if (!c.paths || v->fn(v->ctx, in, v->top, &c) || !c.total) {
		free(c.paths);
		return;
	}
	fprintf(f, "      called from (%u of %u paths; %llu %s with a stack):\n", c.nr, c.nr_paths,
		(unsigned long long)c.total, c.unit);
	for (__u32 i = 0; i < c.nr; i++) {
		fprintf(f, "        %5.1f %%  ",
			100.0 * (double)c.paths[i].count / (double)c.total);
		print_path(&c.paths[i], f);
		fprintf(f, "\n");
	}
	free(c.paths);
}

static void print_insns(const struct cp_issue *is, bool soft, const struct cp_callers_view *v,
			FILE *f)
{
	__u32 pids[CP_ISSUE_MAX_PIDS];
	bool procs = cp_issue_pids(is, pids) > 1; /* sharing between processes */

	if (is->nr_insns == 1 && !is->more_insns) {
		fprintf(f, ", accessed by the instruction at:\n    - ");
		print_insn_loc(&is->insns[0], f);
		fprintf(f, "\n");
		print_insn_callers(&is->insns[0], v, f);
		return;
	}
	fprintf(f, ", accessed by:\n");
	for (__u32 i = 0; i < is->nr_insns; i++) {
		const struct cp_issue_insn *in = &is->insns[i];

		fprintf(f, "    #%u instruction at: ", i);
		print_insn_loc(in, f);
		fprintf(f, "  (%llu %s", (unsigned long long)in->misses, unit(soft));
		if (in->nr_ips > 1)
			fprintf(f, ", %u instructions", in->nr_ips);
		if (procs)
			fprintf(f, ", process %u", in->tgid);
		fprintf(f, ")\n");
		print_insn_callers(in, v, f);
	}
	if (is->more_insns)
		fprintf(f, "    ... and %u more source lines\n", is->more_insns);
}

/*
 * "the heap object (1056 bytes)", "3 heap objects (8 bytes)", "the global
 * variable hits (8 bytes)", "the heap object at 0x5555555592a0 (104 bytes,
 * glibc chunk)".
 */
static void object_head(const struct cp_issue_object *o, FILE *f)
{
	const char *kind = cp_object_kind_name(o->kind);
	unsigned long long size = (unsigned long long)o->size;
	char name[sizeof(o->name)], allocator[sizeof(o->allocator)];

	cp_printable(o->name, name, sizeof(name));
	cp_printable(o->allocator, allocator, sizeof(allocator));

	switch (o->kind) {
	case CP_OBJ_HEAP:
		/* from glibc's chunk headers: where it is, its usable size; no call site */
		if (o->flags & CP_OBJ_F_CHUNK)
			fprintf(f, "the heap object at 0x%llx (%llu bytes, glibc chunk)",
				(unsigned long long)o->start, size);
		else if (o->nr_objects > 1)
			fprintf(f, "%u heap objects (%llu bytes)", o->nr_objects, size);
		else
			fprintf(f, "the heap object (%llu bytes)", size);
		break;
	case CP_OBJ_GLOBAL:
	case CP_OBJ_TLS:
		fprintf(f, "the %s variable %s (%llu bytes)",
			o->kind == CP_OBJ_TLS ? "thread-local" : "global", name, size);
		break;
	case CP_OBJ_UNKNOWN:
		fprintf(f, "memory %s with no allocation seen", o->name[0] ? name : "?");
		if (o->allocator[0])
			fprintf(f, " (%s: its metadata is not read, so no object is named)",
				allocator);
		break;
	default:
		/* an anonymous mapping's name is its kind: say it once */
		if (!o->name[0] || strcmp(o->name, kind) == 0)
			fprintf(f, "the %s (%llu bytes)", kind, size);
		else
			fprintf(f, "the %s %s (%llu bytes)", kind, name, size);
		break;
	}
}

/* "the heap object (1056 bytes) allocated by thread 100 at f (a.c:3) ← g (a.c:9)". */
static void print_object(const struct cp_issue_object *o, FILE *f)
{
	object_head(o, f);
	if (o->nr_tids > 1)
		fprintf(f, " allocated by different threads (");
	else if (o->nr_tids)
		fprintf(f, " allocated by thread ");
	for (__u32 t = 0; t < o->nr_tids; t++)
		fprintf(f, "%s%u", t ? ", " : "", o->alloc_tids[t]);
	if (o->nr_tids > 1)
		fprintf(f, ")");
	if (o->nr_frames)
		fprintf(f, o->nr_tids ? " at " : " allocated at ");
	for (__u32 k = 0; k < o->nr_frames && k < CP_ISSUE_MAX_FRAMES; k++) {
		fprintf(f, "%s", k ? " \u2190 " : "");
		print_frame(&o->alloc_stack[k], f);
	}
	if (o->nr_frames && o->more_frames)
		fprintf(f, " \u2190 \u2026");
	if (o->flags & CP_OBJ_F_CHUNK)
		fprintf(f, o->before_attach
				   ? " allocated before profiling began, call site unknown"
				   : " allocated where no probe saw it, call site unknown");
	fprintf(f, "\n");
}

static void print_objects(const struct cp_issue *is, FILE *f)
{
	if (!is->nr_objects)
		return;
	if (is->nr_objects == 1 && !is->more_objects) {
		fprintf(f, "  Related to ");
		print_object(&is->objects[0], f);
		return;
	}
	fprintf(f, "  Related to multiple objects%s:\n",
		is->origin == CP_ORIGIN_ALLOCATOR ? " placed by the allocator" : "");
	for (__u32 i = 0; i < is->nr_objects; i++) {
		fprintf(f, "    # %u ", i);
		print_object(&is->objects[i], f);
	}
	if (is->more_objects)
		fprintf(f, "    ... and %u more\n", is->more_objects);
}

static void print_evidence(const struct cp_issue *is, bool soft, FILE *f)
{
	const struct cp_issue_sharing *sh = &is->sharing;
	__u32 pids[CP_ISSUE_MAX_PIDS];
	bool procs = cp_issue_pids(is, pids) > 1; /* sharing between processes */
	char w[160], r[160];

	if (is->type == CP_ISSUE_FALSE_SHARING || is->type == CP_ISSUE_TRUE_SHARING) {
		/* processes map a shared file at addresses of their own: its offset */
		fprintf(f,
			cp_space_is_file(sh->line_space) ? "  Line at offset 0x%llx of the file"
							 : "  Line 0x%llx",
			(unsigned long long)sh->line_addr);
		fprintf(f, " (%llu %s", (unsigned long long)sh->line_misses, unit(soft));
		if (sh->nr_lines > 1)
			fprintf(f, "; %u shared lines in all", sh->nr_lines);
		fprintf(f, "), bytes of the line:\n");
		for (__u32 i = 0; i < sh->nr_threads; i++) {
			cp_byte_ranges(sh->thr[i].write_mask, 0, w, sizeof(w));
			cp_byte_ranges(sh->thr[i].read_mask, 0, r, sizeof(r));
			fprintf(f, "    thread %u", sh->thr[i].tid);
			if (procs)
				fprintf(f, " of process %u", sh->thr[i].pid);
			fprintf(f, ": wrote %s, read %s (%u %s)\n", w, r, sh->thr[i].accesses,
				unit(soft));
		}
		if (sh->more_threads)
			fprintf(f, "    other threads: %u %s\n", sh->more_threads, unit(soft));
	} else if (is->type == CP_ISSUE_CONFLICT) {
		fprintf(f,
			"  Access history: %u of %u accesses on L1 set %u, %u distinct lines "
			"for %u ways\n",
			is->conflict.accesses, is->conflict.history, is->conflict.set,
			is->conflict.distinct_lines, is->conflict.ways);
	} else if (is->type == CP_ISSUE_CAPACITY && is->capacity.stream) {
		const struct cp_issue_capacity *c = &is->capacity;

		fprintf(f,
			"  Access history: a stream with a stride of %lld bytes; footprint "
			"%llu KiB (%s) > %s %llu KiB\n",
			(long long)c->stride, (unsigned long long)(c->footprint >> 10),
			c->object_bytes ? "one pass over the object" : "distinct lines sampled",
			cp_cache_slot_name(c->level), (unsigned long long)(c->level_bytes >> 10));
	}
}

void cp_report_issue_print(size_t n, const struct cp_issue *is, bool soft,
			   const struct cp_callers_view *v, FILE *f)
{
	char hint[sizeof(is->hint)];
	__u32 pids[CP_ISSUE_MAX_PIDS];
	size_t nr_pids;

	fprintf(f, "\n#%zu %s %s", n,
		is->origin == CP_ORIGIN_ALLOCATOR ? "Allocator's" : "Application's",
		cp_issue_type_text(is->type));
	print_insns(is, soft, v, f);
	print_objects(is, f);
	fprintf(f, "  Impact: %.1f %% of %s", 100.0 * is->score,
		soft ? "time samples" : "sampled misses");
	if (is->misses_per_s > 0 && !soft)
		fprintf(f, ", ~%.3g misses/s", is->misses_per_s);
	if (is->have_cost)
		fprintf(f, ", ~%.3g cycles/s of load latency", is->cost_cycles_per_s);
	nr_pids = cp_issue_pids(is, pids);
	fprintf(f, " (process%s", nr_pids > 1 ? "es" : "");
	for (size_t i = 0; i < nr_pids; i++)
		fprintf(f, "%s%u", i ? ", " : " ", pids[i]);
	fprintf(f, nr_pids > 1 ? ", on memory they share)\n" : ")\n");
	print_evidence(is, soft, f);
	/* a hint may name the object or the function */
	fprintf(f, "  Hint: %s\n", cp_printable(is->hint, hint, sizeof(hint)));
}

void cp_report_issues_print(const struct cp_classification *c, const struct cp_classify_cfg *cfg,
			    const struct cp_callers_view *callers, FILE *f)
{
	fprintf(f, "\nIssues (%zu)\n", c->nr_issues);
	if (c->soft)
		fprintf(f, "  source: soft, %s\n", CP_SOFT_NOTE);
	if (c->app_filter_applies && !c->app_filter_passed)
		fprintf(f,
			"  none reported: load misses are %.2f %% of sampled loads (below %.2f %%) "
			"and store misses %.2f %% of sampled stores (below %.2f %%)\n",
			100.0 * c->load_miss_ratio, cfg->app_load_miss_ppm / 1e4,
			100.0 * c->store_miss_ratio, cfg->app_store_miss_ppm / 1e4);
	else if (!c->nr_issues && c->soft)
		fprintf(f,
			"  none: no line or instruction with %.2f %% of the time samples shows "
			"sharing, a conflict or a stream larger than L2\n",
			cfg->min_miss_ppm / 1e4);
	else if (!c->nr_issues)
		fprintf(f, "  none: no instruction or line has %.2f %% of the misses\n",
			cfg->min_miss_ppm / 1e4);
	for (size_t i = 0; i < c->nr_issues; i++)
		cp_report_issue_print(i + 1, &c->issues[i], c->soft, callers, f);
	if (c->beyond_top)
		fprintf(f, "\n%zu more serious issues beyond --top %u\n", c->beyond_top,
			cfg->top ? cfg->top : CP_ISSUES_TOP_DEFAULT);
	fprintf(f, "\n%zu minor issues suppressed\n", c->suppressed);
	if (c->soft && c->unproven)
		fprintf(f,
			"%zu hot memory instruction%s not reported: no conflict or stream larger "
			"than L2 in the access history (%zu without a history yet)\n",
			c->unproven, c->unproven == 1 ? "" : "s", c->unproven_no_history);
}
