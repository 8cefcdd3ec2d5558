/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording format's checksum: zlib's CRC-32 (the IEEE 802.3
 * polynomial, reflected: 0xEDB88320; rec_format.h), the same value as
 * crc32(0, p, len). It is not CRC-32C, so SSE4.2's crc32 instruction cannot
 * compute it; a replay checksums every byte it reads, and zlib's table code
 * (about 3 GB/s here) was 4-6 % of a replay. Where the CPU has PCLMULQDQ,
 * buffers of 64 bytes or more are folded 64 bytes at a time with carry-less
 * multiplications (Intel's white paper "Fast CRC computation for generic
 * polynomials using PCLMULQDQ", the reduction constants of that polynomial);
 * the rest, and other CPUs, go through zlib. Pure.
 */
#ifndef CP_REC_CRC_H
#define CP_REC_CRC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* crc32(0, @p, @len) of zlib. */
__u32 cp_rec_crc(const void *p, size_t len);

/* Whether cp_rec_crc() folds with PCLMULQDQ on this CPU (for the tests). */
bool cp_rec_crc_folds(void);

#endif /* CP_REC_CRC_H */
