/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The issues of two runs paired up, for `cacheperf-bpf diff BEFORE AFTER`
 * (docs/diff.md). Pure: two ranked issue lists in, pairs out.
 *
 * An issue is known across runs by its key: its type and origin, where its
 * main instruction is (insns[0], the line with the most misses: base name of
 * the file and line, else the function, else the address), that
 * instruction's function, and its main object (objects[0]: a heap object by
 * the first user frame of its allocation stack, a variable or mapping by its
 * name). Process ids and addresses differ between runs and are no part of
 * it. Three passes, each over the issues the passes before left unpaired,
 * each pairing what fits, the nearest lines first (a moved access takes the
 * one that moved least, not the first of its function), then in rank order:
 *
 *   1. same: type, origin, location and object (with its site's line);
 *   2. moved: type, origin, function and object site's function: a fix that
 *      added lines (padding) shifted the access or the allocation;
 *   3. type changed: location and object site's function, but another type
 *      or origin: the fix changed what the misses are (conflict to
 *      capacity), or the history came that named a pending type.
 *
 * What is left is gone (BEFORE only) or new (AFTER only). Every pair says
 * which pass made it, so no loose match passes for an exact one.
 */
#ifndef CP_ISSUE_MATCH_H
#define CP_ISSUE_MATCH_H

#include <stddef.h>

#include "classify/classify.h"

#define CP_ISSUE_WHERE_LEN (CP_LOC_FILE_LEN + 16)
/* "thread-local variable NAME", "heap object from FUNCTION"; then " (FILE:LINE)" */
#define CP_ISSUE_SITE_LEN   (CP_LOC_FUNCTION_LEN + 48)
#define CP_ISSUE_OBJECT_LEN (CP_ISSUE_SITE_LEN + CP_LOC_FILE_LEN + 16)

enum cp_issue_match_kind {
	CP_MATCH_SAME = 0,     /* type, location and object */
	CP_MATCH_MOVED,	       /* type, function and object's site: the line moved */
	CP_MATCH_TYPE_CHANGED, /* location and object's site; another type or origin */
	CP_MATCH_GONE,	       /* in BEFORE only */
	CP_MATCH_NEW,	       /* in AFTER only */
	CP_MATCH_KIND_NR,
};

/* What an issue is known by across runs. Strings are the target's: print them with care. */
struct cp_issue_key {
	enum cp_issue_type type;
	enum cp_issue_origin origin;
	char where[CP_ISSUE_WHERE_LEN];	    /* "work.c:94", "worker", "0x401234" */
	char function[CP_LOC_FUNCTION_LEN]; /* of the main instruction; "" unknown */
	/* "heap object from main (work.c:155)", "global variable hits", "" for none */
	char object[CP_ISSUE_OBJECT_LEN];
	/* the same without the site's file and line: "heap object from main" */
	char object_site[CP_ISSUE_SITE_LEN];
	__u32 line;	 /* of where, 0 when it is no line */
	__u32 site_line; /* of the heap object's site, 0 when unknown */
};

/* One row of a diff: an index into BEFORE and one into AFTER; -1 where there is none. */
struct cp_issue_pair {
	enum cp_issue_match_kind kind;
	int before;
	int after;
};

/* Fills @k with @is's key. */
void cp_issue_key_of(const struct cp_issue *is, struct cp_issue_key *k);

/*
 * Pairs @nb issues of BEFORE with @na of AFTER (each list ranked, most
 * impact first) into @out, which has room for @nb + @na pairs: first one pair
 * per BEFORE issue in its rank order (paired or gone), then the new ones in
 * AFTER's rank order; *@nr_out says how many. 0, or -ENOMEM (for the keys).
 */
int cp_issue_match(const struct cp_issue *before, size_t nb, const struct cp_issue *after,
		   size_t na, struct cp_issue_pair *out, size_t *nr_out);

/* "same", "moved", "type_changed", "gone", "new". */
const char *cp_issue_match_name(enum cp_issue_match_kind k);

#endif /* CP_ISSUE_MATCH_H */
