/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Two report sections of long and system-wide runs: the processes with the
 * most samples (-a: pid, comm, cgroup, container), and the limits (every
 * store's evictions, the profiler's RSS against --max-memory). Text and
 * JSON; pure.
 */
#ifndef CP_REPORT_LIMITS_H
#define CP_REPORT_LIMITS_H

#include <stdio.h>
#include <linux/types.h>

#include "util/json_writer.h"
#include "profile/proc_summaries.h"
#include "profile/run_limits.h"

/* "Processes with the most samples": @top of them, from @t. */
void cp_report_procs_print(const struct cp_proc_summaries *t, unsigned int top, FILE *f);
void cp_report_procs_json(struct cp_json *j, const struct cp_proc_summaries *t, unsigned int top);

/* "Limits": what each cap dropped, RSS against --max-memory. */
void cp_report_limits_print(const struct cp_limits *l, FILE *f);
void cp_report_limits_json(struct cp_json *j, const struct cp_limits *l);

#endif /* CP_REPORT_LIMITS_H */
