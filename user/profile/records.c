// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The record types' table and the one dispatcher live and replay share. */
#include <stdint.h>
#include <string.h>

#include "cacheperf/alloc.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf/stack_copy.h"
#include "profile/records.h"

/* A call site's frames: as many as its nr says, of a process, for a stack. */
static bool alloc_stack_valid(const void *data, size_t size)
{
	size_t head = offsetof(struct cp_alloc_stack_record, ips);
	struct cp_alloc_stack_record r;

	memcpy(&r, data, head);
	return r.nr <= CP_ALLOC_STACK_DEPTH && size == head + r.nr * sizeof(r.ips[0]) && r.tgid &&
	       r.stack_id >= 0;
}

/*
 * A process event: an exit, or an exec of an older recording, is the event
 * alone; an exec carries its comm and cgroup id, and now its v1 cgroups.
 */
static bool proc_valid(const void *data, size_t size)
{
	struct cp_proc_event e;

	memcpy(&e, data, sizeof(e));
	return size == sizeof(e) ||
	       (e.kind == CP_PROC_EXEC &&
		(size == CP_PROC_EXEC_V2_ONLY_SIZE || size == sizeof(struct cp_proc_exec_event)));
}

/* A process's description: of a process. */
static bool proc_desc_valid(const void *data, size_t size)
{
	struct cp_proc_desc_record d;

	memcpy(&d, data, size);
	return d.pid != 0 && d.pid <= INT32_MAX;
}

static const struct cp_record_kind kinds[] = {
	{CP_REC_SAMPLE, sizeof(struct cp_sample), 0, NULL, "sample", false},
	{CP_REC_OBJECT, sizeof(struct cp_object_event), 0, NULL, "object event", false},
	{CP_REC_PROC, sizeof(struct cp_proc_event), sizeof(struct cp_proc_exec_event), proc_valid,
	 "process event", false},
	{CP_REC_BP, sizeof(struct cp_bp_event), 0, NULL, "breakpoint event", true},
	{CP_REC_USTACK, sizeof(struct cp_ustack_record), 0, NULL, "call site's stack copy", true},
	{CP_REC_SAMPLE_USTACK, sizeof(struct cp_sample_ustack_record), 0, NULL,
	 "sample's stack copy", true},
	{CP_REC_HISTORY, sizeof(struct cp_history_record), 0, NULL, "breakpoint history", false},
	{CP_REC_ALLOC_STACK, offsetof(struct cp_alloc_stack_record, ips),
	 sizeof(struct cp_alloc_stack_record), alloc_stack_valid, "call site's frames", false},
	{CP_REC_PROC_DESC, sizeof(struct cp_proc_desc_record), 0, proc_desc_valid,
	 "process description", false},
};

const struct cp_record_kind *cp_record_kind(__u32 type)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].type == type)
			return &kinds[i];
	return NULL;
}

int cp_record_dispatch(const struct cp_record_ops *ops, struct cp_record_counts *c,
		       const void *data, size_t size)
{
	const struct cp_record_kind *k;
	__u32 type;

	if (size < sizeof(type)) {
		c->malformed++;
		return 0;
	}
	memcpy(&type, data, sizeof(type));
	k = cp_record_kind(type);
	if (!k) {
		c->unknown++;
		return 0;
	}
	if (size < k->min_size || size > (k->max_size ? k->max_size : k->min_size) ||
	    (k->valid && !k->valid(data, size))) {
		c->malformed++;
		return 0;
	}
	if (k->live_only)
		return ops->live ? ops->live(type, data, size, ops->live_ctx) : 0;
	if (type == CP_REC_SAMPLE)
		return ops->sample ? ops->sample(data, ops->ctx) : 0;
	if (!ops->record) {
		c->unknown++;
		return 0;
	}
	return ops->record(type, data, size, ops->ctx);
}
