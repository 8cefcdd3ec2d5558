/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where samples come from: the kinds of source the command line names and
 * cp_source_decide() (machine/pmu.h) chooses between. Here, below the
 * options, so that the PMU code, the live session and the run's facts can
 * name a source without the command line.
 */
#ifndef CP_SOURCE_H
#define CP_SOURCE_H

enum cp_source_kind {
	CP_SOURCE_AUTO = 0,
	CP_SOURCE_PEBS,
	CP_SOURCE_IBS,
	CP_SOURCE_SOFT,
	CP_SOURCE_FAULTS, /* page faults: checks the pipeline anywhere, no cache levels */
};

/* The name of a source kind as the command line spells it ("?" when unknown). */
const char *cp_source_name(enum cp_source_kind kind);

/* The kind named @name (as cp_source_name() spells it) into @out: 0, or -EINVAL. */
int cp_source_parse(const char *name, enum cp_source_kind *out);

#endif /* CP_SOURCE_H */
