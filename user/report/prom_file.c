// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus text file on disk (see prom_file.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report/prom_file.h"

/* Refuses what is at @path when it is a link or a directory. */
static int check_target(const char *path, char *err, size_t err_sz)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, err_sz, "--prom-file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, err_sz,
			 "--prom-file %s is a symbolic link: refusing to follow or replace it; remove it or name the file itself",
			 path);
		return -ELOOP;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, err_sz, "--prom-file %s is a directory: name a file in it, e.g. %s/cacheperf.prom",
			 path, path);
		return -EISDIR;
	}
	return 0;
}


int cp_prom_file_check(const char *path, char *err, size_t err_sz)
{
	char why[512];
	int ret = check_target(path, err, err_sz);

	/* the temporary file of each write goes where this one does */
	if (!ret && (ret = cp_out_file_try(path, why, sizeof(why))))
		snprintf(err, err_sz,
			 "--prom-file %s: cannot create a file in its directory: %s; make the directory writable or choose another one",
			 path, strerror(-ret));
	return ret;
}

int cp_prom_file_write(const char *path, cp_out_fn fn, void *ctx, char *err, size_t err_sz)
{
	int ret = check_target(path, err, err_sz);

	return ret ? ret : cp_out_file_write(path, fn, ctx, err, err_sz);
}
