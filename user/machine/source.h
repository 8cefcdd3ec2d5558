/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where samples come from: the kinds of source the command line names and
 * cp_source_decide() (machine/pmu.h) chooses between. Here, below the
 * options, so that the PMU code, the live session and the run's facts can
 * name a source without the command line.
 */
#ifndef CP_SOURCE_H
#define CP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

enum cp_source_kind {
	CP_SOURCE_AUTO = 0,
	CP_SOURCE_PEBS,
	CP_SOURCE_IBS,
	CP_SOURCE_SOFT,
	CP_SOURCE_FAULTS, /* page faults: checks the pipeline anywhere, no cache levels */
};

/* What a source's samples weigh: runs compare only within one kind. */
enum cp_source_impact {
	CP_IMPACT_MISSES, /* a PMU's sampled misses */
	CP_IMPACT_FAULTS, /* page faults, every one a sample */
	CP_IMPACT_TIME,	  /* a timer's ticks: shares of the time */
};

/*
 * What a source is, for everything after the samples are taken: the
 * profile, the reports, pprof, recordings, diffs. One row per kind
 * (source.c); a new source is a row there, its attach (live/session.c) and
 * its decoder.
 */
struct cp_source_desc {
	const char *name;  /* as the command line, reports and labels spell it */
	bool recordable;   /* a run's source: a recording may name it (not auto) */
	bool needs_pmu;	   /* a PMU's memory samples: blind without their data */
	bool every_op;	   /* the PMU samples every op, not memory ones only (IBS) */
	bool forwards_all; /* every access is a sample: no hit or miss is told */
	bool has_latency;  /* a sample carries its access's latency */
	bool by_time;	   /* a timer's ticks: samples weigh the time spent */
	enum cp_source_impact impact;
	const char *impact_text; /* "share of the sampled misses" */
};

/* The row of @kind; for a kind no row has, one named "?" that has nothing. */
const struct cp_source_desc *cp_source_of(enum cp_source_kind kind);

/*
 * The row named @name (a report's source: cp_source_name() of its run's
 * kind); for NULL or a name no row has, the "?" row, which has nothing.
 */
const struct cp_source_desc *cp_source_named(const char *name);

/* The name of a source kind as the command line spells it ("?" when unknown). */
const char *cp_source_name(enum cp_source_kind kind);

/* The kind named @name (as cp_source_name() spells it) into @out: 0, or -EINVAL. */
int cp_source_parse(const char *name, enum cp_source_kind *out);

/* Every source's name, as --source takes them: "auto, pebs, ..." into @buf. */
void cp_source_names(char *buf, size_t sz);

#endif /* CP_SOURCE_H */
