/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report of `cacheperf-bpf diff BEFORE AFTER` (docs/diff.md): the
 * issues of two runs paired (classify/issue_match.h), each pair's impact
 * before and after and its change, then the issues gone and new, and a
 * summary; as text and as JSON. Impacts are shares (of the sampled misses,
 * or of the time samples with the soft source), so runs of different
 * lengths and rates compare; the counts behind them are shown too. Pure:
 * the struct in, text out.
 */
#ifndef CP_REPORT_DIFF_H
#define CP_REPORT_DIFF_H

#include <stdio.h>

#include "classify/issue_match.h"
#include "machine/geometry.h"

enum { CP_DIFF_BEFORE = 0, CP_DIFF_AFTER, CP_DIFF_RUNS };

#define CP_DIFF_JSON_VERSION 1

/* One recording's side of a diff. */
struct cp_diff_run {
	const char *path;   /* as named on the command line */
	const char *source; /* "pebs", "ibs", "soft", "faults" */
	double duration_s;
	struct cp_geometry geo; /* the caches the run assumed */
	struct cp_classification issues;
};

struct cp_diff {
	struct cp_diff_run run[CP_DIFF_RUNS];
	struct cp_issue_pair *pairs; /* cp_issue_match(): BEFORE's rank order, then the new */
	size_t nr_pairs;
	/* a change of impact smaller than this is none (--min-miss-share, 1 % by default) */
	__u32 unchanged_ppm;
};

/* What a diff found, for its summary line and the exit status. */
struct cp_diff_counts {
	size_t both;	     /* pairs in both runs, of any kind */
	size_t moved;	     /* ... of them CP_MATCH_MOVED */
	size_t type_changed; /* ... CP_MATCH_TYPE_CHANGED */
	size_t better;	     /* ... whose impact fell by unchanged_ppm or more */
	size_t worse;	     /* ... rose by as much */
	size_t unchanged;
	size_t gone;
	size_t added; /* new */
};

/*
 * Whether the impacts of @d's runs measure the same thing: 0; or -EINVAL
 * with why in @err when one is soft (time shares) and the other is not,
 * or page faults against a PMU's misses. PEBS against IBS compares (both
 * shares of sampled misses): cp_diff_print() and cp_diff_json() warn.
 */
int cp_diff_comparable(const struct cp_diff *d, char *err, size_t err_sz);

void cp_diff_count(const struct cp_diff *d, struct cp_diff_counts *c);

/* The text report of @d to @f. */
void cp_diff_print(const struct cp_diff *d, FILE *f);

/* The JSON document of @d to @f (docs/diff.md); 0 or -1. */
int cp_diff_json(const struct cp_diff *d, FILE *f);

#endif /* CP_REPORT_DIFF_H */
