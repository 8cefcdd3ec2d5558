/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --max-sample-rate: keeps each CPU's (or, for per-thread events, each
 * thread's) sampling rate under a budget by raising sample periods, and
 * brings them back toward the configured ones when the load drops. Pure:
 * perf_events.c measures samples per interval and applies the new periods
 * with PERF_EVENT_IOC_PERIOD.
 *
 * How samples are counted: read(2) of a sampling event returns its counter
 * (events counted, children of inherited events included), so the samples
 * of an interval are (count - previous count) / period. That is exact for
 * software events and, for PEBS/IBS, off by at most one period per
 * interval. It needs no BPF change: the BPF side keeps only global counters
 * (cp_stats), which cannot tell which CPU is over budget.
 *
 * A unit's events (loads and stores of one CPU) are scaled by the same
 * factor, so their ratio, and the load/store mix the paper's filters rely
 * on, stays as configured.
 */
#ifndef CP_RATE_CAP_H
#define CP_RATE_CAP_H

#include <stddef.h>
#include <linux/types.h>

#define CP_RATE_MAX_EVENTS	4  /* sampling events of one CPU or thread */
#define CP_RATE_HEADROOM_PCT	25 /* aim at budget / 1.25 when raising */
#define CP_RATE_LOWER_BELOW_PCT 50 /* lower periods only under half the budget */

struct cp_rate_cap_cfg {
	__u64 max_rate;	       /* samples per second per unit; 0: no cap */
	__u32 headroom_pct;    /* new periods aim at max_rate * 100 / (100 + headroom_pct) */
	__u32 lower_below_pct; /* periods come down only while the rate is below this % */
};

#define CP_RATE_CAP_NS		 1000000000ull /* how often the cap is decided */
#define CP_RATE_KERNEL_SHARE_PCT 50	       /* of perf_event_max_sample_rate */

/*
 * The cap in effect: --max-sample-rate @user_max (0: none asked), or
 * CP_RATE_KERNEL_SHARE_PCT of the kernel's perf_event_max_sample_rate
 * @kernel_max (0: unknown) when lower. The kernel throttles an event whose
 * interrupts in one tick reach max_sample_rate / HZ
 * (__perf_event_account_interrupt(), kernel/events/core.c): it stops until
 * the next tick, the samples of that tick are lost, and only a ring buffer
 * would hear of it (PERF_RECORD_THROTTLE). It also lowers the limit itself
 * when interrupts take long (perf_sample_event_took()). A CPU's two events
 * and uneven ticks need the headroom.
 */
__u64 cp_rate_cap_limit(__u64 user_max, __u64 kernel_max);

/* --max-sample-rate @max_rate with the default headroom and hysteresis. */
void cp_rate_cap_cfg_init(struct cp_rate_cap_cfg *cfg, __u64 max_rate);

struct cp_rate_event {
	__u64 base_period; /* configured (after jitter): never gone below */
	__u64 period;	   /* in effect during the interval */
	__u64 samples;	   /* taken during the interval */
	__u64 max_period;  /* the PMU's limit; 0: none */
	__u32 align;	   /* periods are multiples of this (IBS: 16); 0: 1 */
	__u64 new_period;  /* output: the period to set (== period when unchanged) */
};

/* The sampling events of one CPU (per-CPU events) or one thread (per-thread). */
struct cp_rate_unit {
	int nr;
	struct cp_rate_event ev[CP_RATE_MAX_EVENTS];
};

/*
 * Decides new periods for @u after an interval of @elapsed_ns: when the
 * unit's samples/s exceed cfg->max_rate, every period is multiplied by
 * rate / target (target = the budget less the headroom), rounded up to its
 * alignment and capped at its max_period; when the rate falls under
 * lower_below_pct of the budget, periods above the base shrink by the same
 * rule but never below base_period. Fills ev[].new_period, stores the
 * measured rate (samples/s) in *@rate if non-NULL, and returns how many
 * periods change.
 */
int cp_rate_cap_decide(const struct cp_rate_cap_cfg *cfg, struct cp_rate_unit *u, __u64 elapsed_ns,
		       __u64 *rate);

/*
 * Estimated samples in an interval from two counter readings: the counted
 * events divided by @period (0 when @period is 0 or the counter went back).
 */
__u64 cp_rate_samples(__u64 prev_count, __u64 count, __u64 period);

#endif /* CP_RATE_CAP_H */
