/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A profile's stacks as the exporters take them (pprof, folded): each one
 * symbolized through the profile's symbolizer - the leaf at its pc, every
 * caller at its return address - 1, so the line of the call is found - with
 * its whole inline chain, its mappings and build-ids, and its labels: the
 * process's comm and container, and for an instruction of a classified
 * issue that issue's type, origin and object (the object as the
 * Prometheus file names it). Not pure (the symbolizer reads files); writes
 * nothing: the writers are export/pprof_file.h and export/folded.h.
 */
#ifndef CP_EXPORT_STACK_H
#define CP_EXPORT_STACK_H

#include <linux/types.h>

#include "classify/classify.h"
#include "export/pprof_build.h"
#include "profile/sample_stacks.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

#define CP_EXPORT_MAX_FRAMES 128 /* frames of a stack kept, the leaf's end first */
#define CP_EXPORT_MAX_LINES  (1 + CP_MAX_INLINE_DEPTH)
#define CP_EXPORT_LABEL_LEN  256

/* One symbolized stack. Strings and arrays are valid during the callback only. */
struct cp_export_stack {
	__u32 tgid;
	const struct cp_stack_counts *counts;
	__u32 nr_frames;
	__u32 dropped_frames; /* callers beyond CP_EXPORT_MAX_FRAMES */
	struct cp_pprof_frame frames[CP_EXPORT_MAX_FRAMES]; /* the leaf first */
	const char *comm;				    /* "": unknown */
	const char *container;				    /* id; "": none */
	const struct cp_issue *issue;			    /* the leaf's issue; NULL: none */
	char object[CP_EXPORT_LABEL_LEN];		    /* the issue's object; "": none */
};

typedef int (*cp_export_fn)(void *ctx, const struct cp_export_stack *s);

/* A source of stacks: cp_insn_leaf_stacks() over a store, or the profile's own. */
struct cp_stack_walk {
	int (*each)(const void *src, cp_stack_fn fn, void *ctx);
	const void *src;
};

/* The whole run's stacks of @p (until call stacks are merged: its instruction store). */
struct cp_stack_walk cp_stack_walk_of_profile(const struct cp_profile *p);

/* An interval's: its call stacks, and its epoch's instructions that none starts with. */
struct cp_interval_stacks {
	const struct cp_stack_store *stacks;
	const struct cp_insn_store *epoch;
};

/* The stacks of interval @is (held by the caller while the walk is used). */
struct cp_stack_walk cp_stack_walk_of_interval(const struct cp_interval_stacks *is);

/*
 * Calls @fn with every stack of @w, symbolized in @p's symbolizer and
 * labelled from @issues (NULL: no issue labels) and @p's process
 * summaries. Returns 0, the first non-zero return of @fn, or -ENOMEM.
 */
int cp_export_stacks(struct cp_profile *p, const struct cp_classification *issues,
		     struct cp_stack_walk w, cp_export_fn fn, void *ctx);

/*
 * The mapping of the main process's program into @out (its build-id as
 * text in @hex): the first target's, or with -a the most sampled
 * process's (cp_symbolizer__main_mapping()). pprof's consumers take a
 * profile's first mapping for its main binary. 0, or < 0 for none.
 */
int cp_export_main_mapping(struct cp_profile *p, struct cp_pprof_mapping *out, char *hex,
			   size_t hex_sz);

#endif /* CP_EXPORT_STACK_H */
