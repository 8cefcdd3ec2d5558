/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps, knobs and counters shared by every BPF program of the one skeleton.
 * bpf/shared.bpf.c defines them (CP_DEFINE_SHARED); the other objects declare
 * them extern and `bpftool gen object` resolves them when linking.
 */
#ifndef CACHEPERF_BPF_H
#define CACHEPERF_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cacheperf/abi.h"
#include "cacheperf/operand.h"
#include "cacheperf/window.h"

#ifdef CP_DEFINE_SHARED
#define CP_SHARED
#else
#define CP_SHARED extern
#endif

/* Every record for user space: samples, later allocation and breakpoint events. */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CP_RINGBUF_BYTES);
} events SEC(".maps");

/*
 * A record of @size in the events ring while it holds less than @fill
 * 64ths of its size (CP_RINGBUF_FILL_*): exec and exit records keep the
 * last 1/CP_RINGBUF_KEEP_SHARE to themselves. NULL (the caller counts the
 * drop) past it.
 */
#define cp_events_reserve(size, fill)                                                              \
	(bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >                                           \
			 bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / CP_RINGBUF_KEEP_SHARE *    \
				 (fill)                                                            \
		 ? NULL                                                                            \
		 : bpf_ringbuf_reserve(&events, (size), 0))

/*
 * Target processes (-p / --): tgid -> CP_TARG_*. Unused when
 * targ_filter_tgid is false (-a).
 */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} targ_tgids SEC(".maps");

/*
 * --cgroup (-a only): index 0 holds the cgroup (v2) whose processes, and
 * its descendants', are profiled; unused when targ_filter_cgroup is false.
 */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} targ_cgroups SEC(".maps");

/* Per-(tgid, ip) counters of every sample; max_entries may be raised before load. */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_IPS);
	__type(key, struct cp_ip_key);
	__type(value, struct cp_ip_counts);
} ip_counts SEC(".maps");

/*
 * Miss-ratio windows (cacheperf/window.h), one per CPU and access kind at
 * cpu * CP_ACCESS_NR + kind. A plain array, not a per-CPU one, so the test
 * program can choose the CPU; user space sets max_entries to CP_ACCESS_NR *
 * possible CPUs before load (cp_mem_prog_size_windows). The default covers
 * one CPU: samples of others are counted in stats.drop_window.
 */
CP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CP_ACCESS_NR);
	__type(key, __u32);
	__type(value, struct cp_window);
} windows SEC(".maps");

#ifdef CP_DEFINE_SHARED
struct cp_stats stats;
const volatile bool targ_filter_tgid = false;
const volatile __u32 targ_self_tgid = 0;
/* Forward every sample (CP_SAMPLE_ALL), no windows: sources without hit/miss info. */
const volatile bool targ_forward_all = false;
const volatile __u32 targ_window_size = CP_WINDOW_DEFAULT;
const volatile __u32 targ_window_ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM;
const volatile bool targ_filter_cgroup = false;
#else
extern struct cp_stats stats;
extern const volatile bool targ_filter_tgid;
extern const volatile __u32 targ_self_tgid;
extern const volatile bool targ_forward_all;
extern const volatile __u32 targ_window_size;
extern const volatile __u32 targ_window_ratio_ppm;
extern const volatile bool targ_filter_cgroup;
#endif

#define CP_PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */

/*
 * -a: the current task is profiled unless it is a kernel thread (no user
 * memory of its own) or, with --cgroup, outside that cgroup.
 */
static __always_inline bool cp_current_wanted(void)
{
#ifdef CP_SYNTHETIC_SAMPLES
	return true; /* mem_sample_test.bpf.c: test runs, no task behind the sample */
#else
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	if (BPF_CORE_READ(t, flags) & CP_PF_KTHREAD)
		return false;
	return !targ_filter_cgroup || bpf_current_task_under_cgroup(&targ_cgroups, 0) == 1;
#endif
}

/* True when a sample of process @tgid, the current one, should be profiled. */
static __always_inline bool cp_is_target(__u32 tgid)
{
	__u8 *v;

	if (tgid == 0 || tgid == targ_self_tgid)
		return false;
	if (!targ_filter_tgid)
		return cp_current_wanted();
	v = bpf_map_lookup_elem(&targ_tgids, &tgid);
	return v && *v == CP_TARG_PROFILE;
}

/*
 * The fs or gs base (enum cp_seg) of the current task: the user's, saved at
 * the last switch. For the operands of on_breakpoint and on_tick.
 */
static __always_inline __u64 cp_seg_base(__u32 seg)
{
	struct task_struct *t = bpf_get_current_task_btf();

	/*
	 * thread.fsbase/gsbase are current for bases set with arch_prctl (glibc's
	 * TLS); a base changed by WRFSBASE in user space is only saved there at
	 * the next context switch.
	 */
	return seg == CP_SEG_FS ? t->thread.fsbase : t->thread.gsbase;
}

#endif /* CACHEPERF_BPF_H */
