// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The target filter follows process creation, as `perf record -- CMD` does:
 * a process forked by a target is a target too (`-- sh -c ./app` profiles
 * app), and a target that exits leaves the filter, so a reused PID is not
 * profiled by mistake. Threads need nothing: the filter is keyed by tgid.
 */
#include "cacheperf.bpf.h"

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!targ_filter_tgid || ptgid == ctgid)
		return 0;
	if (!bpf_map_lookup_elem(&targ_tgids, &ptgid))
		return 0;
	if (bpf_map_update_elem(&targ_tgids, &ctgid, &one, BPF_NOEXIST))
		__sync_fetch_and_add(&stats.drop_targets, 1);
	else
		__sync_fetch_and_add(&stats.followed, 1);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	/* the whole process is gone only when its group leader exits */
	if (!targ_filter_tgid || BPF_CORE_READ(task, pid) != tgid)
		return 0;
	bpf_map_delete_elem(&targ_tgids, &tgid);
	return 0;
}
