/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small text files below a replaceable root ("/" in production, a fake tree
 * under tests/data in unit tests, --sysfs-root on the command line).
 */
#ifndef CP_SYSFS_H
#define CP_SYSFS_H

#include <stddef.h>

/*
 * Writes @root joined with @rel ("sys/...", leading '/' optional) to @buf.
 * Returns 0, or -ENAMETOOLONG when it does not fit.
 */
int cp_sysfs_path(char *buf, size_t sz, const char *root, const char *rel);

/*
 * Reads the file @root/@rel into @buf (NUL-terminated, at most @sz - 1 bytes,
 * trailing newline kept: parsers decide what a newline means). Returns the
 * number of bytes read, or a negative errno (-ENOENT, -EACCES, -EFBIG when
 * the file does not fit).
 */
int cp_sysfs_read(const char *root, const char *rel, char *buf, size_t sz);

/*
 * Removes one trailing "\n" from @s in place, as sysfs and procfs end every
 * value with exactly one. Returns @s.
 */
char *cp_sysfs_chomp(char *s);

#endif /* CP_SYSFS_H */
