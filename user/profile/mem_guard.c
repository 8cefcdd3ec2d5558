// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The --max-memory decision (see mem_guard.h). */
#include <string.h>

#include "profile/mem_guard.h"

void cp_mem_guard_init(struct cp_mem_guard *g, __u64 limit_bytes)
{
	memset(g, 0, sizeof(*g));
	g->limit_bytes = limit_bytes;
}

/* Until the next reading: the time CP_MEM_GROWTH_PER_S takes to fill the headroom, bounded. */
static __u64 check_period_ns(const struct cp_mem_guard *g)
{
	__u64 room, ns;

	if (!g->last_read_ns || !g->limit_bytes || g->bytes >= g->limit_bytes)
		return CP_MEM_CHECK_NS;
	room = g->limit_bytes - g->bytes;
	if (room >= CP_MEM_GROWTH_PER_S)
		return CP_MEM_CHECK_MAX_NS;
	ns = room * 1000000000ull / CP_MEM_GROWTH_PER_S;
	return ns < CP_MEM_CHECK_NS ? CP_MEM_CHECK_NS : ns;
}

bool cp_mem_guard_due(struct cp_mem_guard *g, __u64 now_ns)
{
	if (now_ns < g->next_check_ns)
		return false;
	g->next_check_ns = now_ns + check_period_ns(g);
	return true;
}

bool cp_mem_guard_urgent(const struct cp_mem_guard *g, __u64 now_ns)
{
	return !g->last_read_ns || now_ns - g->last_read_ns >= CP_MEM_URGENT_NS;
}

bool cp_mem_guard_over(struct cp_mem_guard *g, __u64 bytes, __u64 now_ns)
{
	g->bytes = bytes;
	g->last_read_ns = now_ns;
	if (bytes > g->peak_bytes)
		g->peak_bytes = bytes;
	if (!g->limit_bytes || bytes <= g->limit_bytes)
		return false;
	if (g->shrinks && now_ns - g->last_shrink_ns < CP_MEM_HOLDOFF_NS)
		return false;
	g->shrinks++;
	g->last_shrink_ns = now_ns;
	return true;
}

void cp_mem_guard_peak(struct cp_mem_guard *g, __u64 kernel_peak_bytes)
{
	if (kernel_peak_bytes > g->peak_bytes)
		g->peak_bytes = kernel_peak_bytes;
}
