// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own [vdso] copied into a memfd, for the symbolizer to open as a file. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

#include "symbols/own_vdso.h"
#include "objects/proc_maps.h"

int cp_own_vdso_memfd(size_t *len)
{
	const char *p = NULL;
	struct cp_maps *mine;
	size_t left = 0;
	int fd, err = cp_maps__read(NULL, getpid(), &mine);

	if (err)
		return err;
	for (size_t i = 0; i < mine->nr && !p; i++) {
		if (mine->maps[i].kind == CP_MAP_VDSO) {
			p = (const char *)(uintptr_t)mine->maps[i].start;
			left = (size_t)(mine->maps[i].end - mine->maps[i].start);
		}
	}
	cp_maps__free(mine);
	if (!p)
		return -ENOENT;
	*len = left;
	fd = memfd_create("cacheperf-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		p += n;
		left -= (size_t)n;
	}
	return fd;
}
