/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small text files below a replaceable root ("/" in production, a fake tree
 * under tests/data in unit tests, --sysfs-root on the command line).
 */
#ifndef CP_SYSFS_H
#define CP_SYSFS_H

#include <dirent.h>
#include <stdbool.h>
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
 * Reads the one-value file @root/@rel into @buf as cp_sysfs_read() does,
 * then drops its trailing newline: what a caller compares or shows. Returns
 * 0, or a negative errno with @buf "" (when @sz > 0), so that a missing
 * optional file (caps/pmu_name) leaves an empty field, not stale bytes.
 */
int cp_sysfs_read_value(const char *root, const char *rel, char *buf, size_t sz);

/*
 * Reads the start of @root/@rel, at most @sz - 1 bytes, into @buf
 * (NUL-terminated): for files far longer than what their reader needs
 * (/proc/cpuinfo has a block per CPU; the first one says what the CPU is),
 * where cp_sysfs_read() would fail with -EFBIG. Returns the number of bytes
 * read, or a negative errno (-EINVAL when @sz is 0); on a read error @buf
 * holds the bytes read before it.
 */
int cp_sysfs_read_head(const char *root, const char *rel, char *buf, size_t sz);

/*
 * Opens the directory @root/@rel for readdir(). Returns the stream, or NULL
 * with errno set (ENAMETOOLONG when the joined path does not fit, else
 * opendir()'s). The caller closes it with closedir().
 */
DIR *cp_sysfs_opendir(const char *root, const char *rel);

/*
 * Returns true if the directory @root/@rel exists and can be opened: how a
 * PMU or cache index shows that the kernel knows it, before its files are
 * read. False for a file, a missing path or one too long to join.
 */
bool cp_sysfs_dir_exists(const char *root, const char *rel);

/*
 * Removes one trailing "\n" from @s in place, as sysfs and procfs end every
 * value with exactly one. Returns @s.
 */
char *cp_sysfs_chomp(char *s);

#endif /* CP_SYSFS_H */
