/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Paths as reports show them: short names of modules and source files. */
#ifndef CP_PATH_H
#define CP_PATH_H

/*
 * Returns the part of @path after its last '/': "libc.so.6" for
 * "/usr/lib/libc.so.6", @path itself when it has no '/' ("[vdso]"), and ""
 * when it ends in '/'. A pointer into @path, not a copy, so it costs nothing
 * per sample and lives as long as @path does. @path must not be NULL:
 * callers test for an unknown module or file before they name it.
 */
const char *cp_base_name(const char *path);

#endif /* CP_PATH_H */
