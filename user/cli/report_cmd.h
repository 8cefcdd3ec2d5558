/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cacheperf-bpf report FILE`: a recording replayed (record/replay.h) and
 * its report written like a live run's: text, JSON, and with --prom-file
 * the Prometheus file of the whole recording.
 */
#ifndef CP_REPORT_CMD_H
#define CP_REPORT_CMD_H

#include <stdio.h>

#include "record/replay.h"
#include "report/profile_report.h"

/*
 * Opens @path and replays it into *@out (cp_replay__free() it), its
 * profile set up as @o says (--path-map, --alloc-wrapper); warnings about
 * mapped files go to @warn. 0, or a negative errno with @err naming @path.
 */
int cp_replay_open(const char *path, const struct cp_report_opts *o, FILE *warn,
		   struct cp_replay **out, char *err, size_t err_sz);

/*
 * Opens @path, replays it and writes its report as @o says (the text to
 * stdout by default); warnings about mapped files go to @warn. 0, or a
 * negative errno with @err set.
 */
int cp_replay_report(const char *path, const struct cp_report_opts *o, FILE *warn, char *err,
		     size_t err_sz);

#endif /* CP_REPORT_CMD_H */
