// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Exported values by sample source (see measures.h). */
#include <string.h>

#include "export/measures.h"
#include "machine/source.h"

static const struct cp_pprof_value_type measure_types[] = {
	[CP_MEASURE_SAMPLES] = {"samples", "count"},  [CP_MEASURE_MISSES] = {"misses", "count"},
	[CP_MEASURE_LATENCY] = {"latency", "cycles"}, [CP_MEASURE_TICKS] = {"ticks", "count"},
	[CP_MEASURE_CPU_NS] = {"cpu", "nanoseconds"},
};

struct cp_pprof_value_type cp_measure_type(enum cp_measure m)
{
	return measure_types[m];
}

void cp_measures_of(enum cp_source_kind source, __u64 tick_period_ns, __u64 load_period,
		    __u64 store_period, struct cp_measures *out)
{
	const struct cp_source_desc *src = cp_source_of(source);

	memset(out, 0, sizeof(*out));
	if (src->needs_pmu) {
		out->m[out->nr++] = CP_MEASURE_SAMPLES;
		out->m[out->nr++] = CP_MEASURE_MISSES;
		out->m[out->nr++] = CP_MEASURE_LATENCY;
		out->main = 1;
		/* loads and stores have periods of their own: one number only when equal */
		out->period_type = (struct cp_pprof_value_type){"accesses", "count"};
		out->period = load_period == store_period ? (__s64)load_period : 0;
	} else if (src->by_time) {
		out->m[out->nr++] = CP_MEASURE_TICKS;
		if (tick_period_ns) {
			/* cpu-clock's period is fixed in ns (the kernel maps a frequency to one) */
			out->m[out->nr++] = CP_MEASURE_CPU_NS;
			out->tick_period_ns = tick_period_ns;
			out->period_type = (struct cp_pprof_value_type){"cpu", "nanoseconds"};
			out->period = (__s64)tick_period_ns;
		}
	} else {
		/* page faults: every one is a sample; nothing says hit or miss */
		out->m[out->nr++] = CP_MEASURE_SAMPLES;
		out->period_type = (struct cp_pprof_value_type){"page_faults", "count"};
		out->period = 1;
	}
}

__s64 cp_measure_value(const struct cp_measures *ms, enum cp_measure m,
		       const struct cp_stack_counts *c)
{
	switch (m) {
	case CP_MEASURE_SAMPLES:
		return (__s64)c->samples;
	case CP_MEASURE_MISSES:
		return (__s64)c->misses;
	case CP_MEASURE_LATENCY:
		return (__s64)c->lat_sum;
	case CP_MEASURE_TICKS:
		return (__s64)c->ticks;
	case CP_MEASURE_CPU_NS:
		return (__s64)(c->ticks * ms->tick_period_ns);
	}
	return 0;
}
