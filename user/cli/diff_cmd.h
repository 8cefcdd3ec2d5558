/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cacheperf-bpf diff BEFORE AFTER`: each recording replayed as `report
 * FILE` replays it (cli/report_cmd.h: --path-map and --alloc-wrapper apply
 * to both) and classified under the same filters, every serious issue of
 * each (up to CP_DIFF_TOP, whatever --top says); the issues paired
 * (classify/issue_match.h) and the diff written (report/report_diff.h):
 * the text to stdout or -o, the JSON with --json. Both recordings are
 * read, and their sources checked, before anything is written.
 */
#ifndef CP_DIFF_CMD_H
#define CP_DIFF_CMD_H

#include <stdio.h>

#include "report/profile_report.h"
#include "report/report_diff.h"

#define CP_DIFF_TOP 1000 /* issues of a recording compared: --top's largest */

/*
 * Compares @before with @after and writes the diff as @o says; warnings
 * about mapped files go to @warn. 0 with @counts filled, or a negative
 * errno with @err set (naming the recording that could not be read, or
 * why the two cannot be compared): then nothing was written.
 */
int cp_diff_cmd(const char *before, const char *after, const struct cp_report_opts *o, FILE *warn,
		struct cp_diff_counts *counts, char *err, size_t err_sz);

#endif /* CP_DIFF_CMD_H */
