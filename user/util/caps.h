/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Capability sets as plain 64-bit masks (bit N: capability N), and what is
 * left of them after keeping only some: pure, the syscalls are in
 * util/privs.c.
 */
#ifndef CP_CAPS_H
#define CP_CAPS_H

#include <stdbool.h>
#include <linux/capability.h>
#include <linux/types.h>

/* Older uapi headers predate the split of CAP_SYS_ADMIN (Linux 5.8). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define CP_CAP(c) (1ULL << (c))

struct cp_caps {
	__u64 effective, permitted, inheritable;
};

/*
 * The sets after keeping only @keep of @now: effective and permitted are
 * @keep as far as @now permits it, inheritable is empty (an exec'd program
 * gets nothing from us).
 */
void cp_caps_keep(const struct cp_caps *now, __u64 keep, struct cp_caps *out);

/* Whether capability @cap (0..63) leaves the bounding set when @keep is kept. */
bool cp_caps_bound_drop(__u64 keep, unsigned int cap);

/* "CAP_BPF CAP_PERFMON" for the known capabilities of @mask, into @buf; @buf. */
const char *cp_caps_names(__u64 mask, char *buf, size_t sz);

#endif /* CP_CAPS_H */
