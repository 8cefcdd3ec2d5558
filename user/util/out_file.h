/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output files (report, JSON, Prometheus text, recording) written so a
 * reader never sees half of one and nobody else can redirect it: the text
 * goes to a new temporary file next to the target (mkstemp: O_EXCL, mode
 * 0600 from the start), which is renamed over the target at the end. "-" is
 * stdout. A character device or a FIFO (/dev/null, a terminal, a named
 * pipe) is written in place: renaming over it would replace the node itself.
 * A symbolic link at the path is refused, never followed nor replaced: in a
 * directory others can write, someone else may have planted it
 * (docs/security.md, "Outputs").
 */
#ifndef CP_OUT_FILE_H
#define CP_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Reports, JSON and recordings: they hold every target's names and address map. */
#define CP_OUT_PRIVATE 0600
/* The Prometheus text file: node_exporter reads it as another user. */
#define CP_OUT_SHARED 0644

/* Writes the content to @f; 0 or < 0. */
typedef int (*cp_out_fn)(void *ctx, FILE *f);

/* An output being written: open with cp_out_open(), end with cp_out_close(). */
struct cp_out {
	FILE *f;     /* write here */
	char *path;  /* the target; NULL for a stream given by the caller */
	char *tmp;   /* the temporary file; NULL when written in place */
	mode_t mode; /* of the file once renamed */
};

/*
 * Opens @path for writing: its temporary file, or the device or FIFO itself.
 * Returns 0 with @o->f set, or < 0 with a message naming @path in @err
 * (-ELOOP for a symbolic link, -EISDIR for a directory); @path is untouched.
 */
int cp_out_open(struct cp_out *o, const char *path, mode_t mode, char *err, size_t err_sz);

/*
 * Ends @o: when @ret is 0 and every write reached the file, gives it its
 * mode and renames it over the target; else removes it and leaves the
 * target as it was. Returns 0, or < 0 (@ret first) with a message in @err
 * (which may be NULL). @o is empty afterwards; an empty @o returns @ret.
 */
int cp_out_close(struct cp_out *o, int ret, char *err, size_t err_sz);

/*
 * Replaces @path with what @fn writes (@mode, CP_OUT_*). Returns 0, or < 0
 * with a message in @err naming the file; @path is then left as it was.
 */
int cp_out_file_write(const char *path, mode_t mode, cp_out_fn fn, void *ctx, char *err,
		      size_t err_sz);

/*
 * Whether cp_out_open(@path) would succeed, said before a run: refuses a
 * symbolic link or a directory at @path, checks a device or FIFO is
 * writable, else creates and removes a temporary file next to it. 0, or < 0
 * with a message naming @path in @err.
 */
int cp_out_file_try(const char *path, char *err, size_t err_sz);

#endif /* CP_OUT_FILE_H */
