// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Recording files: section framing, checksums, order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/out_file.h"
#include "record/rec_crc.h"
#include "record/rec_io.h"

struct cp_rec_writer {
	struct cp_out out; /* renamed over the path when closed */
	FILE *f;
	struct cp_rec_buf events; /* records not yet written */
	__u64 bytes;
	int err; /* the first error, negative errno */
};

struct cp_rec_reader {
	FILE *f;
	__u64 off; /* of the next byte */
	__u8 *buf;
	size_t cap;
	__u32 last;    /* type of the previous section, 0 before the first */
	__u32 version; /* the file's format version */
};

/* ---- writer ---- */

static void put_file_header(__u8 hdr[CP_REC_FILE_HDR_LEN])
{
	__u32 v = CP_REC_VERSION, c;

	memcpy(hdr, CP_REC_MAGIC, CP_REC_MAGIC_LEN);
	memcpy(hdr + 8, &v, 4);
	c = cp_rec_crc(hdr, 12);
	memcpy(hdr + 12, &c, 4);
}

static void write_bytes(struct cp_rec_writer *w, const void *p, size_t len)
{
	if (w->err)
		return;
	if (fwrite(p, 1, len, w->f) != len) {
		w->err = errno ? -errno : -EIO;
		return;
	}
	w->bytes += len;
}

struct cp_rec_writer *cp_rec_writer__new(FILE *f)
{
	struct cp_rec_writer *w = calloc(1, sizeof(*w));
	__u8 hdr[CP_REC_FILE_HDR_LEN];

	if (!w)
		return NULL;
	w->f = f;
	put_file_header(hdr);
	write_bytes(w, hdr, sizeof(hdr));
	return w;
}

struct cp_rec_writer *cp_rec_writer__open(const char *path, char *err, size_t err_sz)
{
	struct cp_rec_writer *w;
	struct cp_out out;
	char why[512];
	int ret;

	/* every target's address map is in it: private, and never through a link */
	ret = cp_out_open(&out, path, CP_OUT_PRIVATE, why, sizeof(why));
	if (ret) {
		snprintf(err, err_sz, "cannot create the recording: %s", why);
		return NULL;
	}
	w = cp_rec_writer__new(out.f);
	if (!w) {
		cp_out_close(&out, -ENOMEM, NULL, 0);
		snprintf(err, err_sz, "out of memory");
		return NULL;
	}
	w->out = out;
	return w;
}

static void write_section(struct cp_rec_writer *w, __u32 type, const void *payload, size_t len)
{
	__u32 hdr[4] = {type, (__u32)len, cp_rec_crc(payload, len), 0};

	hdr[3] = cp_rec_crc(hdr, 12);
	write_bytes(w, hdr, sizeof(hdr));
	write_bytes(w, payload, len);
}

static void flush_events(struct cp_rec_writer *w)
{
	if (w->events.oom && !w->err)
		w->err = -ENOMEM;
	if (w->events.len)
		write_section(w, CP_SEC_EVENTS, w->events.p, w->events.len);
	w->events.len = 0;
	w->events.oom = false;
}

int cp_rec_writer__event(struct cp_rec_writer *w, const void *data, size_t size)
{
	static const __u8 zeros[8];
	__u32 hdr[2] = {(__u32)size, 0};

	if (!size || size > CP_REC_MAX_RECORD)
		return -EINVAL;
	if (w->events.len + CP_REC_EVENT_LEN(size) > CP_REC_EVENTS_BYTES)
		flush_events(w);
	cp_rec_put(&w->events, hdr, sizeof(hdr));
	cp_rec_put(&w->events, data, size);
	cp_rec_put(&w->events, zeros, CP_REC_EVENT_LEN(size) - 8 - size);
	return w->err;
}

int cp_rec_writer__section(struct cp_rec_writer *w, __u32 type, const void *payload, size_t len)
{
	if (len > CP_REC_MAX_SECTION)
		return -E2BIG;
	flush_events(w);
	write_section(w, type, payload, len);
	return w->err;
}

__u64 cp_rec_writer__bytes(const struct cp_rec_writer *w)
{
	return w->bytes;
}

int cp_rec_writer__close(struct cp_rec_writer *w)
{
	return cp_rec_writer__finish(w, NULL, 0);
}

int cp_rec_writer__finish(struct cp_rec_writer *w, char *why, size_t why_sz)
{
	int err;

	if (why_sz)
		why[0] = '\0';
	if (!w)
		return 0;
	flush_events(w);
	if (w->out.f) {
		/* a refused path (a FIFO planted since the start) says why */
		w->err = cp_out_close(&w->out, w->err, why, why_sz);
	} else if (fclose(w->f) && !w->err) {
		w->err = errno ? -errno : -EIO;
	}
	err = w->err;
	cp_rec_buf_free(&w->events);
	free(w);
	return err;
}

int cp_rec_writer__discard(struct cp_rec_writer *w)
{
	if (!w)
		return 0;
	if (!w->err)
		w->err = -ECANCELED;
	return cp_rec_writer__close(w);
}

/* ---- reader ---- */

/* Reads @len bytes at the current offset; the count actually read. */
static size_t read_at(struct cp_rec_reader *r, void *p, size_t len)
{
	size_t n = fread(p, 1, len, r->f);

	r->off += n;
	return n;
}

struct cp_rec_reader *cp_rec_reader__new(FILE *f, char *err, size_t err_sz)
{
	struct cp_rec_reader *r = calloc(1, sizeof(*r));
	__u8 hdr[CP_REC_FILE_HDR_LEN];
	__u32 version, c;
	size_t n;

	if (!r) {
		snprintf(err, err_sz, "out of memory");
		return NULL;
	}
	r->f = f;
	n = read_at(r, hdr, sizeof(hdr));
	if (n < CP_REC_MAGIC_LEN || memcmp(hdr, CP_REC_MAGIC, CP_REC_MAGIC_LEN)) {
		snprintf(err, err_sz, "not a cacheperf-bpf recording (no \"%s\" at byte 0)",
			 CP_REC_MAGIC);
		goto fail;
	}
	if (n < sizeof(hdr)) {
		snprintf(err, err_sz, "truncated at byte %zu: the file header needs %d bytes", n,
			 CP_REC_FILE_HDR_LEN);
		goto fail;
	}
	memcpy(&version, hdr + 8, 4);
	memcpy(&c, hdr + 12, 4);
	if (c != cp_rec_crc(hdr, 12)) {
		snprintf(err, err_sz,
			 "corrupt at byte 8: the file header's checksum does not match");
		goto fail;
	}
	if (version < CP_REC_VERSION_MIN || version > CP_REC_VERSION) {
		if (CP_REC_VERSION_MIN == CP_REC_VERSION)
			snprintf(err, err_sz,
				 "recording format version %u at byte 8; this cacheperf-bpf reads "
				 "version %d",
				 version, CP_REC_VERSION);
		else
			snprintf(err, err_sz,
				 "recording format version %u at byte 8; this cacheperf-bpf reads "
				 "versions %d to %d",
				 version, CP_REC_VERSION_MIN, CP_REC_VERSION);
		goto fail;
	}
	r->version = version;
	return r;
fail:
	free(r);
	return NULL;
}

void cp_rec_reader__free(struct cp_rec_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

/* Whether a section of @type may follow one of r->last. */
static const char *order_problem(const struct cp_rec_reader *r, __u32 type)
{
	if (!r->last && type != CP_SEC_HEADER)
		return "the first section is not the header";
	if (r->last && type == CP_SEC_HEADER)
		return "a second header";
	if (r->last == CP_SEC_END)
		return "a section after the end section";
	return NULL;
}

int cp_rec_reader__next(struct cp_rec_reader *r, struct cp_rec_section *out, char *err,
			size_t err_sz)
{
	__u64 at = r->off;
	__u32 hdr[4];
	const char *why;
	size_t n;

	n = read_at(r, hdr, sizeof(hdr));
	if (n == 0 && r->last == CP_SEC_END)
		return 0;
	if (n == 0) {
		snprintf(err, err_sz,
			 "truncated at byte %llu: the recording ends without its end section (was "
			 "the recording cut short?)",
			 (unsigned long long)at);
		return -EINVAL;
	}
	if (n < sizeof(hdr)) {
		snprintf(err, err_sz,
			 "truncated at byte %llu: a section header needs %d bytes, %zu left",
			 (unsigned long long)at, CP_REC_SEC_HDR_LEN, n);
		return -EINVAL;
	}
	if (hdr[3] != cp_rec_crc(hdr, 12)) {
		snprintf(err, err_sz,
			 "corrupt at byte %llu: the section header's checksum does not match",
			 (unsigned long long)at);
		return -EINVAL;
	}
	if (!hdr[0] || hdr[0] >= CP_SEC_NR) {
		snprintf(err, err_sz, "corrupt at byte %llu: unknown section type %u",
			 (unsigned long long)at, hdr[0]);
		return -EINVAL;
	}
	why = order_problem(r, hdr[0]);
	if (why) {
		snprintf(err, err_sz, "corrupt at byte %llu: %s (a %s section)",
			 (unsigned long long)at, why, cp_rec_section_name(hdr[0]));
		return -EINVAL;
	}
	if (hdr[1] > CP_REC_MAX_SECTION) {
		snprintf(err, err_sz, "corrupt at byte %llu: a %s section of %u bytes (at most %u)",
			 (unsigned long long)at + 4, cp_rec_section_name(hdr[0]), hdr[1],
			 CP_REC_MAX_SECTION);
		return -EINVAL;
	}
	if (hdr[1] > r->cap) {
		/* +1: room for a terminating NUL some payloads are given */
		__u8 *p = realloc(r->buf, (size_t)hdr[1] + 1);

		if (!p) {
			snprintf(err, err_sz, "out of memory for a section of %u bytes", hdr[1]);
			return -ENOMEM;
		}
		r->buf = p;
		r->cap = hdr[1];
	}
	n = read_at(r, r->buf, hdr[1]);
	if (n < hdr[1]) {
		snprintf(err, err_sz,
			 "truncated at byte %llu: the %s section at byte %llu needs %u bytes, %zu "
			 "left",
			 (unsigned long long)r->off, cp_rec_section_name(hdr[0]),
			 (unsigned long long)at, hdr[1], n);
		return -EINVAL;
	}
	if (hdr[2] != cp_rec_crc(r->buf, hdr[1])) {
		snprintf(err, err_sz,
			 "corrupt at byte %llu: the checksum of the %s section (%u bytes) does not "
			 "match",
			 (unsigned long long)at + CP_REC_SEC_HDR_LEN, cp_rec_section_name(hdr[0]),
			 hdr[1]);
		return -EINVAL;
	}
	r->last = hdr[0];
	out->type = hdr[0];
	out->offset = at;
	out->payload = (struct cp_rec_cursor){
		.p = r->buf,
		.len = hdr[1],
		.file_off = at + CP_REC_SEC_HDR_LEN,
		.version = r->version,
	};
	return 1;
}
