/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One ring-buffer record to its consumer, after a size and type check: the
 * live drain (drain.c) and a recording's replay (replay.c) hand records over
 * through this one function, so both see exactly the same checks.
 */
#ifndef CP_RECORDS_H
#define CP_RECORDS_H

#include <stddef.h>
#include "cacheperf/abi.h"

struct cp_record_ops {
	/* One forwarded sample. A negative return stops the poll and is returned by it. */
	int (*sample)(const struct cp_sample *s, void *ctx);
	/*
	 * Any other record type (allocation events, ...), @size bytes from the
	 * type field on. NULL: such records are counted as unknown.
	 */
	int (*record)(__u32 type, const void *data, size_t size, void *ctx);
	void *ctx;
};

struct cp_record_counts {
	__u64 malformed;	/* too short, or a sample of the wrong size: an ABI mismatch */
	__u64 unknown;		/* a type no callback takes */
};

/* Hands @data (@size bytes) to @ops; returns the callback's return, 0 for a dropped record. */
int cp_record_dispatch(const struct cp_record_ops *ops, struct cp_record_counts *c,
		       const void *data, size_t size);

#endif /* CP_RECORDS_H */
