// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Recording payloads: bounded encoders and decoders (docs/recording.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/source.h"
#include "record/rec_format.h"

#define CP_REC_NR_BPF_STATS    (sizeof(struct cp_stats) / sizeof(__u64))
#define CP_REC_NR_BPF_STATS_V4 21 /* before kernel_ip */
#define CP_REC_NR_BPF_STATS_V5 22 /* before the stack drops */
_Static_assert(sizeof(struct cp_stats) == 25 * sizeof(__u64),
	       "struct cp_stats changed: bump CP_REC_VERSION and docs/recording.md");
/* a counter entry on file: struct cp_ip_key, then struct cp_ip_counts */
#define CP_REC_COUNTER_BYTES (sizeof(struct cp_ip_key) + sizeof(struct cp_ip_counts))
_Static_assert(
	CP_REC_COUNTER_BYTES == 16 + (7 + CP_LVL_NR) * sizeof(__u64),
	"struct cp_ip_key or cp_ip_counts changed: bump CP_REC_VERSION and docs/recording.md");
_Static_assert(CP_SOFT_STATS_NR == 7,
	       "struct cp_soft_stats changed: bump CP_REC_VERSION and docs/recording.md");

static const char *const section_names[CP_SEC_NR] = {
	[CP_SEC_HEADER] = "header",	[CP_SEC_EVENTS] = "events",
	[CP_SEC_COUNTERS] = "counters", [CP_SEC_MAPS] = "maps",
	[CP_SEC_BUILD_ID] = "build-id", [CP_SEC_STACKS] = "stacks",
	[CP_SEC_END] = "end",		[CP_SEC_SAMPLE_STACKS] = "sample-stacks",
};
/* a sample-stacks entry on file: u32 tgid, u32 nr, the counts, nr frames */
#define CP_REC_STACK_HEAD_BYTES (8 + sizeof(struct cp_stack_counts))
_Static_assert(sizeof(struct cp_stack_counts) == 5 * sizeof(__u64),
	       "struct cp_stack_counts changed: bump CP_REC_VERSION and docs/recording.md");

const char *cp_rec_section_name(__u32 type)
{
	return type < CP_SEC_NR && section_names[type] ? section_names[type] : "?";
}

/* ---- buffers and cursors ---- */

void cp_rec_buf_free(struct cp_rec_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void cp_rec_put(struct cp_rec_buf *b, const void *data, size_t len)
{
	if (b->oom)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		__u8 *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

void cp_rec_put_u32(struct cp_rec_buf *b, __u32 v)
{
	cp_rec_put(b, &v, sizeof(v)); /* x86-64: little-endian already */
}

void cp_rec_put_u64(struct cp_rec_buf *b, __u64 v)
{
	cp_rec_put(b, &v, sizeof(v));
}

int cp_rec_get(struct cp_rec_cursor *c, void *out, size_t len)
{
	if (len > c->len - c->pos)
		return -EINVAL;
	memcpy(out, c->p + c->pos, len);
	c->pos += len;
	return 0;
}

int cp_rec_get_u32(struct cp_rec_cursor *c, __u32 *v)
{
	return cp_rec_get(c, v, sizeof(*v));
}

int cp_rec_get_u64(struct cp_rec_cursor *c, __u64 *v)
{
	return cp_rec_get(c, v, sizeof(*v));
}

__u64 cp_rec_where(const struct cp_rec_cursor *c)
{
	return c->file_off + c->pos;
}

__attribute__((format(printf, 4, 5))) static int bad(const struct cp_rec_cursor *c, char *err,
						     size_t sz, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, sz, "corrupt at byte %llu: %s", (unsigned long long)cp_rec_where(c), what);
	return -EINVAL;
}

static int short_read(const struct cp_rec_cursor *c, char *err, size_t sz, const char *what)
{
	return bad(c, err, sz, "%s runs past the end of its section", what);
}

/* A u32 length, then that many bytes (at most @max - 1), into a NUL-terminated @out. */
static int get_string(struct cp_rec_cursor *c, char *out, size_t max, const char *what, char *err,
		      size_t sz)
{
	__u32 len;

	if (cp_rec_get_u32(c, &len))
		return short_read(c, err, sz, what);
	if (len >= max)
		return bad(c, err, sz, "%s of %u bytes (at most %zu)", what, len, max - 1);
	if (cp_rec_get(c, out, len))
		return short_read(c, err, sz, what);
	out[len] = '\0';
	return 0;
}

static void put_string(struct cp_rec_buf *b, const char *s, size_t max)
{
	size_t len = strnlen(s, max - 1);

	cp_rec_put_u32(b, (__u32)len);
	cp_rec_put(b, s, len);
}

/* A u32 count that must equal what this version knows, then that many u64. */
static int get_u64s(struct cp_rec_cursor *c, __u64 *out, __u32 want, const char *what, char *err,
		    size_t sz)
{
	__u32 n;

	if (cp_rec_get_u32(c, &n))
		return short_read(c, err, sz, what);
	if (n != want)
		return bad(c, err, sz, "%u %s where this version knows %u", n, what, want);
	if (cp_rec_get(c, out, (size_t)n * sizeof(__u64)))
		return short_read(c, err, sz, what);
	return 0;
}

static void put_u64s(struct cp_rec_buf *b, const void *v, __u32 n)
{
	cp_rec_put_u32(b, n);
	cp_rec_put(b, v, (size_t)n * sizeof(__u64));
}

static int at_end(const struct cp_rec_cursor *c, char *err, size_t sz, const char *what)
{
	if (c->pos != c->len)
		return bad(c, err, sz, "%zu bytes after the %s", c->len - c->pos, what);
	return 0;
}

/* ---- header and end ---- */

void cp_rec_encode_info(struct cp_rec_buf *b, const struct cp_run_info *in)
{
	cp_rec_put_u32(b, (__u32)in->source);
	cp_rec_put_u32(b, in->launched);
	cp_rec_put_u64(b, in->start_ns);
	cp_rec_put_u64(b, in->load_period);
	cp_rec_put_u64(b, in->store_period);
	cp_rec_put_u32(b, in->ldlat_cycles);
	cp_rec_put_u32(b, in->window);
	cp_rec_put_u32(b, in->window_ratio_ppm);
	cp_rec_put_u32(b, CP_CACHE_NR_SLOTS);
	for (int i = 0; i < CP_CACHE_NR_SLOTS; i++) {
		const struct cp_cache_level *l = &in->cache[i];

		cp_rec_put_u32(b, (__u32)l->level);
		cp_rec_put_u32(b, (__u32)l->type);
		cp_rec_put_u64(b, l->size_bytes);
		cp_rec_put_u32(b, l->ways);
		cp_rec_put_u32(b, l->sets);
		cp_rec_put_u32(b, l->line_bytes);
		cp_rec_put_u32(b, l->valid);
	}
	cp_rec_put_u32(b, in->nr_targets);
	for (__u32 i = 0; i < in->nr_targets && i < CP_MAX_TGIDS; i++) {
		cp_rec_put_u32(b, (__u32)in->targets[i].pid);
		cp_rec_put(b, in->targets[i].comm, CP_COMM_LEN);
	}
	put_string(b, in->source_reason, sizeof(in->source_reason));
}

int cp_rec_decode_info(struct cp_rec_cursor *c, struct cp_run_info *out, char *err, size_t sz)
{
	__u32 v[4], slots;

	memset(out, 0, sizeof(*out));
	if (cp_rec_get(c, v, 2 * sizeof(__u32)) || cp_rec_get_u64(c, &out->start_ns) ||
	    cp_rec_get_u64(c, &out->load_period) || cp_rec_get_u64(c, &out->store_period) ||
	    cp_rec_get_u32(c, &out->ldlat_cycles) || cp_rec_get_u32(c, &out->window) ||
	    cp_rec_get_u32(c, &out->window_ratio_ppm) || cp_rec_get_u32(c, &slots))
		return short_read(c, err, sz, "the header");
	if (!cp_source_of((enum cp_source_kind)v[0])->recordable)
		return bad(c, err, sz, "sample source %u (%s) is no run's source", v[0],
			   cp_source_name((enum cp_source_kind)v[0]));
	out->source = (enum cp_source_kind)v[0];
	out->launched = v[1] != 0;
	if (slots != CP_CACHE_NR_SLOTS)
		return bad(c, err, sz, "%u cache levels where this version knows %d", slots,
			   CP_CACHE_NR_SLOTS);
	for (int i = 0; i < CP_CACHE_NR_SLOTS; i++) {
		struct cp_cache_level *l = &out->cache[i];

		if (cp_rec_get(c, v, 2 * sizeof(__u32)) || cp_rec_get_u64(c, &l->size_bytes) ||
		    cp_rec_get_u32(c, &l->ways) || cp_rec_get_u32(c, &l->sets) ||
		    cp_rec_get_u32(c, &l->line_bytes) || cp_rec_get_u32(c, &v[2]))
			return short_read(c, err, sz, "the cache geometry");
		l->level = (int)v[0];
		l->type = v[1] <= CP_CACHE_TYPE_UNIFIED ? (enum cp_cache_type)v[1]
							: CP_CACHE_TYPE_UNKNOWN;
		l->index = -1;
		/* the miss store re-checks what it uses (cp_cache_level_check) */
		l->valid = v[2] != 0;
	}
	if (cp_rec_get_u32(c, &out->nr_targets))
		return short_read(c, err, sz, "the targets");
	if (out->nr_targets > CP_MAX_TGIDS)
		return bad(c, err, sz, "%u targets (at most %d)", out->nr_targets, CP_MAX_TGIDS);
	for (__u32 i = 0; i < out->nr_targets; i++) {
		if (cp_rec_get_u32(c, &v[0]) || cp_rec_get(c, out->targets[i].comm, CP_COMM_LEN))
			return short_read(c, err, sz, "the targets");
		out->targets[i].pid = (pid_t)v[0];
		out->targets[i].comm[CP_COMM_LEN - 1] = '\0';
	}
	if (get_string(c, out->source_reason, sizeof(out->source_reason), "the source text", err,
		       sz))
		return -EINVAL;
	return at_end(c, err, sz, "header");
}

void cp_rec_encode_end(struct cp_rec_buf *b, const struct cp_run_end *e)
{
	const struct cp_alloc_probes_stats *a = &e->alloc;
	__u64 more[] = {a->calls,	a->targets,  a->links,	    a->placed,	  a->entry_emulated,
			a->single_step, a->backoffs, a->backed_off, a->backoff_ns};

	cp_rec_put_u64(b, e->end_ns);
	put_string(b, e->end_reason, sizeof(e->end_reason));
	put_u64s(b, &e->bpf, CP_REC_NR_BPF_STATS);
	cp_rec_put_u64(b, e->malformed);
	cp_rec_put_u64(b, e->unknown);
	cp_rec_put_u64(b, e->period_changes);
	cp_rec_put_u64(b, e->throttles);
	cp_rec_put_u64(b, e->guard_backoffs);
	cp_rec_put_u32(b, e->have_alloc);
	put_u64s(b, &a->bpf, CP_ALLOC_STATS_NR);
	put_u64s(b, more, sizeof(more) / sizeof(more[0]));
	cp_rec_put_u32(b, a->raw_syscalls);
	put_u64s(b, &e->soft, CP_SOFT_STATS_NR);
}

int cp_rec_decode_end(struct cp_rec_cursor *c, struct cp_run_end *out, char *err, size_t sz)
{
	struct cp_alloc_probes_stats *a = &out->alloc;
	size_t nr_bpf = c->version == 4	  ? CP_REC_NR_BPF_STATS_V4
			: c->version == 5 ? CP_REC_NR_BPF_STATS_V5
					  : CP_REC_NR_BPF_STATS;
	__u64 more[9];
	__u32 flag;

	memset(out, 0, sizeof(*out));
	if (cp_rec_get_u64(c, &out->end_ns))
		return short_read(c, err, sz, "the end time");
	if (get_string(c, out->end_reason, sizeof(out->end_reason), "the end reason", err, sz) ||
	    get_u64s(c, (__u64 *)&out->bpf, nr_bpf, "BPF counters", err, sz))
		return -EINVAL;
	if (cp_rec_get_u64(c, &out->malformed) || cp_rec_get_u64(c, &out->unknown) ||
	    cp_rec_get_u64(c, &out->period_changes) ||
	    (c->version != 4 && cp_rec_get_u64(c, &out->throttles)) ||
	    cp_rec_get_u64(c, &out->guard_backoffs) || cp_rec_get_u32(c, &flag))
		return short_read(c, err, sz, "the drop counters");
	out->have_alloc = flag != 0;
	if (get_u64s(c, (__u64 *)&a->bpf, CP_ALLOC_STATS_NR, "allocation counters", err, sz) ||
	    get_u64s(c, more, 9, "allocation probe figures", err, sz))
		return -EINVAL;
	a->calls = more[0];
	a->targets = more[1];
	a->links = more[2];
	a->placed = more[3];
	a->entry_emulated = more[4];
	a->single_step = more[5];
	a->backoffs = more[6];
	a->backed_off = more[7];
	a->backoff_ns = more[8];
	if (cp_rec_get_u32(c, &flag))
		return short_read(c, err, sz, "the allocation probe figures");
	a->raw_syscalls = flag != 0;
	if (get_u64s(c, (__u64 *)&out->soft, CP_SOFT_STATS_NR, "soft source figures", err, sz))
		return -EINVAL;
	return at_end(c, err, sz, "end section");
}

/* ---- counters, maps, stacks, build-ids ---- */

void cp_rec_encode_counters(struct cp_rec_buf *b, const struct cp_insn *v, size_t n)
{
	cp_rec_put_u32(b, CP_LVL_NR);
	cp_rec_put_u32(b, (__u32)n);
	for (size_t i = 0; i < n; i++) {
		cp_rec_put(b, &v[i].key, sizeof(v[i].key));
		cp_rec_put(b, &v[i].counts, sizeof(v[i].counts));
	}
}

void cp_rec_counter_get(const void *raw, size_t i, struct cp_insn *out)
{
	const unsigned char *e = (const unsigned char *)raw + i * CP_REC_COUNTER_BYTES;

	memset(out, 0, sizeof(*out));
	memcpy(&out->key, e, sizeof(out->key));
	memcpy(&out->counts, e + sizeof(out->key), sizeof(out->counts));
}

int cp_rec_decode_counters(struct cp_rec_cursor *c, const void **v, size_t *n, char *err, size_t sz)
{
	__u32 levels, count;

	if (cp_rec_get_u32(c, &levels) || cp_rec_get_u32(c, &count))
		return short_read(c, err, sz, "the counter count");
	if (levels != CP_LVL_NR)
		return bad(c, err, sz, "counters of %u cache levels where this version knows %d",
			   levels, CP_LVL_NR);
	if ((__u64)count * CP_REC_COUNTER_BYTES != c->len - c->pos)
		return bad(c, err, sz, "%u counter entries do not fill the %zu bytes left", count,
			   c->len - c->pos);
	*v = c->p + c->pos;
	*n = count;
	c->pos = c->len;
	return 0;
}

void cp_rec_encode_sample_stacks(struct cp_rec_buf *b, const struct cp_stack_sample *v, size_t n)
{
	cp_rec_put_u32(b, (__u32)n);
	for (size_t i = 0; i < n; i++) {
		cp_rec_put_u32(b, v[i].tgid);
		cp_rec_put_u32(b, v[i].nr);
		cp_rec_put(b, &v[i].c, sizeof(v[i].c));
		cp_rec_put(b, v[i].pcs, (size_t)v[i].nr * sizeof(v[i].pcs[0]));
	}
}

int cp_rec_decode_sample_stacks(struct cp_rec_cursor *c, __u32 *count, char *err, size_t sz)
{
	if (cp_rec_get_u32(c, count))
		return short_read(c, err, sz, "the stack count");
	/* each entry has a head and at least one frame */
	if ((__u64)*count * (CP_REC_STACK_HEAD_BYTES + 8) > c->len - c->pos)
		return bad(c, err, sz, "%u stack entries cannot fit the %zu bytes left", *count,
			   c->len - c->pos);
	return 0;
}

int cp_rec_next_sample_stack(struct cp_rec_cursor *c, struct cp_stack_sample *out, char *err,
			     size_t sz)
{
	memset(out, 0, sizeof(*out));
	if (cp_rec_get_u32(c, &out->tgid) || cp_rec_get_u32(c, &out->nr) ||
	    cp_rec_get(c, &out->c, sizeof(out->c)))
		return short_read(c, err, sz, "a stack entry");
	if (out->nr < 1 || out->nr > CP_STACK_DEPTH)
		return bad(c, err, sz, "a stack of %u frames (1 to %d)", out->nr, CP_STACK_DEPTH);
	if (cp_rec_get(c, out->pcs, (size_t)out->nr * sizeof(out->pcs[0])))
		return short_read(c, err, sz, "a stack's frames");
	return 0;
}

int cp_rec_sample_stacks_end(const struct cp_rec_cursor *c, char *err, size_t sz)
{
	return at_end(c, err, sz, "sample-stacks section");
}

size_t cp_rec_maps_fit(const char *text, size_t len)
{
	const char *nl;

	if (len <= CP_REC_MAPS_TEXT_MAX)
		return len;
	nl = memrchr(text, '\n', CP_REC_MAPS_TEXT_MAX);
	return nl ? (size_t)(nl - text) + 1 : 0;
}

void cp_rec_encode_maps(struct cp_rec_buf *b, const struct cp_rec_maps *m)
{
	cp_rec_put_u32(b, (__u32)m->pid);
	cp_rec_put_u32(b, m->who);
	cp_rec_put_u32(b, m->error);
	cp_rec_put_u32(b, (__u32)m->len);
	cp_rec_put(b, m->text, m->len);
}

int cp_rec_decode_maps(struct cp_rec_cursor *c, struct cp_rec_maps *m, char *err, size_t sz)
{
	__u32 p, l;

	if (cp_rec_get_u32(c, &p) || cp_rec_get_u32(c, &m->who) || cp_rec_get_u32(c, &m->error) ||
	    cp_rec_get_u32(c, &l))
		return short_read(c, err, sz, "the maps text length");
	if (!p || p > 4194304)
		return bad(c, err, sz, "process ID %u", p);
	if (m->who > CP_REC_MAPS_SYMBOLS)
		return bad(c, err, sz, "maps read by an unknown reader %u", m->who);
	if (l != c->len - c->pos)
		return bad(c, err, sz, "a maps text of %u bytes in %zu", l, c->len - c->pos);
	if (!l != !!m->error)
		return bad(c, err, sz, "a maps read with %s text and error %u", l ? "a" : "no",
			   m->error);
	m->pid = (pid_t)p;
	m->text = (const char *)(c->p + c->pos);
	m->len = l;
	c->pos = c->len;
	return 0;
}

void cp_rec_encode_stacks(struct cp_rec_buf *b, pid_t pid, const struct cp_range *r, size_t n)
{
	cp_rec_put_u32(b, (__u32)pid);
	cp_rec_put_u32(b, (__u32)n);
	for (size_t i = 0; i < n; i++) {
		cp_rec_put_u64(b, r[i].start);
		cp_rec_put_u64(b, r[i].end);
	}
}

int cp_rec_decode_stacks(struct cp_rec_cursor *c, pid_t *pid, struct cp_range *r, size_t *n,
			 char *err, size_t sz)
{
	__u32 p, count;

	if (cp_rec_get_u32(c, &p) || cp_rec_get_u32(c, &count))
		return short_read(c, err, sz, "the stack count");
	if (!p || p > 4194304)
		return bad(c, err, sz, "process ID %u", p);
	if (count > CP_MAX_THREAD_STACKS)
		return bad(c, err, sz, "%u thread stacks (at most %u)", count,
			   CP_MAX_THREAD_STACKS);
	for (__u32 i = 0; i < count; i++) {
		if (cp_rec_get_u64(c, &r[i].start) || cp_rec_get_u64(c, &r[i].end))
			return short_read(c, err, sz, "a thread stack");
		if (r[i].end <= r[i].start)
			return bad(c, err, sz, "an empty thread stack");
	}
	*pid = (pid_t)p;
	*n = count;
	return at_end(c, err, sz, "thread stacks");
}

void cp_rec_encode_build_id(struct cp_rec_buf *b, const struct cp_rec_build_id *id)
{
	size_t len = strnlen(id->path, sizeof(id->path) - 1);

	cp_rec_put_u64(b, id->inode);
	cp_rec_put_u32(b, id->id_len);
	cp_rec_put_u32(b, (__u32)len);
	cp_rec_put(b, id->id, id->id_len);
	cp_rec_put(b, id->path, len);
}

int cp_rec_decode_build_id(struct cp_rec_cursor *c, struct cp_rec_build_id *out, char *err,
			   size_t sz)
{
	__u32 path_len;

	memset(out, 0, sizeof(*out));
	if (cp_rec_get_u64(c, &out->inode) || cp_rec_get_u32(c, &out->id_len) ||
	    cp_rec_get_u32(c, &path_len))
		return short_read(c, err, sz, "the build-id");
	if (out->id_len > CP_REC_MAX_BUILD_ID)
		return bad(c, err, sz, "a build-id of %u bytes (at most %d)", out->id_len,
			   CP_REC_MAX_BUILD_ID);
	if (!path_len || path_len >= CP_REC_MAX_PATH)
		return bad(c, err, sz, "a path of %u bytes", path_len);
	if (cp_rec_get(c, out->id, out->id_len) || cp_rec_get(c, out->path, path_len))
		return short_read(c, err, sz, "the build-id");
	if (memchr(out->path, '\0', path_len))
		return bad(c, err, sz, "a path with a NUL byte");
	return at_end(c, err, sz, "build-id");
}

int cp_rec_next_event(struct cp_rec_cursor *c, const void **data, size_t *size, char *err,
		      size_t sz)
{
	__u32 hdr[2];

	if (c->pos == c->len)
		return 0;
	if (cp_rec_get(c, hdr, sizeof(hdr)))
		return short_read(c, err, sz, "a record header");
	if (!hdr[0] || hdr[0] > CP_REC_MAX_RECORD) {
		c->pos -= sizeof(hdr);
		return bad(c, err, sz, "a record of %u bytes (1 to %d)", hdr[0], CP_REC_MAX_RECORD);
	}
	if (CP_REC_EVENT_LEN(hdr[0]) - 8 > c->len - c->pos)
		return short_read(c, err, sz, "a record");
	*data = c->p + c->pos;
	*size = hdr[0];
	c->pos += CP_REC_EVENT_LEN(hdr[0]) - 8;
	return 1;
}
