/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the profiler itself costs: its CPU time. */
#ifndef CP_SELF_USAGE_H
#define CP_SELF_USAGE_H

#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

/*
 * User + system CPU time of the profiler in ns: every thread of this
 * process, those that ended too (getrusage RUSAGE_SELF), and its helper
 * processes once waited for (cp_self_helpers_add_ns()). Not RUSAGE_CHILDREN:
 * that would add the command of `-- CMD`, a target. 0 when it cannot be
 * read.
 */
__u64 cp_self_cpu_ns(void);

/*
 * Adds a helper process's CPU time (a parse worker's, from wait4()) to what
 * cp_self_cpu_ns() counts. Thread-safe.
 */
void cp_self_helpers_add_ns(__u64 ns);

/* The helper processes' CPU time counted so far, ns. */
__u64 cp_self_helpers_cpu_ns(void);

/*
 * A long-lived helper (symbols/sym_server.h) whose CPU time counts while it
 * runs: its clock (clock_getcpuclockid()), read by cp_self_helpers_cpu_ns();
 * @on false once it ended, before its CPU time is added. One at a time in
 * each @slot (below CP_SELF_HELPER_CLOCKS).
 */
#define CP_SELF_HELPER_CLOCKS 2
void cp_self_helper_clock(unsigned int slot, clockid_t clock, bool on);

struct rusage;
/* User + system CPU time of @ru in ns (a child's, from wait4()). */
__u64 cp_rusage_cpu_ns(const struct rusage *ru);

/* Its memory as the kernel counts it: cp_self_mem_read() in machine/self_mem.h. */

/*
 * The "KEY: N kB" field @key of /proc/self/status (VmRSS, VmData...), in
 * bytes, into @bytes. 0, or -errno (-ENOENT: no such field).
 */
int cp_self_status_bytes(const char *key, __u64 *bytes);

/*
 * The resident set, in bytes, of the process whose /proc/PID/statm is open
 * at @fd (read again from its start: one pread, no open, which a
 * sandboxed child may no longer do). 0 when it cannot be read.
 */
__u64 cp_statm_resident_bytes(int fd);

#endif /* CP_SELF_USAGE_H */
