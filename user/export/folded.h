/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Collapsed stacks, the text flamegraph.pl, speedscope and inferno read:
 * one line per distinct stack, "comm;root_func;...;leaf_func count", the
 * root first. Each frame's inline chain is expanded (the function the
 * others were inlined into first); a frame with no function is
 * "0xADDR in lib.so" (its mapped file's name), or "[unknown]" outside every
 * file. The process is "pid-N" when its comm is not known. Names are made
 * printable and ';' becomes ':' (the separator); spaces before a number
 * that ends a name become '_', so no name adds a count to its line.
 * Identical stacks are
 * summed, stacks with a count of 0 left out, lines sorted: the same input
 * gives the same text. Pure: the caller writes the text where it wants.
 */
#ifndef CP_FOLDED_H
#define CP_FOLDED_H

#include <stdio.h>
#include <linux/types.h>

#include "export/export_stack.h"

struct cp_folded;

struct cp_folded *cp_folded__new(void);
void cp_folded__free(struct cp_folded *f);

/* Adds @s with the count @value. 0 or -ENOMEM. */
int cp_folded__add(struct cp_folded *f, const struct cp_export_stack *s, __u64 value);

/* Writes the lines (sorting and summing them first). 0, or -EIO when @out failed. */
int cp_folded__write(struct cp_folded *f, FILE *out);

#endif /* CP_FOLDED_H */
