/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the Prometheus text file says (docs/prometheus.md lists every
 * metric): the issues of the last window, at most @top of them and an
 * "other" series for the rest; per-process totals of the window; and the
 * profiler's own counters over the run (samples, losses by unit and
 * reason, breakpoints, objects, allocation guard, source). Series are
 * labelled by what outlives a restart (comm, container, cgroup;
 * prom_labels.h), the pid only when asked; what gets the same labels is
 * summed into one series, so the file never repeats a series. Every family
 * is written whenever its value is known, 0 when what it counts is off
 * (docs/prometheus.md, "Which families a file has"). Pure: a summary in,
 * text out through prom_writer.h; the profiler's CPU and memory are the
 * report's (cp_report.agent, a live run's only) and the clock comes in
 * struct cp_prom_self, so a recording's file is the same anywhere.
 */
#ifndef CP_PROM_METRICS_H
#define CP_PROM_METRICS_H

#include <stdio.h>

#include "classify/classify.h"
#include "machine/copy_cache.h"
#include "report/prom_labels.h"
#include "report/report.h"

#define CP_PROM_MAX_PROCS 64 /* process series; the rest: one "other" series */

/* The time of a live run's write; not written for a recording. */
struct cp_prom_self {
	double write_time;	     /* unix seconds of this write */
	struct cp_copy_stats copies; /* sealed copies of targets' files (copy_cache.h) */
};

/* The command name of @pid into @buf; 0, or < 0 when unknown. */
typedef int (*cp_comm_fn)(void *ctx, __u32 pid, char *buf, size_t sz);

struct cp_prom_input {
	const struct cp_report *r;		/* window counters, insns; run losses; procs */
	const struct cp_stats *run;		/* the BPF counters of the run; NULL: r's */
	const struct cp_classification *issues; /* of the window, all of them (ranked) */
	double window_s;			/* span of the summary */
	unsigned int top;			/* issues with their own series */
	const char *pmu;			/* "pebs", "ibs", "none", "unknown" */
	const struct cp_prom_self *self;	/* NULL: not written */
	bool pid_label;				/* --prom-pid-label: a pid label on each series */
	cp_comm_fn comm;			/* NULL: r->procs' comms, else r->targets' */
	void *comm_ctx;
};

/* Pure: the sum of every loss counter of @r and @run, all units together (the status line). */
__u64 cp_prom_drops_sum(const struct cp_report *r, const struct cp_stats *run);

/* Writes the whole file to @f. 0, or < 0 (-EIO, -ENOMEM, a writer error). */
int cp_prom_metrics_write(const struct cp_prom_input *in, FILE *f);

#endif /* CP_PROM_METRICS_H */
