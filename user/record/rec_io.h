/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Recording files section by section (format: rec_format.h,
 * docs/recording.md). The writer batches ring-buffer records into events
 * sections and keeps the first error; the reader checks the file header,
 * every section header and payload checksum, every length against
 * CP_REC_MAX_SECTION and the file's end, and the section order (header
 * first, end last), naming the byte offset of what is wrong.
 */
#ifndef CP_REC_IO_H
#define CP_REC_IO_H

#include <stdio.h>

#include "record/rec_format.h"

struct cp_rec_writer;

/*
 * Creates @path and writes the file header: a temporary file next to it
 * (mode 0600) that cp_rec_writer__close() renames over @path once every
 * section is written; a symbolic link at @path is refused (util/out_file.h).
 * NULL with @err set.
 */
struct cp_rec_writer *cp_rec_writer__open(const char *path, char *err, size_t err_sz);
/* The same over an open stream, which the writer then owns. */
struct cp_rec_writer *cp_rec_writer__new(FILE *f);

/* Appends one ring-buffer record (1..CP_REC_MAX_RECORD bytes) to the pending events. */
int cp_rec_writer__event(struct cp_rec_writer *w, const void *data, size_t size);

/* Writes pending events, then one section of @len bytes (<= CP_REC_MAX_SECTION). */
int cp_rec_writer__section(struct cp_rec_writer *w, __u32 type, const void *payload, size_t len);

/* Bytes written so far (file header and sections). */
__u64 cp_rec_writer__bytes(const struct cp_rec_writer *w);

/*
 * Writes pending events and closes the stream; a file made by
 * cp_rec_writer__open() then replaces its path, or is removed after an
 * error. Returns 0, or the first error of the writer's life (-ENOSPC, -EIO,
 * -ENOMEM...). NULL is a no-op.
 */
int cp_rec_writer__close(struct cp_rec_writer *w);
/* The same, with what went wrong in @why ("" when nothing did, or only @err says it). */
int cp_rec_writer__finish(struct cp_rec_writer *w, char *why, size_t why_sz);

/* Closes and removes what cp_rec_writer__open() made, leaving its path as it was; -ECANCELED. */
int cp_rec_writer__discard(struct cp_rec_writer *w);

struct cp_rec_section {
	__u32 type;		      /* enum cp_rec_section_type */
	__u64 offset;		      /* file offset of its section header */
	struct cp_rec_cursor payload; /* valid until the next call */
};

struct cp_rec_reader;

/* Reads and checks the file header of @f (the reader does not own @f). NULL with @err set. */
struct cp_rec_reader *cp_rec_reader__new(FILE *f, char *err, size_t err_sz);
void cp_rec_reader__free(struct cp_rec_reader *r);

/*
 * The next section, its checksums verified. Returns 1 with @out set, 0 after
 * the end section at the end of the file, or -EINVAL with a sentence naming
 * the byte offset in @err (truncation, corruption, order, unknown type).
 */
int cp_rec_reader__next(struct cp_rec_reader *r, struct cp_rec_section *out, char *err,
			size_t err_sz);

#endif /* CP_REC_IO_H */
