// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The outputs of rolling summaries (see summary_out.h). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "machine/target_file.h"
#include "report/prom_file.h"
#include "report/prom_metrics.h"
#include "machine/agent_cost.h"
#include "util/clock.h"
#include "util/self_usage.h"
#include "report/summary_out.h"

void cp_summary_out_init(struct cp_summary_out *o, const struct cp_report_opts *ro,
			 const struct cp_geometry *geo, const char *pmu, bool live, FILE *status_f)
{
	memset(o, 0, sizeof(*o));
	o->ro = ro;
	o->geo = geo;
	o->pmu = pmu;
	o->live = live;
	o->status = status_f;
	o->last_s = (double)cp_now_ns() / 1e9;
	o->last_cpu_ns = cp_self_cpu_ns();
}

void cp_status_format(const struct cp_status *s, char *buf, size_t sz)
{
	snprintf(buf, sz, "cacheperf-bpf: %.0f samples/s, %zu issue%s, %llu drops, CPU %.1f %%",
		 s->samples_per_s, s->issues, s->issues == 1 ? "" : "s",
		 (unsigned long long)s->drops, s->cpu_pct);
}

/*
 * /proc/PID/comm of a live process, remembered (a bounded table, oldest
 * entry replaced) for when it has exited by the next write: the name it
 * gave itself after its exec stays on its series.
 */
static int live_comm(void *ctx, __u32 pid, char *buf, size_t sz)
{
	struct cp_summary_out *o = ctx;
	struct cp_comm_seen *seen = NULL;
	char path[64];
	size_t n;
	FILE *f;

	for (unsigned int i = 0; i < CP_SUMMARY_COMMS && !seen; i++)
		if (o->comms[i].pid == pid)
			seen = &o->comms[i];
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f) {
		if (!seen)
			return -ENOENT;
		snprintf(buf, sz, "%s", seen->comm);
		return 0;
	}
	/* the kernel ends the name with a newline; the name may hold newlines itself */
	n = fread(buf, 1, sz - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (!seen) {
		seen = &o->comms[o->next_comm];
		o->next_comm = (o->next_comm + 1) % CP_SUMMARY_COMMS;
		seen->pid = pid;
	}
	snprintf(seen->comm, sizeof(seen->comm), "%s", buf);
	return 0;
}

static int write_prom(void *ctx, FILE *f)
{
	return cp_prom_metrics_write(ctx, f);
}

int cp_summary_out_prom(struct cp_summary_out *o, const struct cp_summary *s, char *err,
			size_t err_sz)
{
	struct cp_prom_self self;
	struct cp_prom_input in = {
		.r = &s->report,
		.run = &s->run_bpf,
		.issues = &s->issues,
		.window_s = s->window_s,
		.top = o->ro->prom_top,
		.pmu = o->pmu,
		.pid_label = o->ro->prom_pid_label,
		.comm = o->live ? live_comm : NULL,
		.comm_ctx = o,
	};

	if (o->live) {
		self.write_time = (double)time(NULL);
		cp_tf_kept_stats(&self.copies);
		in.self = &self;
	}
	return cp_prom_file_write(o->ro->prom, write_prom, &in, err, err_sz);
}

void cp_summary_out_status(struct cp_summary_out *o, const struct cp_summary *s)
{
	double now = (double)cp_now_ns() / 1e9, dt = now - o->last_s;
	__u64 cpu = cp_self_cpu_ns();
	const struct cp_stats *b = &s->run_bpf;
	__u64 samples = b->samples[CP_ACCESS_LOAD] + b->samples[CP_ACCESS_STORE];
	struct cp_status st = {
		.issues = s->issues.nr_issues + s->issues.beyond_top,
		.drops = cp_prom_drops_sum(&s->report, b),
	};
	char line[160];

	if (dt > 0) {
		st.samples_per_s = (double)(samples - o->last_samples) / dt;
		st.cpu_pct = cp_agent_cost_pct(cpu - o->last_cpu_ns, (__u64)(dt * 1e9));
	}
	o->last_s = now;
	o->last_cpu_ns = cpu;
	o->last_samples = samples;
	cp_status_format(&st, line, sizeof(line));
	fprintf(o->status, "%s\n", line);
	fflush(o->status);
}
