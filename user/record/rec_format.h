/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording file format (docs/recording.md): a 16-byte file header, then
 * sections, each a 16-byte section header (type, payload length, CRC-32 of
 * the payload, CRC-32 of the header's first 12 bytes) and its payload.
 * Little-endian throughout; the raw ring-buffer records and counter entries
 * are the x86-64 structs of include/cacheperf/ as the kernel wrote them.
 *
 * This file holds the constants and the payload codecs: pure functions that
 * encode into a growable buffer and decode from a bounded cursor, so every
 * length field is checked against what remains before it is used.
 */
#ifndef CP_REC_FORMAT_H
#define CP_REC_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "profile/insn_store.h"
#include "profile/stack_store.h"
#include "objects/proc_maps.h"
#include "profile/run_facts.h"

#define CP_REC_MAGIC	 "CPERFREC"
#define CP_REC_MAGIC_LEN 8
/*
 * 2: ticks in the counters and stats (the soft source); 3: call-site stacks
 * (CP_REC_ALLOC_STACK records); 4: the skid counters of the soft source;
 * 5: the BPF counter kernel_ip and the end's kernel throttles (version 4
 * files read with them 0); 6: the samples' call stacks (sample-stacks
 * sections, and three BPF counters of their drops; older files have
 * neither); 7: the processes' descriptions (CP_REC_PROC_DESC records; older
 * files name a process by its exec record only). Older files than 4 are
 * refused: their counter entries and stats are shorter.
 */
#define CP_REC_VERSION	    7
#define CP_REC_VERSION_MIN  4
#define CP_REC_FILE_HDR_LEN 16
#define CP_REC_SEC_HDR_LEN  16
#define CP_REC_MAX_SECTION  (16u << 20) /* payload bytes: a maps text fits easily */
#define CP_REC_MAX_RECORD   4096	/* one ring-buffer record */
#define CP_REC_EVENTS_BYTES (64u << 10) /* the writer's batch of records */
#define CP_REC_MAX_BUILD_ID 64
#define CP_REC_MAX_PATH	    4096

enum cp_rec_section_type {
	CP_SEC_HEADER = 1,	  /* struct cp_run_info; first, once */
	CP_SEC_EVENTS = 2,	  /* ring-buffer records, in the order drained */
	CP_SEC_COUNTERS = 3,	  /* one interval's per-instruction counter entries */
	CP_SEC_MAPS = 4,	  /* a process's /proc/PID/maps text as read, and by whom */
	CP_SEC_BUILD_ID = 5,	  /* a mapped file's build-id, at its first appearance */
	CP_SEC_STACKS = 6,	  /* a process's thread stacks as found */
	CP_SEC_END = 7,		  /* struct cp_run_end; last, once */
	CP_SEC_SAMPLE_STACKS = 8, /* one interval's counts per (instruction, call stack) */
	CP_SEC_NR,
};

/* "events", "maps"...; "?" for an unknown type. */
const char *cp_rec_section_name(__u32 type);

/* A growable output buffer; ->oom records a failed growth (the content is then incomplete). */
struct cp_rec_buf {
	__u8 *p;
	size_t len;
	size_t cap;
	bool oom;
};

void cp_rec_buf_free(struct cp_rec_buf *b);
void cp_rec_put(struct cp_rec_buf *b, const void *data, size_t len);
void cp_rec_put_u32(struct cp_rec_buf *b, __u32 v);
void cp_rec_put_u64(struct cp_rec_buf *b, __u64 v);

/*
 * A bounded reader over one payload. On a short read the get functions
 * return -EINVAL and leave ->bad at the offending file offset, once.
 */
struct cp_rec_cursor {
	const __u8 *p;
	size_t len;
	size_t pos;
	__u64 file_off; /* file offset of p[0] */
	__u32 version;	/* of the file; 0: CP_REC_VERSION */
};

int cp_rec_get(struct cp_rec_cursor *c, void *out, size_t len);
int cp_rec_get_u32(struct cp_rec_cursor *c, __u32 *v);
int cp_rec_get_u64(struct cp_rec_cursor *c, __u64 *v);
/* The file offset of the cursor's next byte. */
__u64 cp_rec_where(const struct cp_rec_cursor *c);

/*
 * Payload codecs. Encoders append to @b. Decoders return 0, or -EINVAL with
 * a sentence naming the file offset in @err.
 */
void cp_rec_encode_info(struct cp_rec_buf *b, const struct cp_run_info *in);
int cp_rec_decode_info(struct cp_rec_cursor *c, struct cp_run_info *out, char *err, size_t sz);
void cp_rec_encode_end(struct cp_rec_buf *b, const struct cp_run_end *e);
int cp_rec_decode_end(struct cp_rec_cursor *c, struct cp_run_end *out, char *err, size_t sz);

void cp_rec_encode_counters(struct cp_rec_buf *b, const struct cp_insn *v, size_t n);
/* Points *@v at the payload's @n entries; read each with cp_rec_counter_get(). */
int cp_rec_decode_counters(struct cp_rec_cursor *c, const void **v, size_t *n, char *err,
			   size_t sz);
/* Entry @i of decoded counters: key and counts, the rest of @out zero. */
void cp_rec_counter_get(const void *raw, size_t i, struct cp_insn *out);

void cp_rec_encode_sample_stacks(struct cp_rec_buf *b, const struct cp_stack_sample *v, size_t n);
/* The entry count of a sample-stacks payload; then each entry with cp_rec_next_sample_stack(). */
int cp_rec_decode_sample_stacks(struct cp_rec_cursor *c, __u32 *count, char *err, size_t sz);
/* The next entry into @out (its frames checked: 1..CP_STACK_DEPTH); 0 or -EINVAL. */
int cp_rec_next_sample_stack(struct cp_rec_cursor *c, struct cp_stack_sample *out, char *err,
			     size_t sz);
/* After the last entry: 0 when nothing is left over, else -EINVAL. */
int cp_rec_sample_stacks_end(const struct cp_rec_cursor *c, char *err, size_t sz);

/* Who read a maps text: the object table and the symbolizer read at their own times. */
enum cp_rec_maps_reader {
	CP_REC_MAPS_OBJECTS = 0,
	CP_REC_MAPS_SYMBOLS = 1,
};

/* One maps read of @pid by @who: the text, or @error (a positive errno) and no text. */
struct cp_rec_maps {
	pid_t pid;
	__u32 who;   /* enum cp_rec_maps_reader */
	__u32 error; /* 0, or why the read failed (ESRCH: the process was gone) */
	const char *text;
	size_t len;
};

/*
 * The bytes of @text (@len) a maps section holds: whole lines, at most its
 * payload less the record's head (CP_MAX_MAPS_BYTES of text is 16 bytes
 * more than a section takes). A section past it was not written, and its
 * replay named a new process at that pid with the exited one's maps. Pure.
 */
#define CP_REC_MAPS_TEXT_MAX (CP_REC_MAX_SECTION - 4 * sizeof(__u32))
size_t cp_rec_maps_fit(const char *text, size_t len);

void cp_rec_encode_maps(struct cp_rec_buf *b, const struct cp_rec_maps *m);
int cp_rec_decode_maps(struct cp_rec_cursor *c, struct cp_rec_maps *m, char *err, size_t sz);

void cp_rec_encode_stacks(struct cp_rec_buf *b, pid_t pid, const struct cp_range *r, size_t n);
/* Copies at most CP_MAX_THREAD_STACKS ranges into @r (room for that many). */
int cp_rec_decode_stacks(struct cp_rec_cursor *c, pid_t *pid, struct cp_range *r, size_t *n,
			 char *err, size_t sz);

struct cp_rec_build_id {
	__u64 inode;
	__u32 id_len; /* 0: the file had none, or could not be read */
	__u8 id[CP_REC_MAX_BUILD_ID];
	char path[CP_REC_MAX_PATH]; /* NUL-terminated */
};

void cp_rec_encode_build_id(struct cp_rec_buf *b, const struct cp_rec_build_id *id);
int cp_rec_decode_build_id(struct cp_rec_cursor *c, struct cp_rec_build_id *out, char *err,
			   size_t sz);

/*
 * One record of an events payload: an 8-byte header (u32 size, u32 zero),
 * then size bytes padded to 8. Returns 1 with *@data/@size set, 0 at the
 * payload's end, or -EINVAL (size 0, above CP_REC_MAX_RECORD or past the end).
 */
int cp_rec_next_event(struct cp_rec_cursor *c, const void **data, size_t *size, char *err,
		      size_t sz);
/* The bytes one record of @size takes in an events payload. */
#define CP_REC_EVENT_LEN(size) (8 + (((size) + 7) & ~(size_t)7))

#endif /* CP_REC_FORMAT_H */
