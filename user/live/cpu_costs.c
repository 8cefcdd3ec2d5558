// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probes' per-CPU counts into the budget's estimate. */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/cpu_costs.h"

int cp_cpu_costs__estimate(struct cacheperf *skel, const struct cp_unit_costs *u,
			   struct cp_budget_spent *s)
{
	int nr = libbpf_num_possible_cpus();
	struct cp_cpu_cost *c;
	__u32 zero = 0;
	int err = 0;

	if (nr <= 0)
		return nr ? nr : -ENOENT;
	/* a per-CPU value is rounded up to 8 bytes: cp_cpu_cost is all __u64 */
	c = calloc((size_t)nr, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.cpu_costs), &zero, c)) {
		err = -errno;
		goto out;
	}
	for (int cpu = 0; cpu < nr; cpu++) {
		struct cp_budget_cpu_counts n = {
			.ticks = c[cpu].ticks,
			.alloc_calls = c[cpu].alloc_calls,
			.bp_hits = c[cpu].bp_hits,
			.wakeups = c[cpu].wakeups,
			.syscalls = c[cpu].syscalls,
		};

		s->wakeups += n.wakeups;
		s->syscalls += n.syscalls;
		cp_budget_add_cpu(s, (__u32)cpu, cp_budget_cpu_ppm(u, &n, s->wall_ns));
	}
out:
	free(c);
	return err;
}
