// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gzip in memory (see gzip.h). */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "util/gzip.h"

/* windowBits 15 + 16: zlib writes a gzip wrapper (its default header: mtime 0, no name) */
#define CP_GZIP_WINDOW_BITS (15 + 16)
#define CP_GZIP_MEM_LEVEL   8

int cp_gzip(const void *in, size_t len, __u8 **out, size_t *out_len)
{
	z_stream z = {0};
	size_t cap;
	__u8 *buf;
	int ret;

	*out = NULL;
	*out_len = 0;
	if (len > (uInt)-1)
		return -EFBIG;
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, CP_GZIP_WINDOW_BITS, CP_GZIP_MEM_LEVEL,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* deflateBound() holds the whole stream; the gzip wrapper adds 18 bytes to zlib's 6 */
	cap = deflateBound(&z, (uLong)len) + 12;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	ret = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*out_len = cap - z.avail_out;
	return 0;
}
