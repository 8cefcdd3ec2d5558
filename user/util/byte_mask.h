/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The bytes of a cache line as a 64-bit mask (bit N: byte N of the line). */
#ifndef CP_BYTE_MASK_H
#define CP_BYTE_MASK_H

#include <linux/types.h>

/* Bits of the bytes [@off, @off + @size) within a line of @line_bytes, clipped to the line. */
static inline __u64 cp_byte_mask(__u32 off, __u32 size, __u32 line_bytes)
{
	__u32 end = off + (size ? size : 1);

	if (end > line_bytes)
		end = line_bytes;
	if (off >= end)
		return 0;
	if (end - off >= 64)
		return ~0ull;
	return ((1ull << (end - off)) - 1) << off;
}

#endif /* CP_BYTE_MASK_H */
