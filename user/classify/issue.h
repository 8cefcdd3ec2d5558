/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Building blocks of the classifier's issues (pure): listing source lines
 * and objects in an issue, merging issues, ranking them, and the fix hints.
 * Split from classify.c so the algorithm there reads as Algorithm 1.
 */
#ifndef CP_ISSUE_H
#define CP_ISSUE_H

#include <stdbool.h>
#include <stddef.h>

#include "classify/classify.h"

/*
 * Adds @in to @is's source lines: merged with the entry of the same source
 * line (or, without a location, the same ip), else appended, else counted
 * in more_insns. Keeps insns[] ordered by misses.
 */
void cp_issue_add_insn(struct cp_issue *is, const struct cp_issue_insn *in);

/*
 * Adds @obj, referenced @refs times, to @is's objects: heap objects of one
 * call site form one group (nr_objects counts distinct starts as far as
 * the merge can tell), any other object is its own group. Keeps objects[]
 * ordered by refs.
 */
void cp_issue_add_object(struct cp_issue *is, const struct cp_issue_object *obj, __u32 refs);

/*
 * True when @a and @b may be one issue: same process, type and origin, and
 * a shared object group or source line.
 */
bool cp_issue_related(const struct cp_issue *a, const struct cp_issue *b);

/*
 * True when an instruction that touched @ip_bytes of sharing issue @is's
 * line is the issue's: any, unless the line was split in two issues
 * (sharing.other_part): the false-sharing part has the instructions that
 * touched only its bytes, the true-sharing part the others.
 */
bool cp_issue_line_insn(const struct cp_issue *is, __u64 ip_bytes);

/*
 * The processes of @is: is->tgid, then those of its sharing threads (a
 * shared mapping's line is shared between processes), each once, into
 * @out (room for CP_ISSUE_MAX_PIDS). Returns how many: more than one for
 * sharing between processes.
 */
#define CP_ISSUE_MAX_PIDS (1 + CP_LINE_MAX_THREADS)
size_t cp_issue_pids(const struct cp_issue *is, __u32 *out);

/* Folds @src into @dst (counts, score, rates, lines, objects, evidence). */
void cp_issue_merge(struct cp_issue *dst, const struct cp_issue *src);

/* Sorts @n issues by impact: score, then cost, then misses per second. */
void cp_issue_rank(struct cp_issue *issues, size_t n);

/* Writes the fix hint of @is into is->hint; @l1 for set arithmetic. */
void cp_issue_hint(struct cp_issue *is, const struct cp_cache_level *l1);

/*
 * The first run of set bits of @mask at or after bit @from: returns its
 * first bit and sets *@last to its last one; -1 when there is none.
 */
int cp_byte_run(__u64 mask, int from, int *last);

/*
 * "0-7,16-23": the set bits of @mask as ranges, each bit's number plus
 * @base. "-" for an empty mask. snprintf semantics on @buf.
 */
int cp_byte_ranges(__u64 mask, __s64 base, char *buf, size_t sz);

#endif /* CP_ISSUE_H */
