/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing a whole output file (report, JSON, Prometheus text) so a reader
 * never sees half of it: the text goes to a temporary file next to the
 * target, which is then renamed over it. "-" is stdout; a character device
 * or a FIFO (/dev/null, a terminal, a named pipe) is written in place.
 */
#ifndef CP_OUT_FILE_H
#define CP_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the content to @f; 0 or < 0. */
typedef int (*cp_out_fn)(void *ctx, FILE *f);

/*
 * Replaces @path with what @fn writes (mode 0644). Returns 0, or < 0 with
 * a message in @err naming the file; @path is then left as it was.
 */
int cp_out_file_write(const char *path, cp_out_fn fn, void *ctx, char *err, size_t err_sz);

/*
 * Whether cp_out_file_write(@path) could create its temporary file: one is
 * created and removed. 0, or < 0 with "cannot create a file next to @path:
 * why" in @err.
 */
int cp_out_file_try(const char *path, char *err, size_t err_sz);

#endif /* CP_OUT_FILE_H */
