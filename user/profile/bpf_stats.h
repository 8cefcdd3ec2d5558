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
#include "profile/run_facts.h"

/* @out = @now - @then, field by field (counters that only grow). */
void cp_stats_delta(const struct cp_stats *now, const struct cp_stats *then, struct cp_stats *out);

/* True when the source said nothing about levels: every sample is "not available". */
bool cp_stats_levels_unknown(const struct cp_stats *b);

#define CP_BLIND_MIN_SAMPLES 1000 /* before a PMU is judged blind */
#define CP_BLIND_PCT	     99

/*
 * True when a PMU source (@ibs: IBS, else PEBS) gave at least
 * CP_BLIND_MIN_SAMPLES samples and CP_BLIND_PCT % of them carry no data
 * source: a kernel without data-source decoding for this CPU (one older than
 * the CPU) makes every PEBS sample NA, a silent empty profile. IBS samples
 * other ops too (not_mem), so only its loads and stores are judged.
 */
bool cp_stats_pmu_blind(const struct cp_stats *b, bool ibs);

/*
 * Adds program @name's @misses skipped runs to @d: into the total, and
 * into d->progs, kept the CP_MAX_PROG_DROPS programs with the most, most
 * first (a program with none is not named).
 */
void cp_live_drops_add_prog(struct cp_live_drops *d, const char *name, __u64 misses);

#endif /* CP_BPF_STATS_H */
