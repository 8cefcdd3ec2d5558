/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One ring-buffer record to its consumer, after a size and type check: the
 * live drain (drain.c) and a recording's replay (replay.c) hand records over
 * through this one function, so both see exactly the same checks. The
 * checks are one table, a row per record type with the sizes it may have
 * (cp_record_kind()): a type not in it is counted unknown, a size outside
 * its row (or a record its row's check refuses) malformed, and neither
 * reaches a consumer (nor, through the profile, a recording). A live-only
 * type (a breakpoint's event, a stack copy: what a live run acts on at
 * once and never records) goes to the live callback, not the profile's.
 */
#ifndef CP_RECORDS_H
#define CP_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include "cacheperf/abi.h"

struct cp_record_ops {
	/* One forwarded sample. A negative return stops the poll and is returned by it. */
	int (*sample)(const struct cp_sample *s, void *ctx);
	/*
	 * Any other record type the table knows (allocation events, ...),
	 * @size bytes from the type field on, within its row's sizes. NULL:
	 * such records are counted as unknown.
	 */
	int (*record)(__u32 type, const void *data, size_t size, void *ctx);
	void *ctx;
	/*
	 * A live-only record (cp_record_kind()->live_only), with @live_ctx.
	 * NULL (a replay, or a test's drain that wants none): such records are
	 * passed over, not counted (older recordings hold breakpoint events).
	 */
	int (*live)(__u32 type, const void *data, size_t size, void *ctx);
	void *live_ctx;
};

struct cp_record_counts {
	__u64 malformed; /* shorter than a type, or a size its type cannot have */
	__u64 unknown;	 /* a type this version does not know, or no callback takes */
};

/* A record type and the sizes it comes in, from the type field on. */
struct cp_record_kind {
	__u32 type;		  /* CP_REC_* */
	__u32 min_size, max_size; /* max_size 0: exactly min_size */
	/* what else a well-formed record of the type holds to (NULL: its size is all) */
	bool (*valid)(const void *data, size_t size);
	const char *name; /* for messages: "sample", "object event" */
	bool live_only;	  /* to cp_record_ops.live: never to the profile or a recording */
};

/* The row of record type @type, NULL for a type this version does not know. */
const struct cp_record_kind *cp_record_kind(__u32 type);

/* Hands @data (@size bytes) to @ops; returns the callback's return, 0 for a dropped record. */
int cp_record_dispatch(const struct cp_record_ops *ops, struct cp_record_counts *c,
		       const void *data, size_t size);

#endif /* CP_RECORDS_H */
