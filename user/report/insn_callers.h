/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The callers of an issue's instruction: the call paths that reached its
 * source line, most counted first, each with its count and its frames as
 * located (one frame per inline level, like an allocation stack). What the
 * report shows under an issue's instructions (`--callers N` in the text, a
 * `callers` list in JSON). The report asks for them through
 * struct cp_callers_view; report/profile_callers.h answers from a
 * profile's stack store.
 */
#ifndef CP_INSN_CALLERS_H
#define CP_INSN_CALLERS_H

#include <stdbool.h>
#include <linux/types.h>

#include "classify/classify.h"

#define CP_CALLER_MAX_FRAMES 8	/* frames shown per path, inline levels included */
#define CP_CALLERS_JSON_MIN  5	/* JSON lists max(this, --callers) paths */
#define CP_CALLERS_MAX	     64 /* largest --callers */

/* One call path into the line: its callers, innermost first. */
struct cp_caller_path {
	__u64 count; /* of the line's unit reached through this path */
	__u32 nr_frames;
	bool more; /* frames beyond frames[] */
	struct cp_src_loc frames[CP_CALLER_MAX_FRAMES];
};

struct cp_insn_callers {
	const char *unit;	      /* "misses", "ticks", "samples" or "breakpoint hits" */
	__u64 total;		      /* the line's count with a stack: the shares' whole */
	__u32 nr_paths;		      /* distinct paths */
	__u32 nr;		      /* paths[] filled, most counted first */
	struct cp_caller_path *paths; /* the caller's room for @max */
};

/*
 * Fills @out (its paths[] has room for @max) with the top @max caller
 * paths of @in's line. 0, or -1 when nothing is known (no stacks).
 */
typedef int (*cp_insn_callers_fn)(void *ctx, const struct cp_issue_insn *in, unsigned int max,
				  struct cp_insn_callers *out);

/* How a report reaches the callers of its instructions. */
struct cp_callers_view {
	unsigned int top;      /* --callers: paths per instruction in the text; 0: none */
	cp_insn_callers_fn fn; /* NULL: no callers known */
	void *ctx;
};

#endif /* CP_INSN_CALLERS_H */
