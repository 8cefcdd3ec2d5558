/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which allocation windows the system-call programs (mmap, munmap, mremap,
 * brk: mapped regions as objects) go with. Each window they go with costs
 * the profiler their attaching and detaching, where the kernel patches its
 * own text on every CPU (without tracefs they are the raw sys_enter and
 * sys_exit tracepoints: a fifth of the profiler's CPU with -p on
 * redis-server under redis-benchmark), and every system call of the
 * machine the slow path while they are on. Most services map nothing
 * outside their allocator's calls once started (those mappings are the
 * allocator's business and not recorded), so the programs earn their
 * price only where a target does.
 *
 * They go with every window at first, and for as long as each window they
 * went with recorded a mapping. After one that recorded none they go with
 * one window in 2, then in 4, up to one in CP_SYS_EVERY_MAX; a recorded
 * mapping brings them back to every window. Pure:
 * user/live/alloc_probes.c asks as the windows open and close.
 */
#ifndef CP_SYS_WINDOWS_H
#define CP_SYS_WINDOWS_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_SYS_EVERY_MAX 8

struct cp_sys_windows {
	__u32 every;   /* the programs go with one window in this many */
	__u32 since;   /* windows without them since the last with them */
	__u64 with;    /* windows they went with */
	__u64 without; /* windows they skipped */
};

void cp_sys_windows_init(struct cp_sys_windows *w);

/* A window opens: whether the programs go with it. */
bool cp_sys_windows_begin(struct cp_sys_windows *w);

/* A window the programs went with closed; @mapped: they recorded a mapping in it. */
void cp_sys_windows_end(struct cp_sys_windows *w, bool mapped);

#endif /* CP_SYS_WINDOWS_H */
