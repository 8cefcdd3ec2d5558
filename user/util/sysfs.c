// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading small sysfs/procfs values below a replaceable root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/sysfs.h"

int cp_sysfs_path(char *buf, size_t sz, const char *root, const char *rel)
{
	size_t rlen = strlen(root);
	int n;

	/* "/" + "/sys/x" and "dir/" + "sys/x" must both give one separator */
	while (rlen > 0 && root[rlen - 1] == '/')
		rlen--;
	while (*rel == '/')
		rel++;
	n = snprintf(buf, sz, "%.*s/%s", (int)rlen, root, rel);
	if (n < 0 || (size_t)n >= sz)
		return -ENAMETOOLONG;
	return 0;
}

/* @root/@rel opened for reading: the descriptor, or a negative errno. */
static int open_rel(const char *root, const char *rel)
{
	char path[4096];
	int fd, err = cp_sysfs_path(path, sizeof(path), root, rel);

	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cp_sysfs_read(const char *root, const char *rel, char *buf, size_t sz)
{
	size_t len = 0;
	ssize_t n;
	int fd, err;

	if (sz == 0)
		return -EINVAL;
	fd = open_rel(root, rel);
	if (fd < 0)
		return fd;
	/* sysfs returns a value in one read, procfs may not: loop to EOF */
	while ((n = read(fd, buf + len, sz - 1 - len)) > 0) {
		len += n;
		if (len == sz - 1)
			break;
	}
	err = n < 0 ? -errno : 0;
	if (!err && len == sz - 1) {
		char extra;

		if (read(fd, &extra, 1) > 0)
			err = -EFBIG;
	}
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return (int)len;
}

int cp_sysfs_read_value(const char *root, const char *rel, char *buf, size_t sz)
{
	int n = cp_sysfs_read(root, rel, buf, sz);

	if (n < 0) {
		if (sz)
			buf[0] = '\0';
		return n;
	}
	cp_sysfs_chomp(buf);
	return 0;
}

int cp_sysfs_read_head(const char *root, const char *rel, char *buf, size_t sz)
{
	size_t len = 0;
	ssize_t n = 0;
	int fd, err;

	if (sz == 0)
		return -EINVAL;
	buf[0] = '\0';
	fd = open_rel(root, rel);
	if (fd < 0)
		return fd;
	/* procfs hands out a page or so per read: loop until the buffer is full */
	while (len < sz - 1 && (n = read(fd, buf + len, sz - 1 - len)) > 0)
		len += n;
	err = n < 0 ? -errno : 0;
	close(fd);
	buf[len] = '\0';
	return err ? err : (int)len;
}

DIR *cp_sysfs_opendir(const char *root, const char *rel)
{
	char path[4096];
	int err = cp_sysfs_path(path, sizeof(path), root, rel);

	if (err) {
		errno = -err;
		return NULL;
	}
	return opendir(path);
}

bool cp_sysfs_dir_exists(const char *root, const char *rel)
{
	DIR *d = cp_sysfs_opendir(root, rel);

	if (!d)
		return false;
	closedir(d);
	return true;
}

char *cp_sysfs_chomp(char *s)
{
	size_t len = strlen(s);

	if (len > 0 && s[len - 1] == '\n')
		s[len - 1] = '\0';
	return s;
}
