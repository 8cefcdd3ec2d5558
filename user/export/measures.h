/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What an exported stack's values are, by sample source (docs/pprof.md):
 *   pebs, ibs   samples/count, misses/count, latency/cycles; main: misses
 *   soft        ticks/count, and cpu/nanoseconds when the tick period is
 *               known (a live run: ticks x 1e9 / --soft-freq); main: ticks.
 *               Impact is time share: there is no misses value, as the
 *               source measures none
 *   faults      samples/count (page faults); main: samples
 * Values are sampled counts, as the report's; the period says how many
 * events one stands for where that is one number. Pure.
 */
#ifndef CP_MEASURES_H
#define CP_MEASURES_H

#include <linux/types.h>

#include "export/pprof_build.h"
#include "profile/sample_stacks.h"
#include "machine/source.h"

enum cp_measure {
	CP_MEASURE_SAMPLES = 0,
	CP_MEASURE_MISSES,
	CP_MEASURE_LATENCY,
	CP_MEASURE_TICKS,
	CP_MEASURE_CPU_NS,
};

struct cp_measures {
	enum cp_measure m[CP_PPROF_MAX_TYPES];
	unsigned int nr;
	unsigned int main;    /* index in m[]: folded stacks' value, pprof's default */
	__u64 tick_period_ns; /* soft: ns of CPU time per tick; 0: not known */
	struct cp_pprof_value_type period_type; /* type NULL: none */
	__s64 period;
};

/*
 * The measures of a run of @source. @tick_period_ns: soft only, 0 when
 * unknown; @load_period, @store_period: the PMU's (one period only when
 * they are equal).
 */
void cp_measures_of(enum cp_source_kind source, __u64 tick_period_ns, __u64 load_period,
		    __u64 store_period, struct cp_measures *out);

/* pprof's name and unit of @m ("misses", "count"). */
struct cp_pprof_value_type cp_measure_type(enum cp_measure m);

/* The value of @m for counts @c (CPU time from @ms->tick_period_ns). */
__s64 cp_measure_value(const struct cp_measures *ms, enum cp_measure m,
		       const struct cp_stack_counts *c);

#endif /* CP_MEASURES_H */
