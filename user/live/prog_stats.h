/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel's run-time stats of a loaded BPF program, into budget/prog_cost.h's sums. */
#ifndef CP_PROG_STATS_H
#define CP_PROG_STATS_H

#include <stdbool.h>

#include "budget/prog_cost.h"

/*
 * Adds program @prog_fd's run time to @sum, and its runs to the calls when
 * @counts_calls (an entry program: one run per call). 0 or -errno.
 */
int cp_prog_cost_add(struct cp_prog_cost *sum, int prog_fd, bool counts_calls);

#endif /* CP_PROG_STATS_H */
