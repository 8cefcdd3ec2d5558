/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What rolling summaries write that a report does not (export/outputs.h
 * says when): the status line on stderr, each interval, when it is a
 * terminal and not with --quiet; the Prometheus text file (--prom-file) of
 * a summary, with the comms of processes gone since, and live, the
 * profiler's own figures. A recording's Prometheus file (report FILE
 * --prom-file) is its whole run, without the replaying machine's figures.
 */
#ifndef CP_SUMMARY_OUT_H
#define CP_SUMMARY_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "report/profile_report.h"

#define CP_SUMMARY_ALL_ISSUES 1000 /* classified per summary: every serious one */
#define CP_SUMMARY_COMMS      256  /* comms remembered, for processes gone by the next write */

/* A process's name as last read, so a series keeps it after the process exits. */
struct cp_comm_seen {
	__u32 pid;
	char comm[CP_COMM_LEN];
};

struct cp_summary_out {
	const struct cp_report_opts *ro; /* files, filters, --prom-top */
	const struct cp_geometry *geo;	 /* NULL: the recording's */
	const char *pmu;		 /* "pebs", "ibs", "none", "unknown" */
	bool live;			 /* the profiler's own figures are written */
	FILE *status;			 /* the status line's stream; NULL: none */
	__u64 last_cpu_ns;		 /* the profiler's CPU time at the last status line */
	double last_s;
	__u64 last_samples;
	unsigned int next_comm; /* comms[] slot the next new pid takes */
	struct cp_comm_seen comms[CP_SUMMARY_COMMS];
};

/* What one status line says. */
struct cp_status {
	double samples_per_s;
	size_t issues;
	__u64 drops;
	double cpu_pct; /* of one CPU, since the last line */
};

/*
 * @o for a live run (@live: status line on @status_f, NULL for none, and
 * the profiler's figures in the file) or a recording.
 */
void cp_summary_out_init(struct cp_summary_out *o, const struct cp_report_opts *ro,
			 const struct cp_geometry *geo, const char *pmu, bool live, FILE *status_f);

/* The status line of @s. */
void cp_summary_out_status(struct cp_summary_out *o, const struct cp_summary *s);

/* The Prometheus file of @s to --prom-file. 0 or < 0 with @err. */
int cp_summary_out_prom(struct cp_summary_out *o, const struct cp_summary *s, char *err,
			size_t err_sz);

/* Pure: "cacheperf-bpf: 1234 samples/s, 2 issues, 0 drops, CPU 1.5 %" (no newline). */
void cp_status_format(const struct cp_status *s, char *buf, size_t sz);

#endif /* CP_SUMMARY_OUT_H */
