/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --max-alloc-rate: the allocation-rate guard of one probed process (or of
 * the system-wide probes with -a). Every allocator call through a uprobe
 * costs about a microsecond even when the probe is placed well, so a
 * service making millions of calls per second would be slowed by half; past
 * the budget the allocation probes are detached for a back-off period, and
 * objects allocated meanwhile are unknown. Back-offs that follow each other
 * double (up to max_backoff_ns); intervals under half the budget shrink the
 * next one back toward backoff_ns.
 *
 * Pure: user/live/alloc_probes.c counts calls in BPF (alloc_calls), feeds them
 * here once per tick and detaches or re-attaches as told.
 */
#ifndef CP_ALLOC_GUARD_H
#define CP_ALLOC_GUARD_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_GUARD_INTERVAL_NS	 100000000ull	/* rates are measured over >= 100 ms */
#define CP_GUARD_BACKOFF_NS	1000000000ull	/* first back-off: 1 s */
#define CP_GUARD_MAX_BACKOFF_NS	60000000000ull	/* at most 60 s */

struct cp_alloc_guard_cfg {
	__u64 max_rate;		/* allocator calls per second; 0: no guard */
	__u64 interval_ns;	/* shortest measuring interval */
	__u64 backoff_ns;	/* first back-off */
	__u64 max_backoff_ns;
};

/* --max-alloc-rate @max_rate with the default intervals. */
void cp_alloc_guard_cfg_init(struct cp_alloc_guard_cfg *cfg, __u64 max_rate);

enum cp_guard_action {
	CP_GUARD_NONE = 0,
	CP_GUARD_DETACH,	/* over budget: detach the allocation probes */
	CP_GUARD_ATTACH,	/* back-off over: attach them again */
};

struct cp_alloc_guard {
	bool backed_off;
	__u64 window_start_ns;	/* start of the interval being measured */
	__u64 window_calls;	/* calls counted in it so far */
	__u64 until_ns;		/* end of the current back-off */
	__u64 since_ns;		/* start of the current back-off */
	__u64 next_backoff_ns;	/* length of the next back-off */
	__u64 last_rate;	/* calls/s of the last complete interval */
	__u64 backoffs;		/* back-offs so far */
	__u64 backoff_total_ns;	/* time spent backed off (completed back-offs) */
};

/* A guard starting to measure at @now_ns. */
void cp_alloc_guard_init(struct cp_alloc_guard *g, const struct cp_alloc_guard_cfg *cfg,
			 __u64 now_ns);

/*
 * One tick at @now_ns with @calls counted since the previous tick. Returns
 * what to do with the probes; when it returns CP_GUARD_DETACH the caller must
 * detach them (calls counted while backed off are ignored) and attach them
 * again on CP_GUARD_ATTACH.
 */
enum cp_guard_action cp_alloc_guard_tick(struct cp_alloc_guard *g,
					 const struct cp_alloc_guard_cfg *cfg, __u64 calls,
					 __u64 now_ns);

#endif /* CP_ALLOC_GUARD_H */
