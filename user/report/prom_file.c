// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus text file on disk (see prom_file.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/prom_file.h"

int cp_prom_file_check(const char *path, char *err, size_t err_sz)
{
	char why[512];
	int ret = cp_out_file_try(path, why, sizeof(why));

	/* the temporary file of each write goes where this one does */
	if (ret == -ELOOP || ret == -EISDIR || ret == -EPERM || ret == -EINVAL)
		snprintf(err, err_sz, "--prom-file %s", why);
	else if (ret)
		snprintf(err, err_sz,
			 "--prom-file %s: cannot create a file in its directory: %s; make the "
			 "directory writable or choose another one",
			 path, strerror(-ret));
	return ret;
}

int cp_prom_file_write(const char *path, cp_out_fn fn, void *ctx, char *err, size_t err_sz)
{
	return cp_out_file_write(path, CP_OUT_SHARED, fn, ctx, err, err_sz);
}
