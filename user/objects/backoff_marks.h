/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a back-off of the allocation-rate guard (alloc_guard.h) does to what
 * we know of a process's heap. While its probes are detached, allocations
 * and frees go unseen, so afterwards:
 *  - a tracked object allocated before the back-off ended may have been
 *    freed unseen and its memory handed to an object we never saw: an
 *    address in it is attributed with doubt ("may be stale");
 *  - heap or anonymous memory with no tracked object may have been
 *    allocated during the back-off, not only before attach.
 * Times are CLOCK_MONOTONIC ns, the clock of the allocation events
 * (bpf_ktime_get_ns()). Pure.
 */
#ifndef CP_BACKOFF_MARKS_H
#define CP_BACKOFF_MARKS_H

#include <stdbool.h>
#include <linux/types.h>

struct cp_backoff_marks {
	__u64 since_ns;	       /* backed off since then; 0: probes attached */
	__u64 doubt_before_ns; /* objects allocated before this may be stale */
	bool unseen;	       /* a back-off happened: untracked memory may be from it */
};

/* The guard backed off (@backed_off) or resumed at @now_ns. */
void cp_backoff_marks_on_guard(struct cp_backoff_marks *m, bool backed_off, __u64 now_ns);

/* Whether an object allocated at @alloc_ns may be stale. */
bool cp_backoff_marks_doubt(const struct cp_backoff_marks *m, __u64 alloc_ns);

/* exec: a new heap. Only a back-off still going on carries over. */
void cp_backoff_marks_on_exec(struct cp_backoff_marks *m);

#endif /* CP_BACKOFF_MARKS_H */
