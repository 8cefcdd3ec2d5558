/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared mappings between processes. Two processes that map one file
 * MAP_SHARED (a file, a POSIX or System V shared memory segment, a memfd,
 * or an anonymous shared mapping inherited across fork, which maps an
 * unlinked shmem file) share its bytes at addresses of their own. The
 * first process seen accessing such a file (its device and inode) lends
 * its addresses: another process's access to the same byte of the file is
 * given at the first one's address, so the miss store compares the two
 * processes' accesses to a line as it compares two threads' (their thread
 * ids are unique across processes).
 *
 * Pure and bounded: at most CP_MAX_SHARED_FILES files, those past it are
 * compared within each process only, counted.
 */
#ifndef CP_SHARED_MAPS_H
#define CP_SHARED_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "objects/proc_maps.h"

#define CP_MAX_SHARED_FILES 256

struct cp_shared_maps_stats {
	__u64 files; /* shared files followed */
	__u64 moved; /* accesses given at the first process's address */
	/* accesses to a part of the file the first process does not map: kept at their own */
	__u64 outside;
	__u64 full; /* accesses to files past CP_MAX_SHARED_FILES: kept at their own */
};

struct cp_shared_maps;

/* An empty table. NULL: out of memory. */
struct cp_shared_maps *cp_shared_maps__new(void);
void cp_shared_maps__free(struct cp_shared_maps *s);

/*
 * Where @tgid's access at *@addr goes, @m being @tgid's shared file
 * mapping that holds it (cp_objects__shared_map()): unchanged when @tgid
 * lends the file its addresses (the first to access it) or when the lender
 * does not map that part of the file; else *@addr becomes the lender's
 * address of the byte and *@space the lender. Returns true when moved.
 */
bool cp_shared_maps__place(struct cp_shared_maps *s, __u32 tgid, const struct cp_map *m,
			   __u64 *addr, __u32 *space);

/*
 * @tgid exec'd: its addresses mean other things now. Each file it lent
 * its addresses to takes the next process's that accesses it.
 */
void cp_shared_maps__forget(struct cp_shared_maps *s, __u32 tgid);

void cp_shared_maps__stats(const struct cp_shared_maps *s, struct cp_shared_maps_stats *out);

#endif /* CP_SHARED_MAPS_H */
