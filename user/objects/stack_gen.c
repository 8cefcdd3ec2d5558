// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Stack generations of the allocation stack maps (see stack_gen.h). */
#include "cacheperf/alloc.h"
#include "objects/stack_gen.h"

void cp_stack_gen_init(struct cp_stack_gen *g, __u32 map_entries)
{
	*g = (struct cp_stack_gen){.limit = map_entries / CP_STACK_GEN_FILL_DIV};
	if (!g->limit)
		g->limit = 1;
}

void cp_stack_gen_read(struct cp_stack_gen *g, __s64 stack_id, bool found)
{
	if (stack_id < 0)
		return;
	if (CP_ALLOC_STACK_GEN(stack_id) == g->gen)
		g->reads++;
	else if (CP_ALLOC_STACK_GEN(stack_id) == ((g->gen + 1) & 0x7fffffffu))
		g->next_reads++;
	/* e.g. of a probe that outlived CP_STACK_GEN_SETTLE_NS, its map emptied meanwhile */
	if (!found)
		g->missing++;
}

enum cp_stack_gen_step cp_stack_gen_step(const struct cp_stack_gen *g, __u64 now_ns,
					 __u64 drained_ns)
{
	if (g->ended_ns)
		return now_ns >= g->ended_ns + CP_STACK_GEN_SETTLE_NS &&
				       drained_ns >= g->ended_ns + CP_STACK_GEN_SETTLE_NS
			       ? CP_STACK_GEN_EMPTY
			       : CP_STACK_GEN_WAIT;
	return g->reads >= g->limit ? CP_STACK_GEN_END : CP_STACK_GEN_WAIT;
}

void cp_stack_gen_ended(struct cp_stack_gen *g, __u64 now_ns)
{
	g->gen = (g->gen + 1) & 0x7fffffffu;
	g->reads = g->next_reads;
	g->next_reads = 0;
	g->ended_ns = now_ns ? now_ns : 1;
	g->ends++;
}

void cp_stack_gen_emptied(struct cp_stack_gen *g)
{
	g->ended_ns = 0;
}
