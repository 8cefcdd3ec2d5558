/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPU time as the kernel accounts it: a process's (user + system, all its
 * threads, from /proc/PID/stat) and the machine's busy time (every CPU, from
 * /proc/stat). The overhead budget is a share of these.
 */
#ifndef CP_CPU_TIME_H
#define CP_CPU_TIME_H

#include <sys/types.h>
#include <linux/types.h>

/*
 * Pure: utime + stime in clock ticks from the text of /proc/PID/stat (@text,
 * NUL-terminated). The comm field may hold spaces and parentheses: the fields
 * are counted from its last ')'. 0 and *@ok false when the text is not that.
 */
__u64 cp_stat_cpu_ticks(const char *text, int *ok);

/* Pure: the busy clock ticks (all but idle and iowait) of the "cpu " line of /proc/stat. */
__u64 cp_proc_stat_busy_ticks(const char *text, int *ok);

/* @pid's CPU time in ns, all threads; 0 when it cannot be read (gone). */
__u64 cp_proc_cpu_ns(const char *proc_root, pid_t pid);

/* The machine's busy CPU time in ns, all CPUs; 0 when /proc/stat cannot be read. */
__u64 cp_machine_busy_ns(const char *proc_root);

#endif /* CP_CPU_TIME_H */
