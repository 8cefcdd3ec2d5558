// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "live/prog_stats.h"

int cp_prog_cost_add(struct cp_prog_cost *sum, int prog_fd, bool counts_calls)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (prog_fd < 0)
		return -EBADF;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	sum->run_ns += info.run_time_ns;
	if (counts_calls)
		sum->calls += info.run_cnt;
	return 0;
}
