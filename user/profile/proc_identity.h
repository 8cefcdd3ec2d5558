/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Who a live process is: its comm and its cgroup, read from /proc. */
#ifndef CP_PROC_IDENTITY_H
#define CP_PROC_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>

#include "machine/proc_cgroup.h"
#include "profile/proc_summaries.h"

/* /proc/PID/comm into @buf without its newline; "" when the process is gone. */
void cp_proc_read_comm(pid_t pid, char *buf, size_t sz);

/*
 * /proc/PID/cgroup parsed into @out, with the id of a unified-hierarchy
 * cgroup looked up (the inode of its directory under the cgroup2 mount;
 * 0 when that fails), and with @lines each line's directory too
 * (cg.lines); -errno when it cannot be read or parsed.
 */
int cp_proc_read_cgroup(pid_t pid, bool lines, struct cp_cgroup_info *out);

/* A cp_proc_describe_fn over the two above, each read when @what asks (@ctx unused). */
void cp_proc_describe(void *ctx, struct cp_proc_summary *s, unsigned int what);

/*
 * Opens the cgroup (v2) directory of --cgroup @path (a cgroup2 directory, or
 * a path as /proc/PID/cgroup writes it). Returns the fd or a negative errno
 * with @err set.
 */
int cp_cgroup_open(const char *path, char *err, size_t err_sz);

#endif /* CP_PROC_IDENTITY_H */
