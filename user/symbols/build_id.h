/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GNU build-id of an ELF file: what says a file replayed offline is the
 * one that was mapped when the recording was made.
 */
#ifndef CP_BUILD_ID_H
#define CP_BUILD_ID_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Reads @path's build-id into @id (up to @cap bytes). Returns its length,
 * 0 when the file has none (or is not ELF), or a negative errno opening it.
 */
int cp_build_id_read(const char *path, __u8 *id, size_t cap);

/* Lower-case hex of @id into @buf (truncated to fit); returns @buf. */
const char *cp_build_id_hex(const __u8 *id, size_t len, char *buf, size_t sz);

#endif /* CP_BUILD_ID_H */
