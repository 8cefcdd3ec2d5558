// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --pprof and --folded (see export.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/folded.h"
#include "export/measures.h"
#include "machine/source.h"
#include "util/clock.h"
#include "util/gzip.h"
#include "util/out_file.h"

#define CP_EXPORT_MAX_LABELS 6

/* The measures of @p's run: its source, its tick period, its PMU periods. */
static void run_measures(const struct cp_profile *p, struct cp_measures *ms)
{
	__u32 hz = cp_source_of(p->info.source)->by_time ? p->info.budget.soft_freq_hz : 0;

	/* the kernel maps a cpu-clock frequency to a fixed period of NSEC_PER_SEC / freq */
	cp_measures_of(p->info.source, hz ? 1000000000ull / hz : 0, p->info.load_period,
		       p->info.store_period, ms);
}

struct pprof_walk {
	struct cp_pprof *b;
	struct cp_measures ms;
};

/* The labels of @s into @l; returns how many. */
static __u32 stack_labels(const struct cp_export_stack *s, struct cp_pprof_label *l)
{
	__u32 n = 0;

	if (s->issue) {
		l[n++] = (struct cp_pprof_label){.key = "issue_type",
						 .str = cp_issue_type_name(s->issue->type)};
		l[n++] = (struct cp_pprof_label){.key = "origin",
						 .str = cp_issue_origin_name(s->issue->origin)};
		if (s->object[0])
			l[n++] = (struct cp_pprof_label){.key = "object", .str = s->object};
	}
	if (s->comm[0])
		l[n++] = (struct cp_pprof_label){.key = "comm", .str = s->comm};
	if (s->container[0])
		l[n++] = (struct cp_pprof_label){.key = "container", .str = s->container};
	l[n++] = (struct cp_pprof_label){.key = "pid", .num = s->tgid};
	return n;
}

static int on_pprof_stack(void *ctx, const struct cp_export_stack *s)
{
	struct pprof_walk *w = ctx;
	struct cp_pprof_label labels[CP_EXPORT_MAX_LABELS];
	__s64 values[CP_PPROF_MAX_TYPES];
	bool any = false;

	for (unsigned int i = 0; i < w->ms.nr; i++) {
		values[i] = cp_measure_value(&w->ms, w->ms.m[i], s->counts);
		any |= values[i] != 0;
	}
	/* an instruction the source measured nothing at (a soft run's miss note without a tick) */
	if (!any)
		return 0;
	return cp_pprof__add(w->b, &(struct cp_pprof_sample){
					   .frames = s->frames,
					   .nr_frames = s->nr_frames,
					   .values = values,
					   .labels = labels,
					   .nr_labels = stack_labels(s, labels),
				   });
}

/* pprof's header for @ms: types, period, the preferred type, what the values are. */
static void pprof_header(const struct cp_profile *p, const struct cp_measures *ms,
			 struct cp_pprof_header *h, char *comment, size_t sz)
{
	bool by_time = cp_source_of(p->info.source)->by_time;
	unsigned int pref;

	memset(h, 0, sizeof(*h));
	for (unsigned int i = 0; i < ms->nr; i++)
		h->types[i] = cp_measure_type(ms->m[i]);
	h->nr_types = ms->nr;
	h->period_type = ms->period_type;
	h->period = ms->period;
	/* soft: CPU time reads as pprof's own CPU profiles do, when it is known (the last) */
	pref = by_time ? ms->nr - 1 : ms->main;
	h->default_type = cp_measure_type(ms->m[pref]).type;
	snprintf(comment, sz, "cacheperf-bpf, source %s: %s", cp_source_name(p->info.source),
		 by_time ? CP_SOFT_NOTE : "values are sampled counts (docs/pprof.md)");
	h->comments[0] = comment;
}

/* The main process's program first: pprof's consumers take it for the main binary. */
static int add_main_mapping(struct cp_profile *p, struct cp_pprof *b)
{
	char hex[2 * CP_SYM_BUILD_ID_MAX + 1];
	struct cp_pprof_mapping m;

	if (cp_export_main_mapping(p, &m, hex, sizeof(hex)))
		return 0;
	return cp_pprof__add_mapping(b, &m);
}

int cp_export_pprof(struct cp_profile *p, const struct cp_classification *issues,
		    struct cp_stack_walk sw, __s64 time_ns, __s64 duration_ns, __u8 **gz,
		    size_t *len)
{
	struct pprof_walk w = {0};
	struct cp_pprof_header h;
	char comment[256];
	__u8 *raw = NULL;
	size_t raw_len;
	int ret;

	*gz = NULL;
	run_measures(p, &w.ms);
	pprof_header(p, &w.ms, &h, comment, sizeof(comment));
	h.time_ns = time_ns;
	h.duration_ns = duration_ns;
	w.b = cp_pprof__new(&h);
	if (!w.b)
		return -ENOMEM;
	ret = add_main_mapping(p, w.b);
	if (!ret)
		ret = cp_export_stacks(p, issues, sw, on_pprof_stack, &w);
	if (!ret)
		ret = cp_pprof__pack(w.b, &raw, &raw_len);
	if (!ret)
		ret = cp_gzip(raw, raw_len, gz, len);
	free(raw);
	cp_pprof__free(w.b);
	return ret;
}

struct bytes {
	const __u8 *data;
	size_t len;
};

static int write_bytes(void *ctx, FILE *f)
{
	const struct bytes *b = ctx;

	return fwrite(b->data, 1, b->len, f) == b->len ? 0 : -EIO;
}

int cp_export_file(const char *path, const __u8 *data, size_t len, struct cp_out_id *id, char *err,
		   size_t err_sz)
{
	return cp_out_file_put(path, CP_OUT_PRIVATE, write_bytes, &(struct bytes){data, len}, id,
			       err, err_sz);
}

struct folded_walk {
	struct cp_folded *f;
	struct cp_measures ms;
};

static int on_folded_stack(void *ctx, const struct cp_export_stack *s)
{
	struct folded_walk *w = ctx;
	__s64 v = cp_measure_value(&w->ms, w->ms.m[w->ms.main], s->counts);

	return cp_folded__add(w->f, s, v > 0 ? (__u64)v : 0);
}

static int write_folded(void *ctx, FILE *f)
{
	return cp_folded__write(ctx, f);
}

int cp_export_folded_file(struct cp_profile *p, const struct cp_classification *issues,
			  const char *path, char *err, size_t err_sz)
{
	struct folded_walk w = {.f = cp_folded__new()};
	int ret = w.f ? 0 : -ENOMEM;

	run_measures(p, &w.ms);
	if (!ret)
		ret = cp_export_stacks(p, issues, cp_stack_walk_of_profile(p), on_folded_stack, &w);
	if (ret)
		snprintf(err, err_sz, "cannot make the folded stacks for %s: %s", path,
			 strerror(-ret));
	else
		ret = cp_out_file_write(path, CP_OUT_PRIVATE, write_folded, w.f, err, err_sz);
	cp_folded__free(w.f);
	return ret;
}

/* How long the run lasted: until its end, or until now while it goes on. */
static __s64 run_duration_ns(const struct cp_profile *p)
{
	struct cp_run_end e = p->end;

	if (p->hooks.end_facts)
		p->hooks.end_facts(p->hooks.ctx, &e);
	if (!e.end_ns)
		e.end_ns = cp_now_ns();
	return e.end_ns > p->info.start_ns ? (__s64)(e.end_ns - p->info.start_ns) : 0;
}

int cp_export_pprof_file(struct cp_profile *p, const struct cp_classification *issues,
			 const char *path, bool live, char *err, size_t err_sz)
{
	/* a recording has no time of day: its clock was the recording machine's monotonic one */
	__s64 t = live ? (__s64)cp_wall_ns_of(p->info.start_ns) : 0;
	__u8 *gz;
	size_t len;
	int ret = cp_export_pprof(p, issues, cp_stack_walk_of_profile(p), t, run_duration_ns(p),
				  &gz, &len);

	if (ret) {
		snprintf(err, err_sz, "cannot make the pprof profile for %s: %s", path,
			 strerror(-ret));
		return ret;
	}
	ret = cp_export_file(path, gz, len, NULL, err, err_sz);
	free(gz);
	return ret;
}
