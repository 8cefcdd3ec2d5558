/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output files (report, JSON, Prometheus text, recording, profiles) written
 * so a reader never sees half of one and nobody else can redirect, read or
 * lose one: the text goes to a new temporary file next to the target
 * (mkstemp: O_EXCL, mode 0600 from the start), which is renamed over the
 * target at the end. "-" and /dev/stdout are stdout. What is at the path
 * decides (cp_out_judge(), pure), at the start and again at the rename:
 * nothing there is created, never replacing what appears meanwhile; a
 * regular file of this profiler's user (or root's) is replaced; a FIFO or
 * character device of theirs (/dev/null, a named pipe the operator made),
 * or one this process was given as stdin, stdout or stderr (a terminal), is
 * written in place, since renaming over it would replace the node itself.
 * Everything else is refused, never opened for writing nor replaced: a
 * symbolic link, a directory, a socket, a block device, and another user's
 * FIFO, device or file (in a directory others can write, a tenant may have
 * planted it to read the report or to have its file deleted). A temporary
 * file is removed only while it is still the one made (its device and
 * inode). docs/security.md, "Outputs".
 */
#ifndef CP_OUT_FILE_H
#define CP_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Reports, JSON and recordings: they hold every target's names and address map. */
#define CP_OUT_PRIVATE 0600
/* The Prometheus text file: node_exporter reads it as another user. */
#define CP_OUT_SHARED 0644

/* Writes the content to @f; 0 or < 0. */
typedef int (*cp_out_fn)(void *ctx, FILE *f);

/* What cp_out_judge() says of what is at an output's path. */
enum cp_out_verdict {
	CP_OUT_CREATE,	 /* nothing: created, never over what appears meanwhile */
	CP_OUT_REPLACE,	 /* a regular file of ours or root's: replaced by a rename */
	CP_OUT_IN_PLACE, /* a FIFO or character device of ours, root's or given: written in it */
	CP_OUT_NO_LINK,	 /* a symbolic link: never followed nor replaced (-ELOOP) */
	CP_OUT_NO_DIR,	 /* a directory (-EISDIR) */
	CP_OUT_NO_KIND,	 /* a socket or a block device: never written nor replaced (-EINVAL) */
	CP_OUT_NO_OWNER, /* another user's FIFO, device or file (-EPERM) */
};

/*
 * Pure: the verdict on the node @st (NULL: nothing at the path) for a
 * profiler whose effective user is @euid; @given: the node is one of this
 * process's stdin, stdout or stderr, which the operator gave it.
 */
enum cp_out_verdict cp_out_judge(const struct stat *st, uid_t euid, bool given);

/* The device and inode of a file cp_out_file_put() created and renamed into place. */
struct cp_out_id {
	dev_t dev;
	ino_t ino;
	bool created; /* false: written in place, or to stdout */
};

/* An output being written: open with cp_out_open(), end with cp_out_close(). */
struct cp_out {
	FILE *f;       /* write here */
	char *path;    /* the target; NULL for a stream given by the caller */
	char *tmp;     /* the temporary file; NULL when written in place */
	mode_t mode;   /* of the file once renamed */
	dev_t tmp_dev; /* the temporary file's, removed or renamed only while it is it */
	ino_t tmp_ino;
};

/*
 * Opens @path for writing: its temporary file, the device or FIFO itself,
 * or stdout. Returns 0 with @o->f set, or < 0 with a message naming @path
 * and why in @err (the errno of a refusal: enum cp_out_verdict); @path is
 * untouched, and a refused node is never opened for writing.
 */
int cp_out_open(struct cp_out *o, const char *path, mode_t mode, char *err, size_t err_sz);

/*
 * Ends @o: when @ret is 0 and every write reached the file, gives it its
 * mode and puts it at the target, judged again (a node planted since the
 * open is refused as it would have been then); else removes it and leaves
 * the target as it was. Returns 0, or < 0 (@ret first) with a message in
 * @err (which may be NULL). @o is empty afterwards; an empty @o returns
 * @ret. cp_out_close_id() also gives what was put in place (@id may be NULL).
 */
int cp_out_close(struct cp_out *o, int ret, char *err, size_t err_sz);
int cp_out_close_id(struct cp_out *o, int ret, struct cp_out_id *id, char *err, size_t err_sz);

/*
 * Replaces @path with what @fn writes (@mode, CP_OUT_*). Returns 0, or < 0
 * with a message in @err naming the file; @path is then left as it was.
 * cp_out_file_put() also gives what was put in place (@id may be NULL).
 */
int cp_out_file_write(const char *path, mode_t mode, cp_out_fn fn, void *ctx, char *err,
		      size_t err_sz);
int cp_out_file_put(const char *path, mode_t mode, cp_out_fn fn, void *ctx, struct cp_out_id *id,
		    char *err, size_t err_sz);

/*
 * Whether cp_out_open(@path) would succeed, said before a run: refuses what
 * cp_out_judge() refuses, checks a device or FIFO it would write in is
 * writable (without opening it), else creates and removes a temporary file
 * next to it. 0, or < 0 with a message naming @path in @err.
 */
int cp_out_file_try(const char *path, char *err, size_t err_sz);

#endif /* CP_OUT_FILE_H */
