// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sharing parsed ELF files across processes: the pure decisions (sym_share.h). */
#include <errno.h>
#include <sys/sysmacros.h>

#include "symbols/sym_share.h"

bool cp_sym_map_servable(const struct cp_map *m)
{
	return m->kind == CP_MAP_FILE && (m->prot & CP_MAP_EXEC) && m->path && m->path[0] == '/' &&
	       m->inode;
}

bool cp_sym_map_shareable(const struct cp_map *m)
{
	return cp_sym_map_servable(m) && !m->deleted;
}

struct cp_sym_file_key cp_sym_map_key(const struct cp_map *m)
{
	return (struct cp_sym_file_key){
		.dev_major = m->dev_major,
		.dev_minor = m->dev_minor,
		.ino = m->inode,
	};
}

struct cp_sym_file_key cp_sym_stat_key(__u64 st_dev, __u64 st_ino)
{
	return (struct cp_sym_file_key){
		.dev_major = major(st_dev),
		.dev_minor = minor(st_dev),
		.ino = st_ino,
	};
}

bool cp_sym_key_equal(const struct cp_sym_file_key *a, const struct cp_sym_file_key *b)
{
	return a->ino == b->ino && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
}

int cp_sym_link_addr(const struct cp_sym_load *loads, size_t nr, __u64 map_start, __u64 map_end,
		     __u64 map_offset, __u64 ip, __u64 *vaddr)
{
	const struct cp_sym_load *seg = NULL;
	__u64 off, map_last;

	if (ip < map_start || ip >= map_end)
		return -ENOENT;
	off = ip - map_start + map_offset;
	map_last = map_offset + (map_end - map_start) - 1;
	for (size_t i = 0; i < nr; i++) {
		const struct cp_sym_load *l = &loads[i];

		/* segments whose bytes this mapping maps: the one holding ip, else
		 * the last starting below it, else the first (page padding) */
		if (!l->filesz || l->offset > map_last || l->offset + l->filesz <= map_offset)
			continue;
		if (off >= l->offset && off - l->offset < l->filesz) {
			seg = l;
			break;
		}
		if (!seg || l->offset <= off)
			seg = l;
	}
	if (!seg)
		return -ENOENT;
	*vaddr = off - seg->offset + seg->vaddr;
	return 0;
}
