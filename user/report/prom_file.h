/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Prometheus text file on disk (node_exporter's textfile collector
 * convention): written whole to a temporary file in the same directory
 * (its name does not end in .prom, so the collector skips it) and renamed
 * over PATH, mode 0644. A symbolic link at PATH is refused, never followed
 * or replaced: a link planted there would otherwise point our root-owned
 * writes elsewhere.
 */
#ifndef CP_PROM_FILE_H
#define CP_PROM_FILE_H

#include <stddef.h>

#include "util/out_file.h"

/*
 * At startup: 0 when @path can be replaced (not a symbolic link, not a
 * directory, its directory takes a new file: one is created and removed),
 * else < 0 with a sentence in @err saying what is wrong and what to do.
 */
int cp_prom_file_check(const char *path, char *err, size_t err_sz);

/* Replaces @path with what @fn writes, refusing a symbolic link; 0 or < 0 with @err. */
int cp_prom_file_write(const char *path, cp_out_fn fn, void *ctx, char *err, size_t err_sz);

#endif /* CP_PROM_FILE_H */
