// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own cost in the report (see report_agent.h). */
#include <stdio.h>

#include "profile/records.h"
#include "report/report_agent.h"

#define MiB(b) ((double)(b) / (1024.0 * 1024.0))

void cp_report_agent_format(const struct cp_agent_cost *a, char *buf, size_t sz)
{
	char took[32] = "";
	int n;

	if (!sz)
		return;
	buf[0] = '\0';
	if (!a->known)
		return;
	if (a->startup_wall_ns)
		snprintf(took, sizeof(took), " (in %.1f s)", a->startup_wall_ns / 1e9);
	n = snprintf(buf, sz,
		     "%.2f s CPU at start-up%s, %.2f s in %.1f s steady (%.2f %% of one CPU); ",
		     a->startup_cpu_ns / 1e9, took, a->steady_cpu_ns / 1e9, a->steady_wall_ns / 1e9,
		     cp_agent_cost_pct(a->steady_cpu_ns, a->steady_wall_ns));
	if (n < 0 || (size_t)n >= sz)
		return;
	if (a->memory_known)
		snprintf(buf + n, sz - (size_t)n, "memory %.1f MiB, peak %.1f MiB (%s)",
			 MiB(a->memory_bytes), MiB(a->peak_memory_bytes),
			 cp_self_mem_counter_name(a->memory_counter));
	else
		snprintf(buf + n, sz - (size_t)n, "memory not read");
}

/* The name of record type @type, as the dispatcher's table has it. */
static const char *record_name(__u32 type)
{
	const struct cp_record_kind *k = cp_record_kind(type);

	return k ? k->name : "record of an unknown type";
}

void cp_report_drain_format(const struct cp_drain_timing *d, char *buf, size_t sz)
{
	int n;

	if (!sz)
		return;
	buf[0] = '\0';
	if (!d->records)
		return;
	n = snprintf(buf, sz,
		     "%llu records, %.0f/s while handling them; the longest took %.1f ms (%s)",
		     (unsigned long long)d->records,
		     d->busy_ns ? (double)d->records * 1e9 / (double)d->busy_ns : 0.0,
		     d->longest_ns / 1e6, record_name(d->longest_type));
	if (n < 0 || (size_t)n >= sz || !d->sites_queued)
		return;
	snprintf(buf + n, sz - (size_t)n,
		 "; new call sites unwound between polls: %llu of %llu (at most %u waiting, "
		 "the longest %.1f ms)",
		 (unsigned long long)(d->sites_queued - d->sites_in_drain),
		 (unsigned long long)d->sites_queued, d->sites_most, d->sites_longest_ns / 1e6);
}

void cp_report_agent_print(const struct cp_agent_cost *a, FILE *f)
{
	char line[512];

	if (!a->known)
		return;
	cp_report_agent_format(a, line, sizeof(line));
	fprintf(f, "  profiler: %s\n", line);
	cp_report_drain_format(&a->drain, line, sizeof(line));
	if (line[0])
		fprintf(f, "  drain: %s\n", line);
}

void cp_report_agent_json(struct cp_json *j, const struct cp_agent_cost *a)
{
	if (!a->known)
		return;
	cp_json_object(j, "agent");
	cp_json_double(j, "startup_cpu_s", a->startup_cpu_ns / 1e9, 6);
	if (a->startup_wall_ns)
		cp_json_double(j, "startup_wall_s", a->startup_wall_ns / 1e9, 3);
	else
		cp_json_null(j, "startup_wall_s");
	cp_json_double(j, "steady_cpu_s", a->steady_cpu_ns / 1e9, 6);
	cp_json_double(j, "steady_wall_s", a->steady_wall_ns / 1e9, 3);
	cp_json_double(j, "steady_cpu_pct", cp_agent_cost_pct(a->steady_cpu_ns, a->steady_wall_ns),
		       3);
	if (a->memory_known) {
		cp_json_u64(j, "memory_bytes", a->memory_bytes);
		cp_json_u64(j, "peak_memory_bytes", a->peak_memory_bytes);
		cp_json_str(j, "memory_counter", cp_self_mem_counter_name(a->memory_counter));
	} else {
		cp_json_null(j, "memory_bytes");
		cp_json_null(j, "peak_memory_bytes");
		cp_json_null(j, "memory_counter");
	}
	cp_json_object(j, "drain");
	cp_json_u64(j, "records", a->drain.records);
	cp_json_double(j, "busy_s", a->drain.busy_ns / 1e9, 6);
	cp_json_double(j, "longest_s", a->drain.longest_ns / 1e9, 6);
	if (a->drain.records)
		cp_json_str(j, "longest_record", record_name(a->drain.longest_type));
	else
		cp_json_null(j, "longest_record");
	cp_json_u64(j, "sites_queued", a->drain.sites_queued);
	cp_json_u64(j, "sites_in_drain", a->drain.sites_in_drain);
	cp_json_u64(j, "sites_most_waiting", a->drain.sites_most);
	cp_json_double(j, "sites_longest_s", a->drain.sites_longest_ns / 1e9, 6);
	cp_json_end(j);
	cp_json_end(j);
}
