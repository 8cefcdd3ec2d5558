/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call sites whose frames wait to be unwound: the ring-buffer callback
 * reads a new call site's frame-pointer walk from the BPF stack map (a
 * lookup) and takes its stack copy, and queues them here; the slow part,
 * CFI unwinding, which may open the program's and libraries' files (~100 ms
 * in a parse worker), runs between polls under a time budget
 * (live/run.c), so no ring waits on it. A bounded ring, oldest first: when
 * it is full, the oldest job is run at once to make room; before a process
 * event its process's jobs run, so that no frames land after it exec'd or
 * exited. Pure.
 */
#ifndef CP_SITE_JOBS_H
#define CP_SITE_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/alloc.h"

#define CP_SITE_JOBS	     64
#define CP_SITE_JOBS_TURN_NS 5000000ull /* run between two polls, then the rings again */

struct cp_site_job {
	struct cp_alloc_stack_record r; /* the site; ips[] the walk's, nr unused */
	size_t n;			/* frames of the walk in r.ips */
	bool have_copy;
	struct cp_ustack_record copy; /* the site's stack copy, for CFI */
};

struct cp_site_jobs {
	struct cp_site_job *v; /* CP_SITE_JOBS of them, a ring */
	size_t head, nr;
	__u64 queued; /* jobs ever queued */
	size_t most;  /* the most waiting at once */
};

/* 0, or -ENOMEM. */
int cp_site_jobs_init(struct cp_site_jobs *q);
void cp_site_jobs_free(struct cp_site_jobs *q);

/* Whether a job for site (@tgid, @caller, @stack_id) waits. */
bool cp_site_jobs_has(const struct cp_site_jobs *q, __u32 tgid, __u64 caller, __s64 stack_id);

/* A new job at the end, to fill; NULL when the ring is full (take the oldest first). */
struct cp_site_job *cp_site_jobs_add(struct cp_site_jobs *q);

/* The oldest job (valid until the next add), removed; NULL when none waits. */
struct cp_site_job *cp_site_jobs_take(struct cp_site_jobs *q);

/*
 * Calls @fn with each job of process @tgid, oldest first, and removes them;
 * the others keep their order (one pass). @fn must not add jobs.
 */
void cp_site_jobs_run_pid(struct cp_site_jobs *q, __u32 tgid,
			  void (*fn)(void *ctx, struct cp_site_job *j), void *ctx);

#endif /* CP_SITE_JOBS_H */
