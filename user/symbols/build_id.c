// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <libelf.h>

#include "machine/elf_bounds.h"
#include "machine/target_file.h"
#include "symbols/build_id.h"

/* The build-id of the sealed copy at @mfd (closed). */
static int read_copy(int mfd, __u8 *id, size_t cap)
{
	const void *bits = NULL;
	int len = 0;
	Elf *elf;

	if (mfd < 0)
		return mfd;
	elf_version(EV_CURRENT);
	elf = elf_begin(mfd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		/* in bounds: libdw's dwelf_elf_gnu_build_id() copies odd-placed notes */
		len = cp_elf_build_id(elf, &bits);
		if ((size_t)len > cap)
			len = (int)cap;
		if (len > 0)
			memcpy(id, bits, (size_t)len);
		elf_end(elf);
	}
	close(mfd);
	return len;
}

int cp_build_id_read(const char *path, __u8 *id, size_t cap)
{
	struct cp_tf_where w = {.path = path};
	struct cp_tf_want want = {.follow = true};
	enum cp_tf_refusal why;
	struct cp_tf_stat st;

	return read_copy(cp_tf_open_copy(&w, &want, &st, &why), id, cap);
}

int cp_build_id_read_mapped(const char *proc_root, pid_t pid, const struct cp_map *m, __u8 *id,
			    size_t cap)
{
	struct cp_tf_where w;
	struct cp_tf_want want;
	enum cp_tf_refusal why;
	struct cp_tf_stat st;

	cp_map_target_file(m, proc_root, pid, &w, &want);
	return read_copy(cp_tf_open_copy(&w, &want, &st, &why), id, cap);
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
