/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gzip (RFC 1952) of a buffer in memory, with zlib. Deterministic: the
 * header's modification time is 0 and it names no file, so the same input
 * gives the same bytes on every run and machine (golden files compare them).
 * Pure, no I/O.
 */
#ifndef CP_GZIP_H
#define CP_GZIP_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Compresses @len bytes at @in into a new buffer @*out (free() it) of
 * @*out_len bytes. Returns 0, -ENOMEM, or -EIO when zlib fails.
 */
int cp_gzip(const void *in, size_t len, __u8 **out, size_t *out_len);

#endif /* CP_GZIP_H */
