// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "budget/prog_cost.h"

bool cp_prog_cost_per_call(const struct cp_prog_cost *now, const struct cp_prog_cost *then,
			   __u64 min_calls, __u64 *ns)
{
	__u64 calls = now->calls > then->calls ? now->calls - then->calls : 0;
	__u64 run = now->run_ns > then->run_ns ? now->run_ns - then->run_ns : 0;

	if (!calls || calls < min_calls)
		return false;
	*ns = run / calls ? run / calls : 1;
	return true;
}
