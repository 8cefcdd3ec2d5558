/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ground truth of a simulated run: every access's true miss class added up
 * per instruction, per line and per object (heap objects by allocation,
 * globals by ELF symbol), and the run's dominant issue decided from them.
 *
 * The dominant issue: nothing when the misses that are not compulsory stay
 * below the paper's application thresholds (3 % of loads and 1 % of
 * stores, §3.5); else the class (capacity, conflict, true or false sharing)
 * with the most misses, its instruction and object with the most misses of
 * that class, and its origin: false sharing is the allocator's when the
 * busiest falsely shared line holds several heap objects allocated by
 * different threads; conflict is the allocator's when the conflict misses
 * of its instruction fall in several heap objects (the paper's definitions,
 * decided here on every access instead of samples).
 */
#ifndef CP_ORACLE_TRUTH_H
#define CP_ORACLE_TRUTH_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "cache_sim.h"

struct cp_truth;
struct cp_elf_syms;

struct cp_truth *cp_truth__new(__u32 line_bytes);
void cp_truth__free(struct cp_truth *t);

/* Globals of the (non-PIE) executable, for objects outside the heap; may be NULL. */
void cp_truth__set_globals(struct cp_truth *t, const struct cp_elf_syms *syms);

void cp_truth__alloc(struct cp_truth *t, __u32 tid, __u64 ip, __u64 addr, __u64 size);
void cp_truth__free_obj(struct cp_truth *t, __u64 addr);
void cp_truth__access(struct cp_truth *t, __u32 tid, __u64 ip, __u64 addr, bool write,
		      const struct cp_sim_result *r);

/*
 * Writes the totals, the top instructions, lines and objects, and one line
 * "truth: class=... origin=... line=FILE:LINE object=... misses=N share=F"
 * (or "truth: none ...") to @f; @exe symbolizes instructions and call sites.
 */
void cp_truth__print(const struct cp_truth *t, const char *exe, FILE *f);

#endif /* CP_ORACLE_TRUTH_H */
