/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-process summaries of a system-wide run (-a): pid, comm, cgroup and
 * container, samples and misses. Processes come and go: an exited process
 * keeps its summary for the report but leaves the pid index, so a reused
 * pid starts a new summary. Pure and bounded: at the cap the least recently
 * sampled summary is evicted (exited ones first, up to a sixteenth of the
 * cap of them at once), counted.
 */
#ifndef CP_PROC_SUMMARIES_H
#define CP_PROC_SUMMARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/proc_cgroup.h"

#define CP_MAX_PROC_SUMMARIES 4096 /* default cap */
#define CP_PROC_COMM_LEN      16   /* TASK_COMM_LEN */

struct cp_proc_summary {
	pid_t pid;
	char comm[CP_PROC_COMM_LEN]; /* "" when the process was gone before it was read */
	struct cp_cgroup_info cg;
	__u64 samples; /* forwarded samples */
	__u64 misses;  /* ... that were misses (PMU sources) */
	__u32 execs;   /* exec'd while summarized (comm re-read each time) */
	bool exited;
	__u64 last_use; /* LRU stamp */
};

#define CP_PROC_CGROUPS_KEPT 64 /* cgroups known by their ids, for the execs to come */

/* What a describe function is asked to fill. */
enum {
	CP_DESCRIBE_COMM = 1u << 0,
	CP_DESCRIBE_CGROUP = 1u << 1,
	CP_DESCRIBE_CGROUP_LINES = 1u << 2, /* and cg.lines, looked up */
};

/*
 * Fills what @what names of @s (pid set; comm and cgroup) from the live
 * system; may leave them empty.
 */
typedef void (*cp_proc_describe_fn)(void *ctx, struct cp_proc_summary *s, unsigned int what);

struct cp_proc_summaries;

/* At most @max summaries (0: CP_MAX_PROC_SUMMARIES); @describe may be NULL (offline). */
struct cp_proc_summaries *cp_proc_summaries__new(size_t max, cp_proc_describe_fn describe,
						 void *ctx);
void cp_proc_summaries__free(struct cp_proc_summaries *t);

/*
 * One sample of process @pid (@miss: a miss). The first sample of a pid
 * not summarized (or exited since) describes it. Returns 0, or -ENOMEM
 * never: at the cap an old summary makes room.
 */
int cp_proc_summaries__sample(struct cp_proc_summaries *t, pid_t pid, bool miss);

/*
 * @pid exec'd: a new comm (and maybe cgroup), the counts go on; a pid not
 * summarized yet gets its summary now (no sample), described while it lives.
 * The exec record's @comm ("" or NULL: not said) is taken as it is; its
 * @cgroup_id (0: not said) names a cgroup described before by another
 * process's exec, whose description is taken then. What the record does not
 * give is described. A description is kept by @cgroup_id only when it is of
 * that very cgroup (cg.id, as the describe function looked it up, equals
 * @cgroup_id: not a process moved since its exec), of the unified hierarchy
 * and not its root. A hybrid host describes processes at the v2 root by
 * their v1 paths: there a description is kept by @cgroup_id and
 * @cgroup_v1 (the record's cgroup_v1, 0: not said) when the lines of its
 * text, looked up (cg.lines), are the cgroups the record names.
 */
void cp_proc_summaries__exec(struct cp_proc_summaries *t, pid_t pid, const char *comm,
			     __u64 cgroup_id, __u64 cgroup_v1);

/* Told each time summary @s was described anew (its first sample, an exec). */
typedef void (*cp_proc_described_fn)(void *ctx, const struct cp_proc_summary *s);

void cp_proc_summaries__on_described(struct cp_proc_summaries *t, cp_proc_described_fn fn,
				     void *ctx);

/*
 * A description read elsewhere (a recording's, CP_REC_PROC_DESC): @pid's
 * live summary, created if it has none (no sample), takes @comm (cut to
 * fit) and @cg.
 */
void cp_proc_summaries__describe_as(struct cp_proc_summaries *t, pid_t pid, const char *comm,
				    const struct cp_cgroup_info *cg);

/* @pid exited: its summary stays for the report, the pid may be reused. */
void cp_proc_summaries__exit(struct cp_proc_summaries *t, pid_t pid);

/*
 * The @n summaries with the most samples into @out, most first; returns how
 * many. Summaries without a sample (exec'd, not sampled) come last.
 */
size_t cp_proc_summaries__top(const struct cp_proc_summaries *t, const struct cp_proc_summary **out,
			      size_t n);

/*
 * The summary of @pid: the live process's, else the one of an exited process
 * with that pid that was sampled last; NULL when none is held.
 */
const struct cp_proc_summary *cp_proc_summaries__find(const struct cp_proc_summaries *t, pid_t pid);

size_t cp_proc_summaries__count(const struct cp_proc_summaries *t); /* held now */
__u64 cp_proc_summaries__seen(const struct cp_proc_summaries *t);   /* ever created */
__u64 cp_proc_summaries__evicted(const struct cp_proc_summaries *t);

#endif /* CP_PROC_SUMMARIES_H */
