// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Output files through a temporary file and rename (see out_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/out_file.h"

enum target_kind {
	TARGET_FILE,   /* absent or a regular file: replaced by a rename */
	TARGET_DEVICE, /* a character device or a FIFO: written in place */
};

/* What is at @path now; < 0 with @err for what may not be written. */
static int target_kind(const char *path, char *err, size_t err_sz)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return TARGET_FILE;
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, err_sz,
			 "%s is a symbolic link: refusing to follow or replace it; remove it or "
			 "name the file itself",
			 path);
		return -ELOOP;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, err_sz, "%s is a directory: name a file in it", path);
		return -EISDIR;
	}
	return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ? TARGET_DEVICE : TARGET_FILE;
}

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
	/* O_CREAT | O_EXCL, 0600: a name planted there is not followed */
	fd = mkostemp(*tmp, O_CLOEXEC);
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
 * Opens the device or FIFO @path as it is. O_NOFOLLOW and the fstat: what
 * lstat saw may have been swapped for a link or a file since. O_NONBLOCK:
 * a FIFO nobody reads (one a tenant planted) is refused, not waited on;
 * the writes then block as usual.
 */
static int open_device(const char *path, char *err, size_t err_sz)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC), ret;
	struct stat st;

	if (fd < 0) {
		ret = -errno;
		if (ret == -ENXIO)
			snprintf(err, err_sz, "cannot write %s: a FIFO no process reads", path);
		else
			snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		ret = -errno;
		close(fd);
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		close(fd);
		snprintf(err, err_sz, "cannot write %s: it changed while it was opened", path);
		return -EAGAIN;
	}
	return fd;
}

int cp_out_open(struct cp_out *o, const char *path, mode_t mode, char *err, size_t err_sz)
{
	int kind = target_kind(path, err, err_sz), fd;

	memset(o, 0, sizeof(*o));
	if (kind < 0)
		return kind;
	o->mode = mode;
	o->path = strdup(path);
	if (!o->path) {
		snprintf(err, err_sz, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	fd = kind == TARGET_DEVICE ? open_device(path, err, err_sz)
				   : open_tmp(path, &o->tmp, err, err_sz);
	if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		fd = -ENOMEM;
	}
	if (fd < 0) {
		if (o->tmp)
			unlink(o->tmp);
		free(o->tmp);
		free(o->path);
		memset(o, 0, sizeof(*o));
		return fd;
	}
	return 0;
}

int cp_out_close(struct cp_out *o, int ret, char *err, size_t err_sz)
{
	if (!o->f)
		return ret;
	if (!ret && fflush(o->f))
		ret = -errno;
	if (!ret && o->tmp && fchmod(fileno(o->f), o->mode))
		ret = -errno;
	if (fclose(o->f) && !ret)
		ret = -errno;
	/* rename() replaces whatever name is there, a link planted since included */
	if (!ret && o->tmp && rename(o->tmp, o->path))
		ret = -errno;
	if (ret && o->tmp)
		unlink(o->tmp);
	if (ret && err)
		snprintf(err, err_sz, "cannot write %s: %s", o->path ? o->path : "the output",
			 strerror(ret < 0 ? -ret : EIO));
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return ret < 0 ? ret : ret ? -EIO : 0;
}

int cp_out_file_try(const char *path, char *err, size_t err_sz)
{
	int kind = target_kind(path, err, err_sz), fd, ret;
	char *tmp;

	if (kind < 0)
		return kind;
	if (kind == TARGET_DEVICE) {
		ret = access(path, W_OK) ? -errno : 0;
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

int cp_out_file_write(const char *path, mode_t mode, cp_out_fn fn, void *ctx, char *err,
		      size_t err_sz)
{
	struct cp_out o;
	int ret;

	if (strcmp(path, "-") == 0) {
		ret = fn(ctx, stdout);
		if (!ret && fflush(stdout))
			ret = -errno;
		if (ret)
			snprintf(err, err_sz, "cannot write to stdout: %s", strerror(-ret));
		return ret;
	}
	ret = cp_out_open(&o, path, mode, err, err_sz);
	if (ret)
		return ret;
	return cp_out_close(&o, fn(ctx, o.f), err, err_sz);
}
