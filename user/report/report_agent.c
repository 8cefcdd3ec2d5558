// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own cost in the report (see report_agent.h). */
#include <stdio.h>

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

void cp_report_agent_print(const struct cp_agent_cost *a, FILE *f)
{
	char line[320];

	if (!a->known)
		return;
	cp_report_agent_format(a, line, sizeof(line));
	fprintf(f, "  profiler: %s\n", line);
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
	cp_json_end(j);
}
