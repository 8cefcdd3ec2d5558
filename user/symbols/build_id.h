/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GNU build-id of an ELF file: what says a file replayed offline is the
 * one that was mapped when the recording was made.
 */
#ifndef CP_BUILD_ID_H
#define CP_BUILD_ID_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "objects/proc_maps.h"

/*
 * Reads @path's build-id into @id (up to @cap bytes): a path the user names
 * (a replay's file). Returns its length, 0 when the file has none (or is
 * not ELF), or a negative errno opening it. Files are read as
 * machine/target_file.h reads them: never a FIFO, never mmapped.
 */
int cp_build_id_read(const char *path, __u8 *id, size_t cap);

/*
 * The same for the file of mapping @m of process @pid, in its root (a
 * container's path means another file in ours), only when it is the file
 * the mapping holds (device and inode).
 */
int cp_build_id_read_mapped(const char *proc_root, pid_t pid, const struct cp_map *m, __u8 *id,
			    size_t cap);

/* Lower-case hex of @id into @buf (truncated to fit); returns @buf. */
const char *cp_build_id_hex(const __u8 *id, size_t len, char *buf, size_t sz);

#endif /* CP_BUILD_ID_H */
