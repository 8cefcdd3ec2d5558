// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-instance attributes of an event spec: period jitter and the precise_ip probe. */
#include <errno.h>

#include "cacheperf/data_src.h"
#include "machine/event_spec.h"
#include "machine/pmu.h"
#include "util/hash.h"

__u64 cp_period_jitter(__u64 base, __u32 pct, __u64 seed, __u64 key, __u32 align)
{
	__u64 span, p = base;

	if (align < 1)
		align = 1;
	if (pct > 0 && pct < 100 && base > 0) {
		span = base / 100 * pct + base % 100 * pct / 100;
		/* 2 * span + 1 outcomes: base - span .. base + span */
		p = base - span + cp_splitmix64(seed ^ cp_splitmix64(key)) % (2 * span + 1);
	}
	p -= p % align;
	return p < align ? align : p;
}

void cp_event_spec_instance(const struct cp_event_spec *spec, __u64 key,
			    struct perf_event_attr *attr)
{
	*attr = spec->attr;
	if (!attr->freq && attr->sample_period)
		attr->sample_period = cp_period_jitter(spec->attr.sample_period, spec->jitter_pct,
						       spec->jitter_seed, key, spec->period_align);
}

__u64 cp_event_role_cookie(enum cp_event_role role)
{
	switch (role) {
	case CP_EVENT_LOAD:
		return CP_SEV_LOAD;
	case CP_EVENT_STORE:
		return CP_SEV_STORE;
	case CP_EVENT_MEM:
		return CP_SEV_IBS;
	default:
		return CP_SEV_UNKNOWN;
	}
}

int cp_event_spec_lower_precise(struct cp_event_spec *spec, int err)
{
	int next;

	if (!spec->probe_precise)
		return err;
	next = cp_pmu_precise_next(spec->attr.precise_ip, err);
	if (next < 0)
		return err;
	spec->attr.precise_ip = next;
	return 0;
}
