// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own cost: start-up apart from the steady state (see agent_cost.h). */
#include <string.h>
#include <unistd.h>

#include "machine/agent_cost.h"
#include "machine/proc_start.h"
#include "util/clock.h"
#include "util/self_usage.h"

void cp_agent_cost_split(const struct cp_agent_since *since, __u64 cpu_now_ns, __u64 now_ns,
			 struct cp_agent_cost *out)
{
	out->known = since->mono_ns != 0;
	out->startup_cpu_ns = out->known ? since->cpu_ns : 0;
	out->startup_wall_ns = out->known && since->exec_ns && since->exec_ns < since->mono_ns
				       ? since->mono_ns - since->exec_ns
				       : 0;
	out->steady_cpu_ns =
		out->known && cpu_now_ns > since->cpu_ns ? cpu_now_ns - since->cpu_ns : 0;
	out->steady_wall_ns = out->known && now_ns > since->mono_ns ? now_ns - since->mono_ns : 0;
}

double cp_agent_cost_pct(__u64 cpu_ns, __u64 wall_ns)
{
	return wall_ns ? 100.0 * (double)cpu_ns / (double)wall_ns : 0;
}

void cp_agent_cost_begin(struct cp_agent_since *since)
{
	__u64 ticks;

	since->cpu_ns = cp_self_cpu_ns();
	since->mono_ns = cp_now_ns();
	since->exec_ns = cp_proc_starttime(getpid(), &ticks) ? 0 : cp_proc_ticks_mono_ns(ticks);
}

void cp_agent_cost_read(const struct cp_agent_since *since, struct cp_agent_cost *out)
{
	struct cp_self_mem mem;

	memset(out, 0, sizeof(*out));
	cp_agent_cost_split(since, cp_self_cpu_ns(), cp_now_ns(), out);
	if (!out->known || cp_self_mem_read(&mem))
		return;
	out->memory_known = true;
	out->memory_counter = mem.counter;
	out->memory_bytes = mem.bytes;
	out->peak_memory_bytes = mem.peak_bytes > mem.bytes ? mem.peak_bytes : mem.bytes;
}
