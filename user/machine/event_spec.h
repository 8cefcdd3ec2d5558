/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An event to open many times (once per CPU or per thread): the attributes,
 * an optional counting-only group leader, and how each instance's sample
 * period is randomised. Built by pmu_attr.c for PEBS/IBS, by callers for
 * software events; opened by perf_events.c. Pure.
 */
#ifndef CP_EVENT_SPEC_H
#define CP_EVENT_SPEC_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#define CP_EVENT_NAME_LEN 32

/* What an opened event samples; the rate cap scales a CPU's events together. */
enum cp_event_role {
	CP_EVENT_LOAD = 0, /* PEBS mem-loads */
	CP_EVENT_STORE,	   /* PEBS mem-stores */
	CP_EVENT_MEM,	   /* IBS op: loads and stores (and other ops) */
	CP_EVENT_AUX,	   /* counting-only group leader (mem-loads-aux) */
	CP_EVENT_OTHER,	   /* software events: page faults, cpu-clock */
};

struct cp_event_spec {
	char name[CP_EVENT_NAME_LEN]; /* "mem-loads", "page-faults": named in errors */
	enum cp_event_role role;
	struct perf_event_attr attr; /* sample_period is the base period */
	bool has_leader;
	char leader_name[CP_EVENT_NAME_LEN];
	struct perf_event_attr leader; /* opened first, @attr joins its group */
	bool pmu_event;		       /* hardware PMU: ENOENT/EOPNOTSUPP/ENODEV mean no PMU */
	bool probe_precise;	       /* lower precise_ip on EOPNOTSUPP/EINVAL */
	__u32 jitter_pct;	       /* each instance's period within base +- pct % */
	__u64 jitter_seed;
	__u32 period_align; /* periods are multiples of this (IBS: 16); 0 or 1: any */
	__u64 max_period;   /* the rate cap never raises a period above; 0: none */
};

/*
 * Base period @base randomised for instance @key (a CPU number or a TID):
 * uniform in [base - base*pct/100, base + base*pct/100], the same for the
 * same (seed, key), rounded down to a multiple of @align and never below
 * @align (or 1). Paper §3.1: CPUs with identical periods sample in
 * lock-step on loops that run everywhere, and alias with periodic code.
 */
__u64 cp_period_jitter(__u64 base, __u32 pct, __u64 seed, __u64 key, __u32 align);

/* The attributes of instance @key of @spec: @spec->attr with its jittered period. */
void cp_event_spec_instance(const struct cp_event_spec *spec, __u64 key,
			    struct perf_event_attr *attr);

/*
 * The bpf_cookie of an event of @role, which on_mem_sample reads as the
 * sample's enum cp_sample_event (cacheperf/data_src.h): mem-loads, mem-stores
 * or an IBS op; 0 (unknown) for the others.
 */
__u64 cp_event_role_cookie(enum cp_event_role role);

/*
 * The precise_ip probe: after perf_event_open of @spec failed with @err
 * (negative errno), lowers spec->attr.precise_ip by one and returns 0 when
 * another attempt makes sense (cp_pmu_precise_next()), else returns @err
 * and leaves @spec unchanged.
 */
int cp_event_spec_lower_precise(struct cp_event_spec *spec, int err);

#endif /* CP_EVENT_SPEC_H */
