/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stacks of one frame from an instruction store, for what has no call
 * stack (cp_profile__for_each_sample_stack() in profile.h is the whole
 * run's mix). Pure, no I/O.
 */
#ifndef CP_SAMPLE_STACKS_H
#define CP_SAMPLE_STACKS_H

#include <stddef.h>

#include "profile/insn_store.h"
#include "profile/stack_store.h"

/*
 * Calls @fn for every instruction of @s not among the @nr_skip keys @skip
 * (sorted by tgid, then ip; __pad 0), a stack of one frame: samples = loads
 * + stores, misses = load + store misses, lat_sum, ticks =
 * cp_insn_time_samples() (the accesses of a soft run that counted no
 * ticks), bp_hits 0; most misses first, the same order for one store.
 * Stops at, and returns, @fn's first nonzero return; -ENOMEM; else 0.
 */
int cp_insn_leaf_stacks(const struct cp_insn_store *s, const struct cp_ip_key *skip, size_t nr_skip,
			cp_stack_fn fn, void *ctx);

/*
 * Calls @fn for every entry of @stacks, then (cp_insn_leaf_stacks()) for
 * every instruction of @insns that no entry starts with: what the exports
 * draw of a run (the profile's stores) or of an interval (its stacks and
 * its epoch). Stops at, and returns, @fn's first nonzero return; -ENOMEM.
 */
int cp_sample_stacks(const struct cp_stack_store *stacks, const struct cp_insn_store *insns,
		     cp_stack_fn fn, void *ctx);

#endif /* CP_SAMPLE_STACKS_H */
