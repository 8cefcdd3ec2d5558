// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The processes and limits sections of the reports (see report_limits.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/printable.h"
#include "report/report_limits.h"

typedef unsigned long long ull;

#define MiB(b) ((double)(b) / (1024.0 * 1024.0))

/* "container docker 0123456789ab" (12 digits, as docker ps shows them) or "". */
static void container_text(const struct cp_proc_summary *s, char *buf, size_t sz)
{
	if (!s->cg.container_id[0]) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, sz, "  [%s%s%.12s]", s->cg.runtime, s->cg.runtime[0] ? " " : "",
		 s->cg.container_id);
}

void cp_report_procs_print(const struct cp_proc_summaries *t, unsigned int top, FILE *f)
{
	const struct cp_proc_summary **list;
	char ctr[48], comm[CP_PROC_COMM_LEN], cg[CP_CGROUP_PATH_LEN];
	size_t n;

	if (!t || !top || !(list = calloc(top, sizeof(*list))))
		return;
	n = cp_proc_summaries__top(t, list, top);
	while (n && !list[n - 1]->samples) /* exec'd, never sampled */
		n--;
	fprintf(f, "\nProcesses with the most samples (%zu of %zu; %llu seen, %llu evicted)\n", n,
		cp_proc_summaries__count(t), (ull)cp_proc_summaries__seen(t),
		(ull)cp_proc_summaries__evicted(t));
	if (!n)
		fprintf(f, "  none: no sample of a process arrived\n");
	else
		fprintf(f, "  %8s  %8s  %7s  %-16s %s\n", "samples", "misses", "pid", "comm",
			"cgroup");
	for (size_t i = 0; i < n; i++) {
		const struct cp_proc_summary *s = list[i];

		container_text(s, ctr, sizeof(ctr));
		fprintf(f, "  %8llu  %8llu  %7d  %-16s %s%s%s\n", (ull)s->samples, (ull)s->misses,
			(int)s->pid, s->comm[0] ? cp_printable(s->comm, comm, sizeof(comm)) : "?",
			s->cg.path[0] ? cp_printable(s->cg.path, cg, sizeof(cg)) : "?", ctr,
			s->exited ? " (exited)" : "");
	}
	free(list);
}

void cp_report_procs_json(struct cp_json *j, const struct cp_proc_summaries *t, unsigned int top)
{
	const struct cp_proc_summary **list = NULL;
	size_t n = 0;

	cp_json_object(j, "processes");
	cp_json_u64(j, "seen", t ? cp_proc_summaries__seen(t) : 0);
	cp_json_u64(j, "held", t ? cp_proc_summaries__count(t) : 0);
	cp_json_u64(j, "evicted", t ? cp_proc_summaries__evicted(t) : 0);
	cp_json_array(j, "top");
	if (t && top && (list = calloc(top, sizeof(*list))))
		n = cp_proc_summaries__top(t, list, top);
	while (n && !list[n - 1]->samples)
		n--;
	for (size_t i = 0; i < n; i++) {
		const struct cp_proc_summary *s = list[i];

		cp_json_object(j, NULL);
		cp_json_u64(j, "pid", (__u64)s->pid);
		cp_json_str(j, "comm", s->comm[0] ? s->comm : NULL);
		cp_json_str(j, "cgroup", s->cg.path[0] ? s->cg.path : NULL);
		cp_json_str(j, "container_id", s->cg.container_id[0] ? s->cg.container_id : NULL);
		cp_json_str(j, "container_runtime", s->cg.runtime[0] ? s->cg.runtime : NULL);
		cp_json_u64(j, "samples", s->samples);
		cp_json_u64(j, "misses", s->misses);
		cp_json_u64(j, "execs", s->execs);
		cp_json_bool(j, "exited", s->exited);
		cp_json_end(j);
	}
	free(list);
	cp_json_end(j);
	cp_json_end(j);
}

/* Files targets named that were not read, by reason (docs/security.md); nothing when none. */
static void print_refusals(const struct cp_limits *l, FILE *f)
{
	const char *sep = "";

	if (!l->files_refused)
		return;
	fprintf(f, "  files refused: %llu (", (ull)l->files_refused);
	for (int i = 0; i < CP_TF_NR; i++) {
		if (!l->files_refused_by[i])
			continue;
		fprintf(f, "%s%s %llu", sep, cp_tf_refusal_name(i), (ull)l->files_refused_by[i]);
		sep = ", ";
	}
	fprintf(f, ")\n");
}

/* An object @name of @n counters: @keys[i] is @v[i]. */
static void json_counts(struct cp_json *j, const char *name, const char *const *keys,
			const __u64 *v, size_t n)
{
	cp_json_object(j, name);
	for (size_t i = 0; i < n; i++)
		cp_json_u64(j, keys[i], v[i]);
	cp_json_end(j);
}

/* The describe server of tenants' files (symbols/sym_server.h). */
static void json_server(struct cp_json *j, const struct cp_sym_server_stats *st)
{
	static const char *const keys[] = {"requests", "unwinds",  "unwinds_later",
					   "started",  "restarts", "refused",
					   "late",     "cpu_ns",   "budget_waits"};
	const __u64 v[] = {st->requests, st->unwinds, st->unwinds_later, st->started, st->restarts,
			   st->refused,	 st->late,    st->cpu_ns,	 st->waited};

	json_counts(j, "describe_server", keys, v, sizeof(v) / sizeof(v[0]));
}

/* The sealed copies of targets' files (machine/copy_cache.h). */
static void json_copies(struct cp_json *j, const struct cp_copy_stats *c)
{
	static const char *const keys[] = {"made",    "missed", "reused",
					   "evicted", "kept",	"kept_bytes"};
	const __u64 v[] = {c->made, c->misses, c->hits, c->evictions, c->held, c->held_bytes};

	json_counts(j, "file_copies", keys, v, sizeof(v) / sizeof(v[0]));
}

static void json_refusals(struct cp_json *j, const struct cp_limits *l)
{
	cp_json_u64(j, "files_refused", l->files_refused);
	cp_json_object(j, "files_refused_by");
	for (int i = 0; i < CP_TF_NR; i++)
		if (l->files_refused_by[i])
			cp_json_u64(j, cp_tf_refusal_key(i), l->files_refused_by[i]);
	cp_json_end(j);
}

void cp_report_limits_print(const struct cp_limits *l, FILE *f)
{
	fprintf(f, "\nLimits (every store is capped; what made room is counted)\n");
	fprintf(f,
		"  evicted: process states %llu live, %llu exited; heap objects %llu, miss lines "
		"%llu, "
		"process summaries %llu; instructions not stored %llu\n",
		(ull)l->processes_evicted, (ull)l->exited_dropped, (ull)l->objects_evicted,
		(ull)l->lines_evicted, (ull)l->summaries_evicted, (ull)l->insns_dropped);
	if (l->maps_evicted)
		fprintf(f,
			"  object table: maps snapshots evicted %llu (to keep them within %.0f "
			"MiB)\n",
			(ull)l->maps_evicted, MiB(l->max_snap_bytes));
	fprintf(f, "  symbolizer: snapshots evicted %llu", (ull)l->dwfls_evicted);
	if (l->dwfls_copy_evicted || l->snaps_byte_evicted)
		fprintf(f, " (");
	if (l->dwfls_copy_evicted)
		fprintf(f, "%llu to keep their files' copies under a quarter of --max-memory%s",
			(ull)l->dwfls_copy_evicted, l->snaps_byte_evicted ? "; " : ")");
	if (l->snaps_byte_evicted)
		fprintf(f, "%llu to keep their maps within %.0f MiB)", (ull)l->snaps_byte_evicted,
			MiB(l->max_snap_bytes));
	fprintf(f, ", strings flushed %llu\n", (ull)l->string_flushes);
	if (l->stacks_held || l->stacks_evicted)
		fprintf(f, "  call stacks: %llu (instruction, stack) entries held, %llu evicted\n",
			(ull)l->stacks_held, (ull)l->stacks_evicted);
	if (l->shared.files || l->shared.dropped || l->shared.refused)
		fprintf(f,
			"  shared files (lines every mapping process meets on): %llu followed, "
			"%llu dropped at the cap of %u (their lines reported unnamed); accesses "
			"left in their process's lines %llu\n",
			(ull)l->shared.files, (ull)l->shared.dropped, CP_MAX_SHARED_FILES,
			(ull)l->shared.refused);
	print_refusals(l, f);
	if (!l->live)
		return;
	fprintf(f,
		"  file copies: %llu made, %llu reused, %llu evicted; %llu kept, %.1f MiB; "
		"%llu parsed first by a worker, %llu lookups waited for one\n",
		(ull)l->copies.made, (ull)l->copies.hits, (ull)l->copies.evictions,
		(ull)l->copies.held, MiB(l->copies.held_bytes), (ull)l->parse_workers,
		(ull)l->parse_waits);
	if (l->server.started || l->server.waited)
		fprintf(f,
			"  describe server (tenants' files): %llu requests, %llu unwinds (%llu "
			"answered later: their stacks kept the frame-pointer walk), %llu "
			"started, %llu restarted, %llu files refused, %llu late answers dropped; "
			"%.2f s of CPU from the workers' budget, %llu lookups waited for it\n",
			(ull)l->server.requests, (ull)l->server.unwinds,
			(ull)l->server.unwinds_later, (ull)l->server.started,
			(ull)l->server.restarts, (ull)l->server.refused, (ull)l->server.late,
			(double)l->server.cpu_ns / 1e9, (ull)l->server.waited);
	fprintf(f,
		"  memory: %.1f MiB, peak %.1f MiB (%s), limit %.0f MiB (--max-memory); "
		"RSS %.1f MiB, peak %.1f MiB; shrinks %llu",
		MiB(l->memory_bytes), MiB(l->peak_memory_bytes),
		l->memory_counter ? l->memory_counter : "?", MiB(l->max_memory_bytes),
		MiB(l->rss_bytes), MiB(l->peak_rss_bytes), (ull)l->shrinks);
	if (l->shrinks)
		fprintf(f, " (dropped %llu snapshots, %llu exited processes' objects)",
			(ull)l->shrunk_dwfls, (ull)l->shrunk_processes);
	fputc('\n', f);
}

/* The limits' counters by JSON key; the memory ones only live. */
static const struct limit_key {
	const char *key;
	size_t off;
} limit_keys[] =
	{
		{"process_states_evicted", offsetof(struct cp_limits, processes_evicted)},
		{"exited_process_states_dropped", offsetof(struct cp_limits, exited_dropped)},
		{"objects_evicted", offsetof(struct cp_limits, objects_evicted)},
		{"lines_evicted", offsetof(struct cp_limits, lines_evicted)},
		{"process_summaries_evicted", offsetof(struct cp_limits, summaries_evicted)},
		{"instructions_dropped", offsetof(struct cp_limits, insns_dropped)},
		{"symbolizer_snapshots_evicted", offsetof(struct cp_limits, dwfls_evicted)},
		{"symbolizer_evicted_for_copies", offsetof(struct cp_limits, dwfls_copy_evicted)},
		{"symbolizer_string_flushes", offsetof(struct cp_limits, string_flushes)},
		{"stacks_evicted", offsetof(struct cp_limits, stacks_evicted)},
		{"shared_files", offsetof(struct cp_limits, shared.files)},
		{"shared_files_dropped", offsetof(struct cp_limits, shared.dropped)},
		{"shared_accesses_refused", offsetof(struct cp_limits, shared.refused)},
},
  memory_keys[] = {
	  {"memory_bytes", offsetof(struct cp_limits, memory_bytes)},
	  {"peak_memory_bytes", offsetof(struct cp_limits, peak_memory_bytes)},
	  {"rss_bytes", offsetof(struct cp_limits, rss_bytes)},
	  {"peak_rss_bytes", offsetof(struct cp_limits, peak_rss_bytes)},
	  {"max_memory_bytes", offsetof(struct cp_limits, max_memory_bytes)},
	  {"shrinks", offsetof(struct cp_limits, shrinks)},
};

static __u64 limit_value(const struct cp_limits *l, const struct limit_key *k)
{
	__u64 v;

	memcpy(&v, (const char *)l + k->off, sizeof(v));
	return v;
}

void cp_report_limits_json(struct cp_json *j, const struct cp_limits *l)
{
	cp_json_object(j, "limits");
	for (size_t i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++)
		cp_json_u64(j, limit_keys[i].key, limit_value(l, &limit_keys[i]));
	/* a replay has no memory of its own to speak of */
	for (size_t i = 0; i < sizeof(memory_keys) / sizeof(memory_keys[0]); i++) {
		if (l->live)
			cp_json_u64(j, memory_keys[i].key, limit_value(l, &memory_keys[i]));
		else
			cp_json_null(j, memory_keys[i].key);
	}
	/* a live run's own (a replay's golden output stays as it was) */
	if (l->live) {
		cp_json_str(j, "memory_counter", l->memory_counter);
		cp_json_u64(j, "symbolizer_evicted_for_maps_bytes", l->snaps_byte_evicted);
		cp_json_u64(j, "object_maps_evicted", l->maps_evicted);
		json_refusals(j, l);
		json_copies(j, &l->copies);
		cp_json_u64(j, "parse_workers", l->parse_workers);
		cp_json_u64(j, "parse_worker_waits", l->parse_waits);
		json_server(j, &l->server);
	}
	cp_json_end(j);
}
