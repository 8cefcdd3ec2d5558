/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Capacity evidence for sources without hit/miss information (soft): an
 * instruction streams when its access history (breakpoints) walks memory
 * with one constant stride in one direction, and the walk is a capacity
 * problem only when its footprint exceeds a cache beyond L1:
 *
 *   footprint = object bytes x line / max(stride, line)   (one line per step
 *               when the stride is longer than a line: a column walk over a
 *               padded matrix touches only its column's lines per pass)
 *             or, with no heap or global object known, the distinct lines
 *               the instruction's samples fell on x line size (a lower bound)
 *
 * The level it streams through is the largest of L2 and LLC the footprint
 * exceeds. L1 alone is not enough without measured misses: a stream that
 * fits in L2 is served by it at a few cycles a line, and hardware
 * prefetchers hide most of that. Pure.
 */
#ifndef CP_STREAM_EVIDENCE_H
#define CP_STREAM_EVIDENCE_H

#include <stdbool.h>
#include <linux/types.h>

#include "machine/geometry.h"
#include "profile/insn_store.h"

#define CP_STREAM_MIN_HISTORY 16 /* addresses before a history can show a stream */
#define CP_STREAM_STRIDE_PCT  75 /* % of the steps that take the one stride */

/*
 * True when @h, read oldest first, is a stream: at least
 * CP_STREAM_MIN_HISTORY addresses, and CP_STREAM_STRIDE_PCT % of the steps
 * between them one non-zero stride (a loop restarting at the start breaks
 * the run once or twice, no more). *@stride gets it, in bytes.
 */
bool cp_history_stream(const struct cp_insn_history *h, __s64 *stride);

/*
 * The bytes one pass of a stream with @stride touches, over an object of
 * @object_bytes (0: unknown) or, failing that, @sampled_lines distinct
 * lines sampled, with @line_bytes lines.
 */
__u64 cp_stream_footprint(__s64 stride, __u64 object_bytes, __u64 sampled_lines, __u32 line_bytes);

/*
 * The cache a stream of @footprint bytes streams through: the largest of
 * L2 and LLC (valid levels of @geo) smaller than @footprint. Returns false
 * when it fits in L2 (or @geo is NULL): no capacity issue.
 */
bool cp_stream_level(const struct cp_geometry *geo, __u64 footprint, enum cp_cache_slot *slot);

#endif /* CP_STREAM_EVIDENCE_H */
