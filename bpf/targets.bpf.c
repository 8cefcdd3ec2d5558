// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Target processes over their life. The filter follows process creation, as
 * `perf record -- CMD` does: a process forked by a target is a target too
 * (`-- sh -c ./app` profiles app), and a target that exits leaves the filter,
 * so a reused PID is not profiled by mistake. Threads need nothing: the
 * filter is keyed by tgid. exec and exit of a target reach user space, where
 * objects, maps and symbols of the old address space must go.
 */
#include "cacheperf.bpf.h"
#include "wakeup.bpf.h"

/*
 * An exec wakes the reader at once: its handlers read the new image's maps
 * while the process lives, which a short one does for a millisecond. The
 * default (0) wakes it when the record is the first unread; behind samples
 * submitted without a wakeup it did not, so then the wakeup is forced
 * (forcing it always cost a fifth of -a's time in needless loop turns). An
 * exit does not wake it, unless the ring fills (cp_wakeup_flag()): it is
 * read within the loop's tick (100 ms) or with the next record that wakes
 * it. Under -a each short process woke the loop twice, its exec and its
 * exit, ~100 turns a second during a build.
 */
static __always_inline void cp_proc_head(struct cp_proc_event *e, __u32 tgid, __u32 kind)
{
	e->type = CP_REC_PROC;
	e->kind = kind;
	e->tgid = tgid;
	e->__pad = 0;
	e->time_ns = bpf_ktime_get_ns();
}

static __always_inline void cp_proc_emit_exit(__u32 tgid)
{
	struct cp_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&stats.drop_proc, 1);
		return;
	}
	cp_proc_head(e, tgid, CP_PROC_EXIT);
	bpf_ringbuf_submit(e, cp_wakeup_flag(0, 0));
}

/* The hierarchies walked at most: the v2 one, one per v1 controller set, named ones (systemd's). */
#define CP_CGROUP_ROOTS_MAX 16

/* The run's secret of cp_cgroup_v1_of() (cp_cgroup_v1_salt()). */
const volatile __u64 targ_cgroup_salt = 0;

/*
 * cp_cgroup_v1_of() over @task's cgroups of the v1 hierarchies: the links
 * of its css_set, one per hierarchy (the v2 one, number 0, left out). The
 * RCU the tracepoint runs under keeps the css_set, not its links, which the
 * kernel walks under css_set_lock: read here without it, a task moved to
 * other cgroups at that moment may give a value of no cgroups, which user
 * space's look at the first process of a value turns away (nothing is kept
 * under it). 0 when they could not all be read.
 */
static __always_inline __u64 cp_cgroup_v1(struct task_struct *task)
{
	struct css_set *cset = BPF_CORE_READ(task, cgroups);
	struct list_head *head, *pos;
	__u64 v1 = 0;

	if (!cset)
		return 0;
	head = &cset->cgrp_links;
	pos = BPF_CORE_READ(cset, cgrp_links.next);
	for (int i = 0; i <= CP_CGROUP_ROOTS_MAX; i++) {
		struct cgrp_cset_link *link;
		struct cgroup *cg;
		int hierarchy;

		if (pos == head)
			return v1;
		if (!pos)
			return 0;
		link = (void *)pos - bpf_core_field_offset(struct cgrp_cset_link, cgrp_link);
		cg = BPF_CORE_READ(link, cgrp);
		hierarchy = BPF_CORE_READ(cg, root, hierarchy_id);
		if (hierarchy > 0)
			v1 ^= cp_cgroup_v1_of((__u32)hierarchy, BPF_CORE_READ(cg, kn, id),
					      targ_cgroup_salt);
		pos = BPF_CORE_READ(pos, next);
	}
	return 0;
}

/* The exec'd task is current: its new comm and its cgroup go with the record. */
static __always_inline void cp_proc_emit_exec(__u32 tgid)
{
	struct cp_proc_exec_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 flags = 0;

	if (!e) {
		__sync_fetch_and_add(&stats.drop_proc, 1);
		return;
	}
	cp_proc_head(&e->ev, tgid, CP_PROC_EXEC);
	bpf_get_current_comm(e->comm, sizeof(e->comm)); /* zero-filled when it fails */
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->cgroup_v1 = cp_cgroup_v1(bpf_get_current_task_btf());
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > BPF_RINGBUF_HDR_SZ + sizeof(*e))
		flags = cp_wakeup_force();
	bpf_ringbuf_submit(e, flags);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 *v;

	if (!targ_filter_tgid || ptgid == ctgid)
		return 0;
	v = bpf_map_lookup_elem(&targ_tgids, &ptgid);
	if (!v)
		return 0;
	/* a child of a held launcher is held as well, until it execs */
	if (bpf_map_update_elem(&targ_tgids, &ctgid, v, BPF_NOEXIST))
		__sync_fetch_and_add(&stats.drop_targets, 1);
	else
		__sync_fetch_and_add(&stats.followed, 1);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u8 *v;

	/* `-- CMD`: the held child becomes the command, profiled from here on */
	if (targ_filter_tgid) {
		v = bpf_map_lookup_elem(&targ_tgids, &tgid);
		if (v && *v == CP_TARG_HELD)
			*v = CP_TARG_PROFILE;
	}
	if (cp_is_target(tgid))
		cp_proc_emit_exec(tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	/* the whole process is gone only when its group leader exits */
	if (BPF_CORE_READ(task, pid) != tgid)
		return 0;
	if (cp_is_target(tgid))
		cp_proc_emit_exit(tgid);
	if (targ_filter_tgid)
		bpf_map_delete_elem(&targ_tgids, &tgid);
	return 0;
}
