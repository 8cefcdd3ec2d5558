// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Rendering of decoded perf_mem_data_src values (cacheperf/data_src.h). */
#include <stdio.h>

#include "report/data_src_text.h"

static const char *const cp_lvl_names[CP_LVL_NR] = {
	[CP_LVL_NA] = "N/A",
	[CP_LVL_L1] = "L1",
	[CP_LVL_LFB] = "LFB",
	[CP_LVL_L2] = "L2",
	[CP_LVL_L3] = "L3",
	[CP_LVL_LOCAL_RAM] = "Local RAM",
	[CP_LVL_REMOTE_RAM] = "Remote RAM",
	[CP_LVL_REMOTE_CACHE] = "Remote Cache",
	[CP_LVL_PMEM] = "PMEM",
	[CP_LVL_IO] = "I/O",
	[CP_LVL_UNCACHED] = "Uncached",
	[CP_LVL_L4] = "L4",
	[CP_LVL_CXL] = "CXL",
	[CP_LVL_BEYOND] = "Beyond",
};

/* mem_hops values 1..4 (PERF_MEM_HOPS_0..3): where the remote party sits. */
static const char *const cp_hops_names[] = {
	NULL, "other core", "other node", "other socket", "other board",
};

const char *cp_mem_lvl_name(enum cp_mem_lvl lvl)
{
	if ((unsigned int)lvl >= CP_LVL_NR)
		return "?";
	return cp_lvl_names[lvl];
}

/* Appends to @buf like snprintf at offset @len; keeps counting past the end. */
static int cp_append(char *buf, size_t size, int len, const char *fmt, const char *arg)
{
	size_t off = (size_t)len < size ? (size_t)len : size;
	int n = snprintf(size ? buf + off : NULL, size - off, fmt, arg);

	return n < 0 ? len : len + n;
}

static int cp_lvl_text(const struct cp_data_src *d, char *buf, size_t size)
{
	const char *name = cp_mem_lvl_name(d->lvl);
	int len = 0;

	switch (d->lvl) {
	case CP_LVL_L1:
	case CP_LVL_LFB:
	case CP_LVL_L2:
	case CP_LVL_L3:
	case CP_LVL_L4:
		return cp_append(buf, size, 0, "%s hit", name);
	case CP_LVL_BEYOND:
		return cp_append(buf, size, 0, "%s miss", cp_mem_lvl_name(d->miss_lvl));
	case CP_LVL_PMEM:
	case CP_LVL_CXL:
		if (d->remote)
			len = cp_append(buf, size, len, "%s", "Remote ");
		break;
	default:
		break;
	}
	len = cp_append(buf, size, len, "%s", name);
	/* another core of this node (HOPS_0) is named, though not remote */
	if (!d->remote && d->hops != CP_MEM_HOPS_0)
		return len;
	if (d->hops > 0 && d->hops < sizeof(cp_hops_names) / sizeof(cp_hops_names[0]))
		return cp_append(buf, size, len, " (%s)", cp_hops_names[d->hops]);
	if (d->lvl_hops)
		return cp_append(buf, size, len, "%s", d->lvl_hops == 1 ? " (1 hop)" : " (2 hops)");
	return len;
}

int cp_data_src_text(const struct cp_data_src *d, char *buf, size_t size)
{
	int len = cp_lvl_text(d, buf, size);

	if (d->lvl != CP_LVL_NA) {
		if (d->snoop == CP_SNOOP_HITM)
			len = cp_append(buf, size, len, "%s", " HITM");
		else if (d->fwd)
			len = cp_append(buf, size, len, "%s", " FWD");
		else if (d->peer)
			len = cp_append(buf, size, len, "%s", " PEER");
		else if (d->snoop == CP_SNOOP_HIT)
			len = cp_append(buf, size, len, "%s", " snoop hit");
	}
	if (d->tlb == CP_TLB_MISS)
		len = cp_append(buf, size, len, "%s", ", TLB miss");
	if (d->locked)
		len = cp_append(buf, size, len, "%s", ", locked");
	if (d->blk)
		len = cp_append(buf, size, len, "%s", ", blocked");
	return len;
}
