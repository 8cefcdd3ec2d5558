/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perf_mem_data_src decoding, shared by the BPF programs and user space.
 * DECODE-IMPLEMENTATION-PENDING: the helper owning issue 3 fills in cp_data_src_decode().
 */
#ifndef CACHEPERF_DATA_SRC_H
#define CACHEPERF_DATA_SRC_H

#include "cacheperf/types.h"

/* The level that served an access, as the classifier counts it. */
enum cp_mem_lvl {
	CP_LVL_NA = 0,		/* not available */
	CP_LVL_L1,
	CP_LVL_LFB,		/* line fill buffer: a miss already in flight */
	CP_LVL_L2,
	CP_LVL_L3,
	CP_LVL_LOCAL_RAM,
	CP_LVL_REMOTE_RAM,
	CP_LVL_REMOTE_CACHE,
	CP_LVL_PMEM,
	CP_LVL_IO,
	CP_LVL_UNCACHED,
	CP_LVL_NR,
};

#endif /* CACHEPERF_DATA_SRC_H */
