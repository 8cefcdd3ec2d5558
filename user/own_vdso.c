// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's own [vdso] copied into a memfd, for the symbolizer to open as a file. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

#include "own_vdso.h"
#include "proc_maps.h"

int cp_own_vdso_memfd(size_t *len)
{
	const struct cp_map *vdso = NULL;
	struct cp_maps *mine;
	const char *p;
	size_t left;
	int fd, err = cp_maps__read(NULL, getpid(), &mine);

	if (err)
		return err;
	for (size_t i = 0; i < mine->nr && !vdso; i++)
		if (mine->maps[i].kind == CP_MAP_VDSO)
			vdso = &mine->maps[i];
	if (!vdso) {
		cp_maps__free(mine);
		return -ENOENT;
	}
	*len = left = (size_t)(vdso->end - vdso->start);
	p = (const char *)(uintptr_t)vdso->start;
	fd = memfd_create("cacheperf-vdso", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		cp_maps__free(mine);
		return err;
	}
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			cp_maps__free(mine);
			return err;
		}
		p += n;
		left -= (size_t)n;
	}
	cp_maps__free(mine);
	return fd;
}
