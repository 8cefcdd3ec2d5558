// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probes' per-CPU counts into the budget's estimate. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/cpu_costs.h"

/* Every CPU's counts into @c (libbpf_num_possible_cpus() of them, @nr); the caller frees. */
static int read_all(struct cacheperf *skel, struct cp_cpu_cost **c, int *nr)
{
	__u32 zero = 0;

	*nr = libbpf_num_possible_cpus();
	if (*nr <= 0)
		return *nr ? *nr : -ENOENT;
	/* a per-CPU value is rounded up to 8 bytes: cp_cpu_cost is all __u64 */
	*c = calloc((size_t)*nr, sizeof(**c));
	if (!*c)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.cpu_costs), &zero, *c)) {
		int err = -errno;

		free(*c);
		*c = NULL;
		return err;
	}
	return 0;
}

/* The budget's counts of @c. */
static struct cp_budget_cpu_counts counts_of(const struct cp_cpu_cost *c)
{
	return (struct cp_budget_cpu_counts){
		.ticks = c->ticks,
		.alloc_calls = c->alloc_calls,
		.bp_hits = c->bp_hits,
		.wakeups = c->wakeups,
		.syscalls = c->syscalls,
		.exit_traps = c->exit_traps,
		.alloc_prog_ns = c->alloc_prog_ns,
		.sys_prog_ns = c->sys_prog_ns,
		.tick_prog_ns = c->tick_prog_ns,
	};
}

int cp_cpu_costs__estimate(struct cacheperf *skel, const struct cp_unit_costs *u,
			   struct cp_budget_spent *s)
{
	struct cp_cpu_cost *c;
	int nr, err = read_all(skel, &c, &nr);

	if (err)
		return err;
	for (int cpu = 0; cpu < nr; cpu++) {
		struct cp_budget_cpu_counts n = counts_of(&c[cpu]);

		s->wakeups += n.wakeups;
		s->syscalls += n.syscalls;
		s->exit_traps += n.exit_traps;
		cp_budget_add_cpu(s, (__u32)cpu, cp_budget_cpu_ppm(u, &n, s->wall_ns));
	}
	free(c);
	return 0;
}

int cp_cpu_costs__sum(struct cacheperf *skel, struct cp_cpu_cost *out)
{
	struct cp_cpu_cost *c;
	int nr, err = read_all(skel, &c, &nr);

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	for (int cpu = 0; cpu < nr; cpu++) {
		out->ticks += c[cpu].ticks;
		out->alloc_calls += c[cpu].alloc_calls;
		out->bp_hits += c[cpu].bp_hits;
		out->wakeups += c[cpu].wakeups;
		out->syscalls += c[cpu].syscalls;
		out->exit_traps += c[cpu].exit_traps;
		out->alloc_prog_ns += c[cpu].alloc_prog_ns;
		out->alloc_prog_calls += c[cpu].alloc_prog_calls;
		out->sys_prog_ns += c[cpu].sys_prog_ns;
		out->tick_prog_ns += c[cpu].tick_prog_ns;
	}
	free(c);
	return 0;
}

int cp_cpu_costs__mark_calls(struct cacheperf *skel, __u64 until)
{
	__u64 *marks, sum = 0, share;
	struct cp_cpu_cost *c;
	__u32 zero = 0;
	int nr, err = read_all(skel, &c, &nr);

	if (err)
		return err;
	marks = calloc((size_t)nr, sizeof(*marks));
	if (!marks) {
		free(c);
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < nr; cpu++)
		sum += c[cpu].alloc_calls;
	share = until > sum ? (until - sum + (__u64)nr - 1) / (__u64)nr : 1;
	for (int cpu = 0; until && cpu < nr; cpu++)
		marks[cpu] = c[cpu].alloc_calls + share;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.alloc_cut_cpu), &zero, marks, BPF_ANY)
		      ? -errno
		      : 0;
	free(marks);
	free(c);
	return err;
}

int cp_cpu_costs__reading(struct cacheperf *skel, struct cp_budget_reading *r)
{
	struct cp_cpu_cost sum;
	int err = cp_cpu_costs__sum(skel, &sum);

	if (err)
		return err;
	r->c = counts_of(&sum);
	return 0;
}
