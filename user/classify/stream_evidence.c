// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Capacity evidence without misses: streams in access histories, footprints. */
#include "classify/stream_evidence.h"

/* The @k-th address of @h, oldest first (the ring's oldest sits at next once full). */
static __u64 nth(const struct cp_insn_history *h, __u32 k)
{
	__u32 first = h->seen > h->len ? h->next : 0;

	return h->addrs[(first + k) % h->len];
}

bool cp_history_stream(const struct cp_insn_history *h, __s64 *stride)
{
	__u32 steps, best = 0;
	__s64 best_stride = 0;

	if (!h || h->len < CP_STREAM_MIN_HISTORY)
		return false;
	steps = h->len - 1;
	for (__u32 i = 0; i + 1 < h->len; i++) {
		__s64 d = (__s64)(nth(h, i + 1) - nth(h, i));
		__u32 n = 0;

		if (!d || d == best_stride)
			continue;
		for (__u32 j = 0; j + 1 < h->len; j++)
			n += (__s64)(nth(h, j + 1) - nth(h, j)) == d;
		if (n > best) {
			best = n;
			best_stride = d;
		}
	}
	if (!best || best * 100 < steps * CP_STREAM_STRIDE_PCT)
		return false;
	*stride = best_stride;
	return true;
}

__u64 cp_stream_footprint(__s64 stride, __u64 object_bytes, __u64 sampled_lines, __u32 line_bytes)
{
	__u64 step = (__u64)(stride < 0 ? -stride : stride);

	if (!object_bytes)
		return sampled_lines * line_bytes;
	if (step <= line_bytes)
		return object_bytes;
	return object_bytes / step * line_bytes;
}

bool cp_stream_level(const struct cp_geometry *geo, __u64 footprint, enum cp_cache_slot *slot)
{
	bool found = false;

	for (int s = CP_CACHE_L2; geo && s < CP_CACHE_NR_SLOTS; s++) {
		const struct cp_cache_level *l = &geo->slot[s];

		if (l->size_bytes && footprint > l->size_bytes) {
			*slot = (enum cp_cache_slot)s;
			found = true;
		}
	}
	return found;
}
