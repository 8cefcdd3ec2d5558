/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When a process started: with its pid, its identity (docs/security.md,
 * "Process identity"). A pid is reused once its process is reaped, so what
 * /proc/PID shows is the process of a record only if it started before the
 * record was made. The start is /proc/PID/stat's field 22 (starttime, clock
 * ticks since boot, CLOCK_BOOTTIME), told in CLOCK_MONOTONIC nanoseconds,
 * the clock of bpf_ktime_get_ns() and of every record's time_ns. The
 * parsing and the comparison are pure (tests/unit/test_proc_start.c).
 */
#ifndef CP_PROC_START_H
#define CP_PROC_START_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * Field 22 of a /proc/PID/stat text of @len bytes, counted after the last
 * ')' (comm may hold spaces and parentheses). 0, or -EINVAL when malformed.
 */
int cp_proc_stat_starttime(const char *text, size_t len, __u64 *ticks);

/*
 * @ticks (starttime, @hz a second) as CLOCK_MONOTONIC ns, given
 * CLOCK_BOOTTIME - CLOCK_MONOTONIC now (@boot_minus_mono_ns: time spent
 * suspended). The tick is rounded down: the start is at most one tick later.
 */
__u64 cp_proc_start_mono_ns(__u64 ticks, long hz, __u64 boot_minus_mono_ns);

/*
 * Whether a process that started at @start_ns (cp_proc_start_mono_ns())
 * surely started after @when_ns: then it is not the process a record made
 * at @when_ns speaks of, only one that took its pid since. 0 is unknown on
 * either side (never after).
 */
bool cp_proc_started_after(__u64 start_ns, __u64 when_ns);

/* @pid's starttime (clock ticks since boot), from /proc/PID/stat. -ESRCH: gone. */
int cp_proc_starttime(pid_t pid, __u64 *ticks);

/*
 * @ticks as CLOCK_MONOTONIC ns with this machine's clocks now. Two calls
 * may differ by the nanoseconds between their clock readings: processes
 * are told apart by their ticks, compared with records by this.
 */
__u64 cp_proc_ticks_mono_ns(__u64 ticks);

#endif /* CP_PROC_START_H */
