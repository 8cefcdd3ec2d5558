// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading small sysfs/procfs values below a replaceable root. */
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

int cp_sysfs_read(const char *root, const char *rel, char *buf, size_t sz)
{
	char path[4096];
	size_t len = 0;
	ssize_t n;
	int fd, err;

	if (sz == 0)
		return -EINVAL;
	err = cp_sysfs_path(path, sizeof(path), root, rel);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
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

char *cp_sysfs_chomp(char *s)
{
	size_t len = strlen(s);

	if (len > 0 && s[len - 1] == '\n')
		s[len - 1] = '\0';
	return s;
}
