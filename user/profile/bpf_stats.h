/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF counters of a run (struct cp_stats, cacheperf/abi.h) as user space
 * reads them: their growth over a window, and what they say about the source.
 * Pure.
 */
#ifndef CP_BPF_STATS_H
#define CP_BPF_STATS_H

#include <stdbool.h>

#include "cacheperf/abi.h"

/* @out = @now - @then, field by field (counters that only grow). */
void cp_stats_delta(const struct cp_stats *now, const struct cp_stats *then, struct cp_stats *out);

/* True when the source said nothing about levels: every sample is "not available". */
bool cp_stats_levels_unknown(const struct cp_stats *b);

#endif /* CP_BPF_STATS_H */
