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

__u64 cp_prog_cost_raise(__u64 *have_ns, __u64 measured_ns)
{
	__u64 owed;

	if (measured_ns <= *have_ns)
		return 0;
	owed = measured_ns - *have_ns;
	*have_ns = measured_ns;
	return owed;
}

__u32 cp_prog_cost_revised_ppm(__u64 first_ns, __u64 revised_ns)
{
	unsigned __int128 ppm;

	if (!first_ns || revised_ns <= first_ns)
		return 0;
	ppm = (unsigned __int128)(revised_ns - first_ns) * 1000000u / first_ns;
	return ppm > 0xffffffffu ? 0xffffffffu : (__u32)ppm;
}
