/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When a record of the `events` ring buffer wakes the reader. One policy for
 * the memory samples (mem_sample.bpf.h, so the soft ticks too) and the
 * allocation events (alloc.bpf.c); breakpoint records are not rate-limited:
 * they force their wakeup themselves (breakpoint.bpf.c), as the breakpoint
 * keeps trapping until user space reads them.
 *
 * A forced wakeup is an irq_work self-IPI: an APIC write, a VM exit in a guest,
 * ~5 us here, charged to the interrupted target. The ring buffer's default
 * wakes the reader on every record that finds it caught up, so records wake
 * it only when CP_RINGBUF_WAKEUP_BYTES wait (or, if the caller asks, when
 * its quiet time passed), and never twice within wakeup_min_ns on one CPU:
 * a reader that lags (busy, or not polling) leaves the data above the
 * threshold, and every record would otherwise force a wakeup. The reader
 * polls with a timeout (CP_TICK_MS, user/live/run.c), so records that woke
 * nobody are read within a tick.
 */
#ifndef CACHEPERF_WAKEUP_BPF_H
#define CACHEPERF_WAKEUP_BPF_H

#include "cpu_cost.bpf.h"

/*
 * At most one forced wakeup per CPU per wakeup_min_ns: 1 ms (5 us per ms,
 * 0.5 % of a CPU) unless the overhead budget sets more after load
 * (budget/budget.h: a sixteenth of the budget).
 */
#define CP_WAKEUP_MIN_NS 1000000ull
#ifdef CP_DEFINE_SHARED
__u64 wakeup_min_ns = CP_WAKEUP_MIN_NS;
#else
extern __u64 wakeup_min_ns;
#endif

/*
 * The flags for bpf_ringbuf_submit() of a record: BPF_RB_FORCE_WAKEUP when
 * CP_RINGBUF_WAKEUP_BYTES wait or, if @quiet_ns is not 0, @quiet_ns passed
 * since this CPU's last forced wakeup; never within wakeup_min_ns of it.
 * @now is bpf_ktime_get_ns(), or 0 to read the clock only when the data
 * waiting is over the threshold (what a sample's emit does: the common case
 * then costs one ring-buffer query).
 */
#define cp_wakeup_flag(now, quiet_ns)                                                              \
	cp_wakeup_flag_of(&events, CP_RINGBUF_WAKEUP_BYTES, (now), (quiet_ns))

/* cp_wakeup_flag() for the ring buffer @ring, woken when @wake_bytes wait. */
static __always_inline __u64 cp_wakeup_flag_of(void *ring, __u64 wake_bytes, __u64 now,
					       __u64 quiet_ns)
{
	bool over = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wake_bytes;
	struct cp_cpu_cost *c;

	if (!over && !quiet_ns)
		return BPF_RB_NO_WAKEUP;
	c = cp_cpu_cost();
	if (!c)
		return BPF_RB_NO_WAKEUP;
	if (!now)
		now = bpf_ktime_get_ns();
	if (now - c->last_wakeup_ns < wakeup_min_ns ||
	    (!over && now - c->last_wakeup_ns < quiet_ns))
		return BPF_RB_NO_WAKEUP;
	c->last_wakeup_ns = now;
	c->wakeups++;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * A forced wakeup now, whatever the spacing, counted with the others: for a
 * record the reader must see at once (a target's exec, targets.bpf.c). The
 * default (0) wakes the reader only when it has read everything before, and
 * samples submitted without a wakeup may be waiting ahead of the record.
 */
static __always_inline __u64 cp_wakeup_force(void)
{
	struct cp_cpu_cost *c = cp_cpu_cost();

	if (c) {
		c->last_wakeup_ns = bpf_ktime_get_ns();
		c->wakeups++;
	}
	return BPF_RB_FORCE_WAKEUP;
}

#endif /* CACHEPERF_WAKEUP_BPF_H */
