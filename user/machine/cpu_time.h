/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPU time as the kernel accounts it: a process's (user + system, all its
 * threads, from /proc/PID/stat) and the machine's busy time (every CPU, from
 * /proc/stat). The overhead budget is a share of these.
 */
#ifndef CP_CPU_TIME_H
#define CP_CPU_TIME_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * Pure: utime + stime in clock ticks from the text of /proc/PID/stat (@text,
 * NUL-terminated). The comm field may hold spaces and parentheses: the fields
 * are counted from its last ')'. 0 and *@ok false when the text is not that.
 */
__u64 cp_stat_cpu_ticks(const char *text, int *ok);

/*
 * Pure: the state letter of /proc/PID/stat's text (R, S, Z, ...), after the
 * comm's last ')'; 0 when the text is not that.
 */
char cp_stat_state(const char *text);

/* Pure: the busy clock ticks (all but idle and iowait) of the "cpu " line of /proc/stat. */
__u64 cp_proc_stat_busy_ticks(const char *text, int *ok);

/* @pid's CPU time in ns, all threads; 0 when it cannot be read (gone). */
__u64 cp_proc_cpu_ns(const char *proc_root, pid_t pid);

/* The machine's busy CPU time in ns, all CPUs; 0 when /proc/stat cannot be read. */
__u64 cp_machine_busy_ns(const char *proc_root);

/*
 * A CPU time read again and again (the profiling loop reads its targets'
 * ten times a second, in two places): /proc/PID/stat of one process
 * (@pid > 0) or the machine's /proc/stat (@pid <= 0), held open and read
 * with one pread rather than opened, read and closed. A process's is bound
 * to that process: once it is reaped the file reads as gone, even when its
 * pid is another's by then. Not thread-safe: one user.
 */
struct cp_cpu_src {
	int fd;		       /* < 0: not held (read by path, or gone) */
	pid_t pid;	       /* <= 0: the machine */
	bool gone;	       /* the process was not there at the open */
	const char *proc_root; /* NULL: "/proc" (the caller's string, kept) */
};

/* Opens @pid's (or the machine's) file; when it cannot be held, it is read by path each time. */
void cp_cpu_src_open(struct cp_cpu_src *c, const char *proc_root, pid_t pid);

/*
 * The CPU time in ns now (cp_proc_cpu_ns(), cp_machine_busy_ns()); 0 when
 * the process is gone. @alive (NULL: not asked): the process exists and is
 * no zombie; always true for the machine. /proc counts in clock ticks: a
 * reading of the same root and pid this thread made less than a tick ago,
 * by any source, of the machine or of a living process, is taken instead of
 * the file (so a process's may be a tick late to show its exit or its
 * pid's next owner).
 */
__u64 cp_cpu_src_ns(struct cp_cpu_src *c, bool *alive);

void cp_cpu_src_close(struct cp_cpu_src *c);

#endif /* CP_CPU_TIME_H */
