/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every output of a run or a replay, in one table (outputs.c): the text
 * (-o, else stdout), --json, --html, --prom-file, --pprof, --folded,
 * --pprof-dir, the status line, and --record's path (written by the
 * recorder, record/recorder.h, only checked here). A row names its option,
 * how its path is checked before anything runs, and what it writes at
 * each moment:
 *
 *   end       the whole run's report (a live run's end, a replay); the
 *             Prometheus file is then the last window's, as at an interval
 *   interval  every -i seconds, of the rolling summary (profile/rolling.h)
 *   usr1      SIGUSR1: the summary as a report (-o, --json, --html)
 *   hup       SIGHUP: the Prometheus file now
 *
 * At each moment the profile is judged once (cp_profile__judge() at the
 * end, cp_profile__summary() for a summary) and every output gets the same
 * facts (struct cp_out_facts). Each output is written even when another
 * one failed: the first failure is returned, a later one logged; in a live
 * run a failure at an interval or SIGHUP is said when an output starts
 * failing, and its next good write is noticed. A new format is one row and
 * its writer.
 */
#ifndef CP_OUTPUTS_H
#define CP_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "export/pprof_dir.h"
#include "report/summary_out.h"

enum cp_out_moment {
	CP_OUT_END,
	CP_OUT_INTERVAL,
	CP_OUT_USR1,
	CP_OUT_HUP,
	CP_OUT_MOMENTS,
};

#define CP_OUT_ROWS 9

/* What every output of one moment is made of. */
struct cp_out_facts {
	struct cp_profile *p;
	const struct cp_report *r;	     /* its issues cut to --top; NULL: none this moment */
	const struct cp_summary *sum;	     /* a summary (every serious issue); NULL: none */
	const struct cp_classification *all; /* issue labels: every serious one; NULL: none */
	const struct cp_miss_store *misses;  /* the misses @r was classified from */
};

/* A run's or a replay's outputs, and what they remember between moments. */
struct cp_outputs {
	const struct cp_report_opts *ro; /* the paths and the filters */
	const struct cp_geometry *geo;	 /* the caches assumed; NULL: the recording's */
	bool live;
	struct cp_summary_out sum; /* the status line, the Prometheus file's comms */
	struct cp_pprof_dir pdir;
	bool failing[CP_OUT_ROWS]; /* a live interval's write failed (said once) */
};

/*
 * @o for @ro's outputs; @live: a live run (its own figures in the
 * Prometheus file, the status line on @status, NULL for none), else a
 * replay; @pmu as struct cp_summary_out says.
 */
void cp_outputs_init(struct cp_outputs *o, const struct cp_report_opts *ro,
		     const struct cp_geometry *geo, const char *pmu, bool live, FILE *status);

/*
 * Before anything runs: every path of @ro that could not be written, a
 * symbolic link or another user's file at it, refused. 0 or < 0 with @err
 * ("--json: ...").
 */
int cp_outputs_check(const struct cp_report_opts *ro, char *err, size_t err_sz);

/* Writes every output of moment @at from @p. 0 or < 0 with @err (the first failure). */
int cp_outputs_write(struct cp_outputs *o, enum cp_out_moment at, struct cp_profile *p, char *err,
		     size_t err_sz);

/* Frees what @o remembers (not its files). */
void cp_outputs_free(struct cp_outputs *o);

#endif /* CP_OUTPUTS_H */
