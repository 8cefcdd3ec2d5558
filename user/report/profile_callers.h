/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The callers of an issue's instruction line from a profile's stack store
 * (profile/stack_store.h), located with its symbolizer: the report's
 * cp_insn_callers_fn. A stack belongs to the line when its first frame is
 * the listed instruction, or one within CP_CALLERS_NEAR_BYTES of it that
 * the symbolizer places on the same file and line (a line has several
 * instructions; the classifier lists the one with the most misses). Paths
 * are the stacks' frames after the first, merged when equal, weighed in
 * the line's unit: ticks with the soft source, else misses when any, else
 * samples, else breakpoint hits. Ties go by the frames' addresses, so a
 * replay lists the same paths in the same order.
 */
#ifndef CP_PROFILE_CALLERS_H
#define CP_PROFILE_CALLERS_H

#include "profile/profile.h"
#include "report/insn_callers.h"

#define CP_CALLERS_NEAR_BYTES (64u << 10)

/* cp_insn_callers_fn on @ctx, a struct cp_profile. */
int cp_profile_insn_callers(void *ctx, const struct cp_issue_insn *in, unsigned int max,
			    struct cp_insn_callers *out);

#endif /* CP_PROFILE_CALLERS_H */
