/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Arming and disarming one instruction for breakpoint sampling, the
 * interface a breakpoint manager drives (cacheperf/breakpoint.h):
 *
 *   arm:    cp_bp_arm() puts the decoded operand into bp_insns, then
 *           cp_perf_events__open_threads() (or __open_cpus()) of
 *           cp_breakpoint_spec(ip) (pmu_attr.h) with on_breakpoint, into a
 *           struct cp_perf_events of its own;
 *   done:   a CP_REC_BP record (full or settled), or expiry on last_ns;
 *   disarm: cp_perf_events__free() of its events, cp_bp_read(), cp_bp_disarm().
 *
 * Closing the events first means no hit races the read. Nothing here
 * chooses instructions or counts slots.
 */
#ifndef CP_BP_ARM_H
#define CP_BP_ARM_H

#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/breakpoint.h"

/*
 * Arms {@tgid, @ip} with operand @op in the bp_insns map @map_fd: a fresh
 * entry, history empty. Returns 0, -EINVAL for an operand that is not
 * computable, -EEXIST when armed already, -E2BIG when CP_MAX_BP_INSNS are
 * armed, or another negative errno.
 */
int cp_bp_arm(int map_fd, __u32 tgid, __u64 ip, const struct cp_operand *op);

/* Copies the entry of {@tgid, @ip} to @out. 0 or a negative errno (-ENOENT: not armed). */
int cp_bp_read(int map_fd, __u32 tgid, __u64 ip, struct cp_bp_insn *out);

/* Removes the entry of {@tgid, @ip}. 0 or a negative errno (-ENOENT: not armed). */
int cp_bp_disarm(int map_fd, __u32 tgid, __u64 ip);

#endif /* CP_BP_ARM_H */
