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

/* Renames into place are tried again this often when the path keeps changing under them. */
#define PUT_TRIES 3

/* "-" and /dev/stdout: the stream the operator gave, written as it is. */
static bool is_stdout(const char *path)
{
	return !strcmp(path, "-") || !strcmp(path, "/dev/stdout");
}

enum cp_out_verdict cp_out_judge(const struct stat *st, uid_t euid, bool given)
{
	/* root's nodes are the system's (/dev/null), never a tenant's */
	bool trusted = st && (st->st_uid == euid || st->st_uid == 0);

	if (!st)
		return CP_OUT_CREATE;
	if (S_ISLNK(st->st_mode))
		return CP_OUT_NO_LINK;
	if (S_ISDIR(st->st_mode))
		return CP_OUT_NO_DIR;
	if (S_ISREG(st->st_mode))
		return trusted ? CP_OUT_REPLACE : CP_OUT_NO_OWNER;
	if (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode))
		return trusted || given ? CP_OUT_IN_PLACE : CP_OUT_NO_OWNER;
	return CP_OUT_NO_KIND;
}

/* Whether @st is this process's stdin, stdout or stderr: what the operator gave it. */
static bool is_given(const struct stat *st)
{
	struct stat fd_st;

	for (int fd = 0; fd <= 2; fd++)
		if (!fstat(fd, &fd_st) && fd_st.st_dev == st->st_dev && fd_st.st_ino == st->st_ino)
			return true;
	return false;
}

static const char *kind_name(mode_t mode)
{
	return S_ISFIFO(mode)	? "FIFO"
	       : S_ISCHR(mode)	? "character device"
	       : S_ISBLK(mode)	? "block device"
	       : S_ISSOCK(mode) ? "socket"
				: "file";
}

/* The message and errno of a refusal of @st at @path; 0 for what may be written. */
static int refuse(enum cp_out_verdict v, const char *path, const struct stat *st, char *err,
		  size_t err_sz)
{
	switch (v) {
	case CP_OUT_CREATE:
	case CP_OUT_REPLACE:
	case CP_OUT_IN_PLACE:
		return 0;
	case CP_OUT_NO_LINK:
		snprintf(err, err_sz,
			 "%s is a symbolic link: refusing to follow or replace it; remove it or "
			 "name the file itself",
			 path);
		return -ELOOP;
	case CP_OUT_NO_DIR:
		snprintf(err, err_sz, "%s is a directory: name a file in it", path);
		return -EISDIR;
	case CP_OUT_NO_KIND:
		snprintf(err, err_sz,
			 "%s is a %s: refusing to write into or replace it; name a file", path,
			 kind_name(st->st_mode));
		return -EINVAL;
	case CP_OUT_NO_OWNER:
		snprintf(err, err_sz,
			 "%s is a %s of uid %u, not this profiler's user nor root: refusing to %s "
			 "it (it may have been planted to %s); remove it or name another path",
			 path, kind_name(st->st_mode), (unsigned int)st->st_uid,
			 S_ISREG(st->st_mode) ? "replace" : "write into",
			 S_ISREG(st->st_mode) ? "have it deleted" : "read the output");
		return -EPERM;
	}
	return -EINVAL;
}

/* What is at @path now (lstat): its verdict, or < 0 with @err for what may not be written. */
static int judge_path(const char *path, char *err, size_t err_sz)
{
	struct stat st;
	enum cp_out_verdict v;
	int ret;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return CP_OUT_CREATE;
		ret = -errno;
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	v = cp_out_judge(&st, geteuid(), is_given(&st));
	ret = refuse(v, path, &st, err, err_sz);
	return ret ? ret : (int)v;
}

/* Creates the temporary file next to @o->path (@o->tmp, its device and inode); fd or < 0. */
static int open_tmp(struct cp_out *o, char *err, size_t err_sz)
{
	size_t len = strlen(o->path);
	struct stat st;
	int fd, ret;

	o->tmp = malloc(len + sizeof(".XXXXXX"));
	if (!o->tmp) {
		snprintf(err, err_sz, "%s: %s", o->path, strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(o->tmp, o->path, len);
	memcpy(o->tmp + len, ".XXXXXX", sizeof(".XXXXXX"));
	/* O_CREAT | O_EXCL, 0600: a name planted there is not followed */
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_sz, "cannot create a file next to %s: %s", o->path,
			 strerror(-ret));
		free(o->tmp);
		o->tmp = NULL;
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, err_sz, "cannot create a file next to %s: %s", o->path,
			 strerror(-ret));
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return ret;
	}
	o->tmp_dev = st.st_dev;
	o->tmp_ino = st.st_ino;
	return fd;
}

/* Whether @o->tmp still names the temporary file made: a tenant may swap a name it can write. */
static bool tmp_is_ours(const struct cp_out *o)
{
	struct stat st;

	return !lstat(o->tmp, &st) && S_ISREG(st.st_mode) && st.st_dev == o->tmp_dev &&
	       st.st_ino == o->tmp_ino;
}

/* Removes the temporary file, only while its name is still that file. */
static void remove_tmp(const struct cp_out *o)
{
	if (o->tmp && tmp_is_ours(o))
		unlink(o->tmp);
}

/*
 * Opens for writing the FIFO or device at @path whose O_PATH descriptor is
 * @pfd (@st): through /proc/self/fd, the node judged and no other, even if
 * the path was swapped since. O_NONBLOCK: a FIFO nobody reads is refused,
 * not waited on; the writes then block as usual.
 */
static int open_in_place(const char *path, int pfd, const struct stat *st, char *err, size_t err_sz)
{
	int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, fd, ret;
	char proc[64];
	struct stat now;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, flags);
	/* no /proc: by name, and checked to be the node judged */
	if (fd < 0 && errno == ENOENT)
		fd = open(path, flags | O_NOFOLLOW);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENXIO)
			snprintf(err, err_sz, "cannot write %s: a FIFO no process reads", path);
		else
			snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &now) || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		snprintf(err, err_sz, "cannot write %s: it changed while it was opened", path);
		return -EAGAIN;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		ret = -errno;
		close(fd);
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	return fd;
}

/*
 * The descriptor @o writes to: stdout's copy, the node at @o->path judged
 * and opened in place, or a new temporary file. Never opens for writing
 * what cp_out_judge() refuses. fd or < 0 with @err.
 */
static int open_target(struct cp_out *o, char *err, size_t err_sz)
{
	const char *path = o->path;
	enum cp_out_verdict v;
	struct stat st;
	int pfd, fd;

	if (is_stdout(path)) {
		fflush(stdout);
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			snprintf(err, err_sz, "cannot write to stdout: %s", strerror(errno));
		return fd < 0 ? -errno : fd;
	}
	/* O_PATH: looks at the node without opening it, a FIFO's reader never sees it */
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		if (errno == ENOENT)
			return open_tmp(o, err, err_sz);
		fd = -errno;
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-fd));
		return fd;
	}
	if (fstat(pfd, &st)) {
		fd = -errno;
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-fd));
	} else {
		v = cp_out_judge(&st, geteuid(), is_given(&st));
		fd = refuse(v, path, &st, err, err_sz);
		if (!fd)
			fd = v == CP_OUT_IN_PLACE ? open_in_place(path, pfd, &st, err, err_sz)
						  : open_tmp(o, err, err_sz);
	}
	close(pfd);
	return fd;
}

int cp_out_open(struct cp_out *o, const char *path, mode_t mode, char *err, size_t err_sz)
{
	int fd;

	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->path = strdup(path);
	if (!o->path) {
		snprintf(err, err_sz, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	fd = open_target(o, err, err_sz);
	if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
		snprintf(err, err_sz, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		fd = -ENOMEM;
	}
	if (fd < 0) {
		remove_tmp(o);
		free(o->tmp);
		free(o->path);
		memset(o, 0, sizeof(*o));
		return fd;
	}
	return 0;
}

/* Says why the temporary file of @o could not be put at its path. */
static int put_failed(const struct cp_out *o, int ret, char *err, size_t err_sz)
{
	snprintf(err, err_sz, "cannot write %s: %s", o->path, strerror(-ret));
	return ret;
}

/*
 * Puts the written temporary file at @o->path, judged again now: created
 * where nothing is (RENAME_NOREPLACE: never over what a tenant planted in
 * the meantime, which is then judged), or over a file of ours. 0 or < 0
 * with @err.
 */
static int put_in_place(const struct cp_out *o, char *err, size_t err_sz)
{
	for (int i = 0; i < PUT_TRIES; i++) {
		int v;

		if (!tmp_is_ours(o)) {
			snprintf(err, err_sz,
				 "cannot write %s: its temporary file %s was replaced meanwhile",
				 o->path, o->tmp);
			return -ESTALE;
		}
		v = judge_path(o->path, err, err_sz);
		if (v < 0)
			return v;
		if (v == CP_OUT_IN_PLACE) {
			snprintf(err, err_sz,
				 "cannot write %s: it became a FIFO or device while the output was "
				 "written: refusing to replace it",
				 o->path);
			return -EEXIST;
		}
		if (v == CP_OUT_REPLACE)
			return rename(o->tmp, o->path) ? put_failed(o, -errno, err, err_sz) : 0;
		if (!renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE))
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != EINVAL && errno != ENOSYS)
			return put_failed(o, -errno, err, err_sz);
		/* a file system without RENAME_NOREPLACE: link() never replaces either */
		if (!link(o->tmp, o->path)) {
			remove_tmp(o);
			return 0;
		}
		if (errno != EEXIST)
			return put_failed(o, -errno, err, err_sz);
	}
	snprintf(err, err_sz, "cannot write %s: it kept changing while it was replaced", o->path);
	return -EAGAIN;
}

int cp_out_close_id(struct cp_out *o, int ret, struct cp_out_id *id, char *err, size_t err_sz)
{
	char why[512];
	bool said = false;

	if (id)
		memset(id, 0, sizeof(*id));
	if (!o->f)
		return ret;
	if (!ret && fflush(o->f))
		ret = -errno;
	if (!ret && o->tmp && fchmod(fileno(o->f), o->mode))
		ret = -errno;
	if (fclose(o->f) && !ret)
		ret = -errno;
	if (!ret && o->tmp) {
		ret = put_in_place(o, why, sizeof(why));
		said = ret != 0;
	}
	if (!ret && o->tmp && id)
		*id = (struct cp_out_id){.dev = o->tmp_dev, .ino = o->tmp_ino, .created = true};
	if (ret)
		remove_tmp(o);
	if (ret && err && said)
		snprintf(err, err_sz, "%s", why);
	else if (ret && err)
		snprintf(err, err_sz, "cannot write %s: %s", o->path ? o->path : "the output",
			 strerror(ret < 0 ? -ret : EIO));
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return ret < 0 ? ret : ret ? -EIO : 0;
}

int cp_out_close(struct cp_out *o, int ret, char *err, size_t err_sz)
{
	return cp_out_close_id(o, ret, NULL, err, err_sz);
}

int cp_out_file_try(const char *path, char *err, size_t err_sz)
{
	struct cp_out o = {.path = (char *)path};
	int v, fd, ret;

	if (is_stdout(path))
		return 0;
	v = judge_path(path, err, err_sz);
	if (v < 0)
		return v;
	if (v == CP_OUT_IN_PLACE) {
		/* not opened: a FIFO's reader would see it */
		ret = access(path, W_OK) ? -errno : 0;
		if (ret)
			snprintf(err, err_sz, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	fd = open_tmp(&o, err, err_sz);
	if (fd < 0)
		return fd;
	close(fd);
	remove_tmp(&o);
	free(o.tmp);
	return 0;
}

int cp_out_file_put(const char *path, mode_t mode, cp_out_fn fn, void *ctx, struct cp_out_id *id,
		    char *err, size_t err_sz)
{
	struct cp_out o;
	int ret;

	if (id)
		memset(id, 0, sizeof(*id));
	if (is_stdout(path)) {
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
	return cp_out_close_id(&o, fn(ctx, o.f), id, err, err_sz);
}

int cp_out_file_write(const char *path, mode_t mode, cp_out_fn fn, void *ctx, char *err,
		      size_t err_sz)
{
	return cp_out_file_put(path, mode, fn, ctx, NULL, err, err_sz);
}
