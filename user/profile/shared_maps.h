/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared mappings between processes. Processes that map one file
 * MAP_SHARED (a file, POSIX or System V shared memory, a memfd, or an
 * anonymous shared mapping inherited across fork, which maps an unlinked
 * shmem file) share its bytes at addresses of their own. So an access to
 * such a mapping is given in the file's own line space: the space of the
 * file (its device and inode, a number above any pid, cp_space_is_file())
 * and the offset in the file, whichever process made it. The miss store
 * then compares the accesses of every process to a line as it compares two
 * threads' (thread ids are unique across processes).
 *
 * Pure and bounded: at most CP_MAX_SHARED_FILES files are followed; past
 * that the least recently accessed one is dropped (counted): its lines
 * stay in the miss store, reported without the file's name.
 */
#ifndef CP_SHARED_MAPS_H
#define CP_SHARED_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "objects/proc_maps.h"
#include "profile/miss_store.h"

#define CP_MAX_SHARED_FILES 1024
#define CP_SHARED_NAME_LEN  128

struct cp_shared_maps_stats {
	__u64 files;   /* followed now */
	__u64 dropped; /* files dropped at the cap (least recently accessed) */
	__u64 given;   /* accesses given in a file's line space */
	__u64 refused; /* accesses left in their process's space: no file space left */
};

/* What a file's line space is, for the report. */
struct cp_shared_file {
	char name[CP_SHARED_NAME_LEN]; /* as /proc/PID/maps names it, " (deleted)" kept */
	__u64 mapped;		       /* the highest file offset mapped, + 1 */
};

struct cp_shared_maps;

/* An empty table. NULL: out of memory. */
struct cp_shared_maps *cp_shared_maps__new(void);
void cp_shared_maps__free(struct cp_shared_maps *s);

/*
 * Gives the access at *@addr of a process whose shared file mapping @m
 * holds it in the file's line space: *@space its space, *@addr its offset
 * in the file. Returns false (nothing changed) only when no space is left
 * (after 2^31 files over a run).
 */
bool cp_shared_maps__place(struct cp_shared_maps *s, const struct cp_map *m, __u64 *addr,
			   __u32 *space);

/* The file of line space @space into @out. -ENOENT when it is not followed (any more). */
int cp_shared_maps__file(const struct cp_shared_maps *s, __u32 space, struct cp_shared_file *out);

void cp_shared_maps__stats(const struct cp_shared_maps *s, struct cp_shared_maps_stats *out);

#endif /* CP_SHARED_MAPS_H */
