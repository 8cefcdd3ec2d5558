/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the exported stacks come from: one callback per stack with its
 * counts, the shape of profile/'s cp_profile__for_each_stack() that the
 * user call-stack work brings (issue #19). Until it is merged, a stack is
 * the sampled instruction alone, from an instruction store
 * (cp_insn_stacks()). When it is: delete struct cp_stack_counts and
 * cp_stack_fn here (profile/ defines them, the same), and make the whole
 * run's source in export/export.c cp_profile__for_each_stack().
 */
#ifndef CP_STACK_SOURCE_H
#define CP_STACK_SOURCE_H

#include <linux/types.h>

#include "profile/insn_store.h"

struct cp_stack_counts {
	__u64 samples, misses, lat_sum, ticks, bp_hits;
};

/* pcs[0]: the sampled instruction; pcs[1..nr-1]: return addresses of its callers, innermost first
 */
typedef int (*cp_stack_fn)(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
			   const struct cp_stack_counts *c);

/*
 * Calls @fn for every instruction of @s, a stack of one frame: samples =
 * loads + stores, misses = load + store misses, lat_sum, ticks =
 * cp_insn_time_samples() (the accesses of a soft run that counted no
 * ticks), bp_hits 0. In the store's order (stable for one store). Stops at
 * the first non-zero return of @fn and returns it; else 0.
 */
int cp_insn_stacks(const struct cp_insn_store *s, cp_stack_fn fn, void *ctx);

#endif /* CP_STACK_SOURCE_H */
