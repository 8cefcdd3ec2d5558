// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Arming one instruction: its bp_insns entry. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "live/bp_arm.h"

int cp_bp_arm(int map_fd, __u32 tgid, __u64 ip, const struct cp_operand *op)
{
	struct cp_ip_key key = {.tgid = tgid, .ip = ip};
	struct cp_bp_insn *v;
	int ret = 0;

	if (op->status != CP_OPND_OK)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->op = *op;
	v->state = CP_BP_ARMED;
	if (bpf_map_update_elem(map_fd, &key, v, BPF_NOEXIST))
		ret = -errno;
	free(v);
	return ret;
}

int cp_bp_read(int map_fd, __u32 tgid, __u64 ip, struct cp_bp_insn *out)
{
	struct cp_ip_key key = {.tgid = tgid, .ip = ip};

	return bpf_map_lookup_elem(map_fd, &key, out) ? -errno : 0;
}

int cp_bp_disarm(int map_fd, __u32 tgid, __u64 ip)
{
	struct cp_ip_key key = {.tgid = tgid, .ip = ip};

	return bpf_map_delete_elem(map_fd, &key) ? -errno : 0;
}
