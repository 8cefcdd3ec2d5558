// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The call sites waiting to be unwound (see site_jobs.h). */
#include <errno.h>
#include <stdlib.h>

#include "live/site_jobs.h"

int cp_site_jobs_init(struct cp_site_jobs *q)
{
	*q = (struct cp_site_jobs){0};
	q->v = calloc(CP_SITE_JOBS, sizeof(*q->v));
	return q->v ? 0 : -ENOMEM;
}

void cp_site_jobs_free(struct cp_site_jobs *q)
{
	free(q->v);
	q->v = NULL;
	q->nr = 0;
}

bool cp_site_jobs_has(const struct cp_site_jobs *q, __u32 tgid, __u64 caller, __s64 stack_id)
{
	for (size_t i = 0; i < q->nr; i++) {
		const struct cp_alloc_stack_record *r = &q->v[(q->head + i) % CP_SITE_JOBS].r;

		if (r->tgid == tgid && r->caller == caller && r->stack_id == stack_id)
			return true;
	}
	return false;
}

struct cp_site_job *cp_site_jobs_add(struct cp_site_jobs *q)
{
	struct cp_site_job *j;

	if (!q->v || q->nr == CP_SITE_JOBS)
		return NULL;
	j = &q->v[(q->head + q->nr++) % CP_SITE_JOBS];
	q->queued++;
	if (q->nr > q->most)
		q->most = q->nr;
	return j;
}

struct cp_site_job *cp_site_jobs_take(struct cp_site_jobs *q)
{
	struct cp_site_job *j;

	if (!q->nr)
		return NULL;
	j = &q->v[q->head];
	q->head = (q->head + 1) % CP_SITE_JOBS;
	q->nr--;
	return j;
}

void cp_site_jobs_run_pid(struct cp_site_jobs *q, __u32 tgid,
			  void (*fn)(void *ctx, struct cp_site_job *j), void *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < q->nr; i++) {
		struct cp_site_job *j = &q->v[(q->head + i) % CP_SITE_JOBS];

		if (j->r.tgid == tgid) {
			fn(ctx, j);
			continue;
		}
		if (kept != i)
			q->v[(q->head + kept) % CP_SITE_JOBS] = *j;
		kept++;
	}
	q->nr = kept;
}
