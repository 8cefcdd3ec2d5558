// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The live side of recordings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "symbols/build_id.h"
#include "symbols/symbolizer.h"
#include "record/rec_io.h"
#include "record/recorder.h"

#define CP_REC_SEEN_SLOTS 8192 /* pids remembered; beyond, written again */
/*
 * What writing a changed maps text down again costs its owner's bank
 * (objects/proc_maps.h), per byte: the bank's refill (5 % of the time)
 * pays for 0.78 MB/s of them, a full bank for 15.6 MB at once.
 */
#define CP_REC_MAPS_NS_PER_BYTE 64
/* files whose build-id was written, at most (8 MiB of table) */
#define CP_REC_MAX_FILES (1u << 19)

/* What was last written down for one process. */
struct seen_proc {
	pid_t pid;	   /* 0: free */
	bool have_maps[2]; /* by enum cp_rec_maps_reader */
	__u32 maps_crc[2]; /* of the text, or of the error */
	__u64 maps_len[2];
	__u32 stacks_crc;
	__u32 nr_stacks;
	bool have_stacks;
	__u32 build_ids; /* written for its files */
};

struct cp_recorder {
	struct cp_rec_writer *w;
	char *path;
	struct cp_proc_source src;
	struct cp_rec_buf buf; /* one section's payload being built */
	bool lost;	       /* a section could not be built (out of memory) */
	struct seen_proc procs[CP_REC_SEEN_SLOTS];
	__u64 *files; /* build-ids written: hash of (path, inode); 0 free */
	size_t files_cap, nr_files;
	char *sym_text; /* the symbolizer's last maps text */
	__u64 sym_gen;
};

static __u64 mix(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* @pid's entry, a free one for it, or NULL when the table is full. */
static struct seen_proc *seen_proc(struct cp_recorder *r, pid_t pid)
{
	for (size_t i = 0, h = mix((__u64)pid); i < CP_REC_SEEN_SLOTS; i++) {
		struct seen_proc *s = &r->procs[(h + i) % CP_REC_SEEN_SLOTS];

		if (s->pid == pid || !s->pid) {
			s->pid = pid;
			return s;
		}
	}
	return NULL;
}

/* @key's slot in @t (@cap slots, a power of two): its own, or the free one it would take. */
static __u64 *file_slot(__u64 *t, size_t cap, __u64 key)
{
	for (size_t i = key & (cap - 1);; i = (i + 1) & (cap - 1))
		if (t[i] == key || !t[i])
			return &t[i];
}

/* The table of files doubled (half full at most: each look is a few slots); false: no room. */
static bool files_grow(struct cp_recorder *r)
{
	size_t cap = r->files_cap ? 2 * r->files_cap : 1024;
	__u64 *t;

	if (cap > 2 * (size_t)CP_REC_MAX_FILES || !(t = calloc(cap, sizeof(*t))))
		return false;
	for (size_t i = 0; i < r->files_cap; i++)
		if (r->files[i])
			*file_slot(t, cap, r->files[i]) = r->files[i];
	free(r->files);
	r->files = t;
	r->files_cap = cap;
	return true;
}

/*
 * True the first time (@path, @inode) is asked about, for the run's first
 * CP_REC_MAX_FILES files; past them (or out of memory) false: their
 * build-ids are not written. A fixed table answered "first" forever once
 * full (each file copied again at every maps text written), then refused
 * new files, whose replacement the replay took unchecked.
 */
static bool first_sight(struct cp_recorder *r, const char *path, __u64 inode)
{
	__u64 key = mix(crc32(0L, (const Bytef *)path, (uInt)strlen(path)) ^ mix(inode)) | 1;
	__u64 *slot;

	if (r->nr_files + 1 > r->files_cap / 2 && !files_grow(r))
		return false;
	slot = file_slot(r->files, r->files_cap, key);
	if (*slot == key)
		return false;
	*slot = key;
	r->nr_files++;
	return true;
}

static void section(struct cp_recorder *r, __u32 type)
{
	if (r->buf.oom)
		r->lost = true;
	else
		cp_rec_writer__section(r->w, type, r->buf.p, r->buf.len);
	r->buf.len = 0;
	r->buf.oom = false;
}

/*
 * The build-ids of the files @pid maps with code (its ELF files: data files
 * are never symbolized), each file's once, CP_SYM_MAX_MODULES files a
 * process at most (a module past them is not opened). Each is a copy of
 * the file: a tenant's 9,000 mapped one-page files cost a 10 s run 8 s.
 */
static void write_build_ids(struct cp_recorder *r, const char *proc_root, pid_t pid,
			    const char *text, size_t len)
{
	struct seen_proc *s = seen_proc(r, pid);
	__u32 written = s ? s->build_ids : 0;
	struct cp_rec_build_id id;

	/* line by line: a tenant's 16 MiB text parsed whole was as much again */
	for (size_t i = 0, end; i < len && written < CP_SYM_MAX_MODULES; i = end + 1) {
		const char *nl = memchr(text + i, '\n', len - i), *path;
		struct cp_map map;
		size_t path_len;
		int n;

		end = nl ? (size_t)(nl - text) : len;
		if (cp_maps_parse_line(text + i, end - i, &map, &path, &path_len) ||
		    map.kind != CP_MAP_FILE || !(map.prot & CP_MAP_EXEC) || !map.inode ||
		    map.deleted || path_len >= sizeof(id.path))
			continue;
		memset(&id, 0, sizeof(id));
		memcpy(id.path, path, path_len);
		if (!first_sight(r, id.path, map.inode))
			continue;
		written++;
		id.inode = map.inode;
		map.path = id.path;
		n = cp_build_id_read_mapped(proc_root, pid, &map, id.id, sizeof(id.id));
		id.id_len = n > 0 ? (__u32)n : 0;
		cp_rec_encode_build_id(&r->buf, &id);
		section(r, CP_SEC_BUILD_ID);
	}
	if (s)
		s->build_ids = written;
}

/*
 * Reads @pid's maps for @who and writes the text (or the failure) down when
 * it differs from what @who read last. Returns 0 with *@text (free() it) and
 * how it was read in *@how, or the negative errno of the read; true in
 * *@changed when it differs.
 */
static int read_maps(struct cp_recorder *r, const char *proc_root, pid_t pid, __u32 who,
		     char **text, size_t *len, struct cp_maps_how *how, bool *changed)
{
	struct cp_rec_maps m = {.pid = pid, .who = who};
	struct seen_proc *s = seen_proc(r, pid);
	int err = cp_maps_read_text(proc_root, pid, text, len, how);
	__u32 c;

	/* what a section holds, for the run as for its replay: they name the same */
	if (!err && cp_rec_maps_fit(*text, *len) < *len) {
		*len = cp_rec_maps_fit(*text, *len);
		(*text)[*len] = '\0';
		how->cut = true;
		cp_tf_count(CP_TF_MAPS_CAP);
		if (!*len) {
			free(*text);
			*text = NULL;
			err = -E2BIG;
		}
	}
	if (err) {
		*len = 0;
		m.error = (__u32)-err;
	} else {
		m.text = *text;
		m.len = *len;
	}
	c = err ? m.error : (__u32)crc32(0L, (const Bytef *)*text, (uInt)*len);
	*changed = !s || !s->have_maps[who] || s->maps_crc[who] != c || s->maps_len[who] != *len;
	if (!*changed)
		return err;
	/*
	 * A changed text of a process written before costs its owner's bank:
	 * a tenant's long maps that change at every read grew a recording by
	 * 4 MB/s. Past the bank it is written as a read that failed (EAGAIN,
	 * counted): the replay has no maps of that process there, rather than
	 * an older text, and names nothing it would name from them.
	 */
	if (!err && s && s->have_maps[who] && !cp_maps_owner_spend(how->owner, 0)) {
		cp_tf_count(CP_TF_MAPS_UNRECORDED);
		m = (struct cp_rec_maps){.pid = pid, .who = who, .error = EAGAIN};
		c = EAGAIN;
	} else if (!err && s && s->have_maps[who]) {
		cp_maps_owner_spend(how->owner, (__u64)*len * CP_REC_MAPS_NS_PER_BYTE);
	}
	if (!m.error)
		write_build_ids(r, proc_root, pid, *text, *len);
	cp_rec_encode_maps(&r->buf, &m);
	section(r, CP_SEC_MAPS);
	if (s) {
		s->have_maps[who] = true;
		s->maps_crc[who] = c;
		s->maps_len[who] = *len;
	}
	return err;
}

static int rec_maps(void *ctx, const char *proc_root, pid_t pid, struct cp_maps **out)
{
	struct cp_maps_how how;
	char *text = NULL;
	size_t len;
	bool changed;
	int err;

	*out = NULL;
	err = read_maps(ctx, proc_root, pid, CP_REC_MAPS_OBJECTS, &text, &len, &how, &changed);
	if (!err)
		err = cp_maps__parse(text, len, out);
	if (!err)
		(*out)->how = how;
	free(text);
	return err;
}

int cp_recorder__maps_text(void *ctx, pid_t pid, const char **text, size_t *len, __u64 *gen,
			   struct cp_maps_how *how)
{
	struct cp_recorder *r = ctx;
	bool changed;
	char *t = NULL;
	int err;

	err = read_maps(r, NULL, pid, CP_REC_MAPS_SYMBOLS, &t, len, how, &changed);
	if (err)
		return err;
	free(r->sym_text);
	r->sym_text = t;
	if (changed)
		r->sym_gen++;
	*text = t;
	*gen = r->sym_gen;
	return 0;
}

static int rec_thread_stacks(void *ctx, const char *proc_root, pid_t pid, const struct cp_maps *m,
			     struct cp_range *out, size_t max)
{
	struct cp_recorder *r = ctx;
	int n = cp_maps_thread_stacks(proc_root, pid, m, out, max);
	size_t nr = n > 0 ? (size_t)n : 0;
	struct seen_proc *s = seen_proc(r, pid);
	__u32 c = (__u32)crc32(0L, (const Bytef *)out, (uInt)(nr * sizeof(*out)));

	if (!s || !s->have_stacks || s->stacks_crc != c || s->nr_stacks != nr) {
		cp_rec_encode_stacks(&r->buf, pid, out, nr);
		section(r, CP_SEC_STACKS);
		if (s) {
			s->have_stacks = true;
			s->stacks_crc = c;
			s->nr_stacks = (__u32)nr;
		}
	}
	return n;
}

struct cp_recorder *cp_recorder__open(const char *path, char *err, size_t err_sz)
{
	struct cp_recorder *r = calloc(1, sizeof(*r));

	if (!r || !(r->path = strdup(path))) {
		free(r);
		snprintf(err, err_sz, "out of memory");
		return NULL;
	}
	r->w = cp_rec_writer__open(path, err, err_sz);
	if (!r->w) {
		free(r->path);
		free(r);
		return NULL;
	}
	r->src = (struct cp_proc_source){
		.maps = rec_maps,
		.thread_stacks = rec_thread_stacks,
		.ctx = r,
	};
	return r;
}

const struct cp_proc_source *cp_recorder__proc_source(struct cp_recorder *r)
{
	return &r->src;
}

void cp_recorder__info(struct cp_recorder *r, const struct cp_run_info *in)
{
	cp_rec_encode_info(&r->buf, in);
	section(r, CP_SEC_HEADER);
}

void cp_recorder__event(struct cp_recorder *r, const void *data, size_t size)
{
	cp_rec_writer__event(r->w, data, size);
}

void cp_recorder__counters(struct cp_recorder *r, const struct cp_insn *v, size_t n)
{
	if (!n)
		return;
	cp_rec_encode_counters(&r->buf, v, n);
	section(r, CP_SEC_COUNTERS);
}

void cp_recorder__stacks(struct cp_recorder *r, const struct cp_stack_sample *v, size_t n)
{
	if (!n)
		return;
	cp_rec_encode_sample_stacks(&r->buf, v, n);
	section(r, CP_SEC_SAMPLE_STACKS);
}

int cp_recorder__close(struct cp_recorder *r, const struct cp_run_end *end, char *err,
		       size_t err_sz)
{
	char why[512] = "";
	int ret;

	if (!r)
		return 0;
	if (end) {
		cp_rec_encode_end(&r->buf, end);
		section(r, CP_SEC_END);
	}
	ret = end ? cp_rec_writer__finish(r->w, why, sizeof(why)) : cp_rec_writer__discard(r->w);
	if (!ret && r->lost)
		ret = -ENOMEM;
	if (ret && why[0])
		snprintf(err, err_sz, "writing the recording failed: %s", why);
	else if (ret)
		snprintf(err, err_sz, "writing the recording %s failed: %s", r->path,
			 strerror(-ret));
	cp_rec_buf_free(&r->buf);
	free(r->files);
	free(r->sym_text);
	free(r->path);
	free(r);
	return ret;
}
