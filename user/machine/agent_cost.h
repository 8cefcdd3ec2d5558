/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the profiler itself costs the machine it runs on: its CPU time
 * (user + system, every thread it ran, those that ended too:
 * cp_self_cpu_ns()) split at the moment sampling begins into start-up (from its
 * exec: loading and verifying the BPF programs, the calibration of the
 * probes' costs, opening and attaching the events and probes) and the
 * steady state since; and its memory as the kernel counts it
 * (machine/self_mem.h), now and at its peak.
 *
 * Its helper processes, the parse workers (symbols/parse_worker.h), are
 * counted once waited for (cp_self_helpers_add_ns()); its other child, the
 * command of `-- CMD`, is a target, whose CPU time is the targets'
 * (RUSAGE_CHILDREN, which would add it once waited for, is left out on
 * purpose). BPF programs run in
 * the targets' context: their cost is the overhead budget's, not this.
 *
 * cp_agent_cost_begin() and cp_agent_cost_read() read (the clock,
 * getrusage, /proc/self/stat, the memory counter); cp_agent_cost_split()
 * and cp_agent_cost_pct() are pure (tests/unit/test_agent_cost.c).
 */
#ifndef CP_AGENT_COST_H
#define CP_AGENT_COST_H

#include <stdbool.h>
#include <linux/types.h>

#include "machine/self_mem.h"

/* Where the start-up ended: the moment sampling began. */
struct cp_agent_since {
	__u64 exec_ns; /* the process's start, CLOCK_MONOTONIC; 0: not known */
	__u64 mono_ns; /* sampling began, CLOCK_MONOTONIC; 0: not yet (no figures) */
	__u64 cpu_ns;  /* the profiler's CPU time then */
};

/* The profiler's own cost so far: a live run's (a replay has none: known false). */
/* The records a live run's drain handled, and how long they took. */
struct cp_drain_timing {
	__u64 records;
	__u64 busy_ns;		/* handling them */
	__u64 longest_ns;	/* the longest one: the rings waited that long at once */
	__u32 longest_type;	/* its type (enum cp_record_type) */
	__u32 sites_most;	/* new call sites waiting to be unwound at once, at most */
	__u64 sites_queued;	/* new call sites whose unwinding was queued (live/site_jobs.h) */
	__u64 sites_in_drain;	/* ... run inside the callback: queue full, a process event */
	__u64 sites_longest_ns; /* the longest unwinding of one */
};

struct cp_agent_cost {
	bool known;	       /* a live run measured it */
	__u64 startup_cpu_ns;  /* CPU time from exec until sampling began */
	__u64 startup_wall_ns; /* ... the time it took; 0: the exec time not known */
	__u64 steady_cpu_ns;   /* CPU time since sampling began */
	__u64 steady_wall_ns;  /* ... the time since */
	bool memory_known;     /* the memory counter could be read */
	enum cp_self_mem_counter memory_counter; /* which count the bytes are */
	__u64 memory_bytes;			 /* the kernel's count now */
	__u64 peak_memory_bytes;      /* ... its peak (the kernel's, or the highest read) */
	struct cp_drain_timing drain; /* the ring buffers' records as handled */
};

/* Marks the end of the start-up: now, with the CPU time spent so far and the exec time. */
void cp_agent_cost_begin(struct cp_agent_since *since);

/*
 * The cost so far into @out: the CPU time and the clock now, split at
 * @since, and the memory counter (cp_self_mem_read()). @out->known is false
 * while @since is not marked; memory_known false when it cannot be read.
 */
void cp_agent_cost_read(const struct cp_agent_since *since, struct cp_agent_cost *out);

/*
 * Pure: @out's CPU and wall figures from @since and a reading of the CPU
 * time @cpu_now_ns at @now_ns (clamped: never negative). The memory fields
 * are left alone; known is false when @since is not marked.
 */
void cp_agent_cost_split(const struct cp_agent_since *since, __u64 cpu_now_ns, __u64 now_ns,
			 struct cp_agent_cost *out);

/* Pure: @cpu_ns as a percentage of one CPU over @wall_ns; 0 when @wall_ns is 0. */
double cp_agent_cost_pct(__u64 cpu_ns, __u64 wall_ns);

#endif /* CP_AGENT_COST_H */
