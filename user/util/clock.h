/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one clock of user space: CLOCK_MONOTONIC, the clock of BPF's
 * bpf_ktime_get_ns(), so times taken here compare with the events' own.
 */
#ifndef CP_CLOCK_H
#define CP_CLOCK_H

#include <linux/types.h>

/*
 * Returns CLOCK_MONOTONIC now, in nanoseconds. It never goes back and does
 * not count a suspend, so differences of two calls are durations of the run
 * (refresh intervals, deadlines, rates) and compare with BPF's ktime stamps.
 */
__u64 cp_now_ns(void);

/*
 * Returns the wall-clock time (CLOCK_REALTIME, ns since the epoch, UTC) at
 * which CLOCK_MONOTONIC read @mono_ns, as the two clocks stand now: for
 * outputs that name a time of day (pprof's time_nanos), not for durations.
 */
__u64 cp_wall_ns_of(__u64 mono_ns);

#endif /* CP_CLOCK_H */
