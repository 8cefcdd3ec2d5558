// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>

#include "symbols/build_id.h"

int cp_build_id_read(const char *path, __u8 *id, size_t cap)
{
	const void *bits;
	ssize_t len = 0;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		len = dwelf_elf_gnu_build_id(elf, &bits);
		if (len > 0) {
			if ((size_t)len > cap)
				len = (ssize_t)cap;
			memcpy(id, bits, (size_t)len);
		}
		elf_end(elf);
	}
	close(fd);
	return len > 0 ? (int)len : 0;
}

const char *cp_build_id_hex(const __u8 *id, size_t len, char *buf, size_t sz)
{
	size_t n = 0;

	if (sz)
		buf[0] = '\0';
	for (size_t i = 0; i < len && n + 3 <= sz; i++)
		n += (size_t)snprintf(buf + n, sz - n, "%02x", id[i]);
	return buf;
}
