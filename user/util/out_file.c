// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Whole-file output through a temporary file and rename (see out_file.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/out_file.h"

/* Creates the temporary file next to @path (*@tmp: its name, to free); fd or < 0 with @err. */
static int open_tmp(const char *path, char **tmp, char *err, size_t err_sz)
{
	size_t len = strlen(path);
	int fd, ret;

	*tmp = malloc(len + sizeof(".XXXXXX"));
	if (!*tmp) {
		snprintf(err, err_sz, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(*tmp, path, len);
	memcpy(*tmp + len, ".XXXXXX", sizeof(".XXXXXX"));
	fd = mkstemp(*tmp);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_sz, "cannot create a file next to %s: %s", path, strerror(-ret));
		free(*tmp);
		*tmp = NULL;
		return ret;
	}
	return fd;
}

/*
 * True when @path names a character device or a FIFO (-o /dev/null, a
 * terminal, a named pipe): written in place. Renaming a file over it would
 * replace the device node itself with a regular file (/dev/null for every
 * other program on the machine). A symbolic link is not followed.
 */
static bool in_place(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

/* Writes @fn's text into the device or FIFO @path as it is. */
static int write_in_place(const char *path, cp_out_fn fn, void *ctx, char *err, size_t err_sz)
{
	FILE *f = fopen(path, "we");
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = fn(ctx, f);
	if (!ret && fflush(f))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(ret < 0 ? -ret : EIO));
	return ret < 0 ? ret : ret ? -EIO : 0;
}

int cp_out_file_try(const char *path, char *err, size_t err_sz)
{
	char *tmp;
	int fd;

	if (in_place(path)) {
		int ret = access(path, W_OK) ? -errno : 0;

		if (ret)
			snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	fd = open_tmp(path, &tmp, err, err_sz);

	if (fd < 0)
		return fd;
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

int cp_out_file_write(const char *path, cp_out_fn fn, void *ctx, char *err, size_t err_sz)
{
	char *tmp;
	FILE *f;
	int fd, ret;

	if (strcmp(path, "-") == 0) {
		ret = fn(ctx, stdout);
		if (!ret && fflush(stdout))
			ret = -errno;
		if (ret)
			snprintf(err, err_sz, "cannot write to stdout: %s", strerror(-ret));
		return ret;
	}
	if (in_place(path))
		return write_in_place(path, fn, ctx, err, err_sz);
	fd = open_tmp(path, &tmp, err, err_sz);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		goto fail;
	}
	ret = fn(ctx, f);
	if (!ret && (fflush(f) || fchmod(fd, 0644)))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (!ret) {
		free(tmp);
		return 0;
	}
fail:
	snprintf(err, err_sz, "cannot write %s: %s", path, strerror(ret < 0 ? -ret : EIO));
	unlink(tmp);
	free(tmp);
	return ret < 0 ? ret : -EIO;
}
