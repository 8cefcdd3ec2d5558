/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What lets processes share one parsed ELF file in the symbolizer: which
 * mappings qualify, whether a file on disk is the one a mapping holds, and a
 * process address to the file's link-time address. Pure.
 */
#ifndef CP_SYM_SHARE_H
#define CP_SYM_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "objects/proc_maps.h"

/* A PT_LOAD segment: where its bytes are in the file and at link time. */
struct cp_sym_load {
	__u64 offset; /* p_offset */
	__u64 filesz; /* p_filesz */
	__u64 vaddr;  /* p_vaddr */
};

/* Which file a mapping holds: the kernel's device and inode (maps or stat). */
struct cp_sym_file_key {
	__u32 dev_major;
	__u32 dev_minor;
	__u64 ino;
};

/*
 * Whether @m may be resolved in a shared file: executable code of a file
 * named by an absolute path that still exists under that name (not
 * " (deleted)", not memfd/shmem text without a path).
 */
bool cp_sym_map_shareable(const struct cp_map *m);

/*
 * Whether @m's file, when a tenant's, is the describe server's to parse
 * (symbols/sym_server.h): executable code of a file named by an absolute
 * path, deleted or replaced since it was mapped too (reached through
 * map_files). A shareable mapping is such a one.
 */
bool cp_sym_map_servable(const struct cp_map *m);

/* @m's file as the maps line names it. */
struct cp_sym_file_key cp_sym_map_key(const struct cp_map *m);

/* A stat()'s st_dev/st_ino as a key (major/minor split the way the kernel prints them). */
struct cp_sym_file_key cp_sym_stat_key(__u64 st_dev, __u64 st_ino);

bool cp_sym_key_equal(const struct cp_sym_file_key *a, const struct cp_sym_file_key *b);

/*
 * @ip, in a mapping [@map_start, @map_end) of file offset @map_offset, as
 * the link-time address of the file whose PT_LOAD segments are @loads: the
 * byte of the file at ip, placed by the segment holding it - or, in the
 * page padding around a segment's bytes, by the segment the mapping maps (as
 * a load bias would place it). Returns 0, or -ENOENT when ip is outside the
 * mapping or the mapping maps no segment's bytes (the caller falls back).
 */
int cp_sym_link_addr(const struct cp_sym_load *loads, size_t nr, __u64 map_start, __u64 map_end,
		     __u64 map_offset, __u64 ip, __u64 *vaddr);

#endif /* CP_SYM_SHARE_H */
