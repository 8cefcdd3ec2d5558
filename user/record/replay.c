// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A recording through the profile's handlers, offline. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/build_id.h"
#include "record/rec_io.h"
#include "record/replay.h"
#include "util/path.h"
#include "util/printable.h"

/* What the run read from /proc for one process, last as of the replay's position. */
struct replay_proc {
	pid_t pid;
	char *text; /* maps as the object table read them; NULL: unreadable */
	size_t len;
	char *sym_text; /* as the symbolizer read them, less lines of bad files */
	size_t sym_len;
	__u64 gen;
	/* the symbolizer's last text read, parsed, for explain(): a failed read
	 * later (the process gone) does not unmap what was mapped */
	struct cp_maps *maps;
	struct cp_range *stacks;
	size_t nr_stacks;
	__u64 exited; /* the order of its exit among the replay's (0: alive) */
};

#define CP_REPLAY_AHEAD 16 /* records hinted before they are handled */
#define CP_REPLAY_STEP	(CP_REPLAY_AHEAD / CP_PROFILE_HINT_STAGES) /* ... between stages */

struct bad_file {
	char *path;
	char why[160];
};

struct cp_replay {
	struct cp_profile *p;
	FILE *warn;
	const struct cp_path_map *path_map; /* --path-map; NULL: files where named */
	struct replay_proc *procs;
	size_t nr_procs;
	__u64 exits;   /* exit records read */
	__u64 skipped; /* maps texts not kept: past the caps, none exited to make room */
	__u64 text_bytes;
	__u64 gen;
	struct bad_file *bad;
	size_t nr_bad;
	struct cp_range *stack_buf; /* CP_MAX_THREAD_STACKS, for decoding */
	struct cp_proc_source src;
	struct cp_replay_stats st;
};

static struct replay_proc *find_proc(const struct cp_replay *r, pid_t pid)
{
	for (size_t i = 0; i < r->nr_procs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static void proc_clear_text(struct cp_replay *r, struct replay_proc *p, bool symbols);

/* @p's parsed maps now @maps (NULL: none), its heap counted with the texts'. */
static void set_maps(struct cp_replay *r, struct replay_proc *p, struct cp_maps *maps)
{
	r->text_bytes -= p->maps ? p->maps->bytes : 0;
	cp_maps__free(p->maps);
	p->maps = maps;
	r->text_bytes += maps ? maps->bytes : 0;
}

/* What @p holds let go: its slot is free for another process. */
static void proc_clear(struct cp_replay *r, struct replay_proc *p)
{
	proc_clear_text(r, p, false);
	proc_clear_text(r, p, true);
	set_maps(r, p, NULL);
	free(p->stacks);
	memset(p, 0, sizeof(*p));
}

/*
 * A free slot (pid 0) when @free, else the one of the process that exited
 * first, not @keep; NULL: none.
 */
static struct replay_proc *slot_to_take(struct cp_replay *r, bool free,
					const struct replay_proc *keep)
{
	struct replay_proc *first = NULL;

	for (size_t i = 0; i < r->nr_procs; i++) {
		struct replay_proc *p = &r->procs[i];

		if (free && !p->pid)
			return p;
		if (p != keep && p->pid && p->exited && (!first || p->exited < first->exited))
			first = p;
	}
	return first;
}

/*
 * @pid's slot, a new one when it has none: past CP_REPLAY_MAX_PROCS a freed
 * one or the one of the process that exited first (a busy host's recording
 * names more processes than that: every short one of a build, each with
 * its maps); NULL when all are live processes'.
 */
static struct replay_proc *get_proc(struct cp_replay *r, pid_t pid)
{
	struct replay_proc *p = find_proc(r, pid);

	if (p)
		return p;
	if (!r->procs) {
		r->procs = calloc(CP_REPLAY_MAX_PROCS, sizeof(*r->procs));
		if (!r->procs)
			return NULL;
	}
	if (r->nr_procs < CP_REPLAY_MAX_PROCS)
		p = &r->procs[r->nr_procs++];
	else if ((p = slot_to_take(r, true, NULL)))
		proc_clear(r, p);
	if (p)
		p->pid = pid;
	return p;
}

/* Room for @len more bytes of text but @keep's: exited processes' slots freed, first exited first. */
static bool text_room(struct cp_replay *r, size_t len, const struct replay_proc *keep)
{
	struct replay_proc *p;

	while (r->text_bytes + len > CP_REPLAY_MAX_TEXT && (p = slot_to_take(r, false, keep)))
		proc_clear(r, p);
	return r->text_bytes + len <= CP_REPLAY_MAX_TEXT;
}

/* A process exited (hooks.proc): its slot goes first when room is needed. */
static void on_proc(void *ctx, const struct cp_proc_event *pe)
{
	struct cp_replay *r = ctx;
	struct replay_proc *p = pe->kind == CP_PROC_EXIT ? find_proc(r, (pid_t)pe->tgid) : NULL;

	if (p)
		p->exited = ++r->exits;
	else if (pe->kind == CP_PROC_EXEC && (p = find_proc(r, (pid_t)pe->tgid)))
		p->exited = 0; /* the pid is a live process's again */
}

static const struct bad_file *bad_file(const struct cp_replay *r, const char *path)
{
	for (size_t i = 0; i < r->nr_bad; i++)
		if (!strcmp(r->bad[i].path, path))
			return &r->bad[i];
	return NULL;
}

/* ---- the proc source and the symbolizer's maps ---- */

static int src_maps(void *ctx, const char *proc_root, pid_t pid, struct cp_maps **out)
{
	struct replay_proc *p = find_proc(ctx, pid);

	(void)proc_root;
	*out = NULL;
	if (!p || !p->text)
		return -ESRCH;
	return cp_maps__parse(p->text, p->len, out);
}

static int src_thread_stacks(void *ctx, const char *proc_root, pid_t pid, const struct cp_maps *m,
			     struct cp_range *out, size_t max)
{
	struct replay_proc *p = find_proc(ctx, pid);
	size_t n;

	(void)proc_root;
	(void)m;
	if (!p)
		return -ESRCH;
	n = p->nr_stacks < max ? p->nr_stacks : max;
	if (n)
		memcpy(out, p->stacks, n * sizeof(*out));
	return (int)n;
}

static int sym_maps_text(void *ctx, pid_t pid, const char **text, size_t *len, __u64 *gen,
			 struct cp_maps_how *how)
{
	struct replay_proc *p = find_proc(ctx, pid);

	*how = (struct cp_maps_how){0};
	if (!p || !p->sym_text)
		return -ESRCH;
	*text = p->sym_text;
	*len = p->sym_len;
	*gen = p->gen;
	return 0;
}

/* "libfoo.so+0x1234 (changed since the recording: ...)" for an ip in a bad file. */
static int explain(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz)
{
	struct replay_proc *p = find_proc(ctx, (pid_t)tgid);
	const struct bad_file *bad;
	const struct cp_map *m;

	m = p ? cp_maps__find(p->maps, ip) : NULL;
	if (!m || m->kind != CP_MAP_FILE || !(bad = bad_file(ctx, m->path)))
		return -1;
	snprintf(buf, sz, "%s+0x%llx (%s)", cp_base_name(m->path),
		 (unsigned long long)(ip - m->start + m->offset), bad->why);
	return 0;
}

/* ---- sections ---- */

/* @text without the lines that map a bad file, into a new NUL-terminated buffer. */
static char *filter_bad(const struct cp_replay *r, const char *text, size_t len, size_t *out_len)
{
	char *out = malloc(len + 1);
	size_t n = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		struct cp_map m;
		const char *path;
		size_t path_len;
		bool drop = false;

		if (r->nr_bad &&
		    !cp_maps_parse_line(text + i, end - i - (nl ? 1 : 0), &m, &path, &path_len) &&
		    path_len && path_len < 4096) {
			char p[4096];

			memcpy(p, path, path_len);
			p[path_len] = '\0';
			drop = bad_file(r, p) != NULL;
		}
		if (!drop) {
			memcpy(out + n, text + i, end - i);
			n += end - i;
		}
		i = end;
	}
	out[n] = '\0';
	*out_len = n;
	return out;
}

static void proc_clear_text(struct cp_replay *r, struct replay_proc *p, bool symbols)
{
	if (symbols) {
		r->text_bytes -= p->sym_len;
		free(p->sym_text);
		p->sym_text = NULL;
		p->sym_len = 0;
	} else {
		r->text_bytes -= p->len;
		free(p->text);
		p->text = NULL;
		p->len = 0;
	}
}

/* The text of @m for its reader: a copy (objects), or less the lines of bad files (symbols). */
static int keep_text(struct cp_replay *r, struct replay_proc *p, const struct cp_rec_maps *m,
		     struct cp_maps *parsed)
{
	if (m->who == CP_REC_MAPS_OBJECTS) {
		p->text = malloc(m->len + 1);
		if (!p->text)
			return -ENOMEM;
		memcpy(p->text, m->text, m->len);
		p->text[m->len] = '\0';
		p->len = m->len;
		r->text_bytes += p->len;
		cp_maps__free(parsed);
		return 0;
	}
	set_maps(r, p, parsed);
	p->sym_text = filter_bad(r, m->text, m->len, &p->sym_len);
	if (!p->sym_text)
		return -ENOMEM;
	r->text_bytes += p->sym_len;
	p->gen = ++r->gen;
	return 0;
}

static int on_maps(struct cp_replay *r, struct cp_rec_cursor *c, char *err, size_t err_sz)
{
	__u64 at = cp_rec_where(c);
	struct cp_maps *parsed = NULL;
	struct replay_proc *p;
	struct cp_rec_maps m;

	if (cp_rec_decode_maps(c, &m, err, err_sz))
		return -EINVAL;
	if (!m.error && cp_maps__parse(m.text, m.len, &parsed)) {
		snprintf(err, err_sz,
			 "corrupt at byte %llu: the maps text of process %d does not parse",
			 (unsigned long long)at, (int)m.pid);
		return -EINVAL;
	}
	/*
	 * a failed read (the process gone: written after its exit) takes no
	 * slot, and leaves an exited process exited
	 */
	p = m.error ? find_proc(r, m.pid) : get_proc(r, m.pid);
	if (m.error && !p)
		return 0;
	if (p)
		proc_clear_text(r, p, m.who == CP_REC_MAPS_SYMBOLS);
	/* past the caps with every process held alive: this text is not kept, said at the end */
	if (!p ||
	    !text_room(r, m.len + (m.who == CP_REC_MAPS_SYMBOLS && parsed ? parsed->bytes : 0),
		       p)) {
		cp_maps__free(parsed);
		r->skipped++;
		return 0;
	}
	/* maps read of a process at an exited one's pid: a new process */
	if (!m.error)
		p->exited = 0;
	/* a failed read leaves no text: the process was gone for that reader */
	if (!m.error && keep_text(r, p, &m, parsed)) {
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	r->st.maps++;
	cp_profile__maps_changed(r->p, m.pid, m.who == CP_REC_MAPS_SYMBOLS);
	return 0;
}

static int on_stacks(struct cp_replay *r, struct cp_rec_cursor *c, char *err, size_t err_sz)
{
	struct replay_proc *p;
	struct cp_range *copy = NULL;
	size_t n;
	pid_t pid;

	if (cp_rec_decode_stacks(c, &pid, r->stack_buf, &n, err, err_sz))
		return -EINVAL;
	/* the stacks of a snapshot whose maps have a slot (read before them), or none */
	p = find_proc(r, pid);
	if (!p) {
		r->skipped++;
		return 0;
	}
	if (n && !(copy = malloc(n * sizeof(*copy)))) {
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	if (n)
		memcpy(copy, r->stack_buf, n * sizeof(*copy));
	free(p->stacks);
	p->stacks = copy;
	p->nr_stacks = n;
	cp_profile__maps_changed(r->p, pid, false);
	return 0;
}

/* Is the file the run mapped still here, the same? If not, remember why, and warn. */
static int on_build_id(struct cp_replay *r, struct cp_rec_cursor *c, char *err, size_t err_sz)
{
	struct cp_rec_build_id id;
	__u8 now[CP_REC_MAX_BUILD_ID];
	char was_hex[2 * CP_REC_MAX_BUILD_ID + 1], now_hex[2 * CP_REC_MAX_BUILD_ID + 1];
	char why[160 + PATH_MAX] = "", at_buf[PATH_MAX], shown[PATH_MAX], shown_why[sizeof(why)];
	const char *at;
	struct stat st;
	int n;

	if (cp_rec_decode_build_id(c, &id, err, err_sz))
		return -EINVAL;
	if (bad_file(r, id.path))
		return 0;
	at = cp_path_map_apply(r->path_map, id.path, at_buf, sizeof(at_buf));
	n = at ? cp_build_id_read(at, now, sizeof(now)) : -ENAMETOOLONG;
	if (n < 0)
		snprintf(why, sizeof(why), "file missing since the recording: %s", strerror(-n));
	else if (id.id_len && ((__u32)n != id.id_len || memcmp(now, id.id, id.id_len)))
		snprintf(why, sizeof(why), "file changed since the recording: build-id %s, now %s",
			 cp_build_id_hex(id.id, id.id_len, was_hex, sizeof(was_hex)),
			 n ? cp_build_id_hex(now, (size_t)n, now_hex, sizeof(now_hex)) : "none");
	/* a copy elsewhere (--path-map) has another inode: only a build-id tells */
	else if (!id.id_len && at == id.path && (stat(id.path, &st) || st.st_ino != id.inode))
		snprintf(why, sizeof(why),
			 "file replaced since the recording (no build-id; inode differs)");
	if (why[0] && at != id.path)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " (looked at %s)",
			 at ? at : "a path too long");
	if (!why[0])
		return 0;
	r->st.bad_files++;
	if (r->warn)
		fprintf(r->warn,
			"cacheperf-bpf: warning: %s: %s; its instructions are shown as offsets\n",
			cp_printable(id.path, shown, sizeof(shown)),
			cp_printable(why, shown_why, sizeof(shown_why)));
	if (r->nr_bad == CP_REPLAY_MAX_BAD_FILES)
		return 0;
	if (!r->bad && !(r->bad = calloc(CP_REPLAY_MAX_BAD_FILES, sizeof(*r->bad))))
		return -ENOMEM;
	r->bad[r->nr_bad].path = strdup(id.path);
	if (!r->bad[r->nr_bad].path)
		return -ENOMEM;
	snprintf(r->bad[r->nr_bad].why, sizeof(r->bad[r->nr_bad].why), "%s", why);
	r->nr_bad++;
	return 0;
}

static int on_events(struct cp_replay *r, struct cp_rec_cursor *c, char *err, size_t err_sz)
{
	const void *data;
	size_t size;
	int ret;

	/*
	 * Each sample's handling waits on a few cache misses (its line, its
	 * instruction, its object), some of them on what others point to: a
	 * record is hinted CP_REPLAY_AHEAD records before its turn, and again
	 * every CP_REPLAY_STEP records, each stage of the hint one step
	 * further along those pointers (cp_profile__hint()), so the misses
	 * of several samples overlap.
	 */
	const void *ahead[CP_REPLAY_AHEAD];
	size_t ahead_size[CP_REPLAY_AHEAD], head = 0, n = 0, at;

	while ((ret = cp_rec_next_event(c, &data, &size, err, err_sz)) > 0) {
		if (n == CP_REPLAY_AHEAD) {
			cp_profile__feed(r->p, ahead[head], ahead_size[head]);
			r->st.records++;
			head = (head + 1) % CP_REPLAY_AHEAD;
			n--;
		}
		at = (head + n++) % CP_REPLAY_AHEAD;
		ahead[at] = data;
		ahead_size[at] = size;
		for (int k = 0; k < CP_PROFILE_HINT_STAGES && (size_t)k * CP_REPLAY_STEP < n; k++) {
			at = (head + n - 1 - (size_t)k * CP_REPLAY_STEP) % CP_REPLAY_AHEAD;
			cp_profile__hint(r->p, ahead[at], ahead_size[at], k);
		}
	}
	/* what was read before the end (or the damage) is handled, as without look-ahead */
	for (; n; n--, head = (head + 1) % CP_REPLAY_AHEAD) {
		cp_profile__feed(r->p, ahead[head], ahead_size[head]);
		r->st.records++;
	}
	return ret;
}

static int on_header(struct cp_replay *r, struct cp_rec_cursor *c, char *err, size_t err_sz)
{
	/*
	 * The replay's clock is not the run's: maps are re-read where the run
	 * re-read them (cp_profile__maps_changed), never on the replay's own.
	 * No /proc: globals are read from the files the maps name, and the
	 * per-process summaries have no cgroup, and a comm only from an exec
	 * record that carries it.
	 */
	struct cp_profile_cfg cfg = {
		.objects =
			{
				.maps_refresh_ns = ~0ull,
				.src = &r->src,
				.proc_root = "/nonexistent/proc",
				.path_map = r->path_map,
			},
		.maps_text = sym_maps_text,
		.maps_ctx = r,
		.maps_offline = true,
		.path_map = r->path_map,
		.explain = explain,
		.explain_ctx = r,
	};
	struct cp_run_info info;

	if (cp_rec_decode_info(c, &info, err, err_sz))
		return -EINVAL;
	cfg.l1d = info.cache[CP_CACHE_L1D];
	if (!cp_cache_level_check(&cfg.l1d)) {
		snprintf(err, err_sz, "the recorded L1D geometry is not usable: %s",
			 cfg.l1d.problem);
		return -EINVAL;
	}
	const struct cp_profile_hooks hooks = {.proc = on_proc, .ctx = r};

	r->p = cp_profile__new(&cfg, &hooks);
	if (!r->p) {
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	cp_profile__set_info(r->p, &info);
	return 0;
}

/* One interval's counts per (instruction, call stack): format 6 on. */
static int on_sample_stacks(struct cp_replay *r, struct cp_rec_cursor *c, char *err, size_t err_sz)
{
	struct cp_stack_sample s;
	__u32 n;

	if (c->version && c->version < 6) {
		snprintf(err, err_sz,
			 "corrupt at byte %llu: a sample-stacks section in a version %u recording",
			 (unsigned long long)cp_rec_where(c), c->version);
		return -EINVAL;
	}
	if (cp_rec_decode_sample_stacks(c, &n, err, err_sz))
		return -EINVAL;
	for (__u32 i = 0; i < n; i++) {
		if (cp_rec_next_sample_stack(c, &s, err, err_sz))
			return -EINVAL;
		cp_profile__add_stacks(r->p, &s, 1);
	}
	return cp_rec_sample_stacks_end(c, err, err_sz);
}

static int on_section(struct cp_replay *r, struct cp_rec_section *sec, char *err, size_t err_sz)
{
	struct cp_rec_cursor *c = &sec->payload;
	struct cp_insn batch[64];
	const void *v;
	struct cp_run_end end;
	size_t n;

	switch (sec->type) {
	case CP_SEC_HEADER:
		return on_header(r, c, err, err_sz);
	case CP_SEC_EVENTS:
		return on_events(r, c, err, err_sz);
	case CP_SEC_COUNTERS:
		if (cp_rec_decode_counters(c, &v, &n, err, err_sz))
			return -EINVAL;
		for (size_t i = 0; i < n; i += 64) {
			size_t k = n - i < 64 ? n - i : 64;

			for (size_t j = 0; j < k; j++)
				cp_rec_counter_get(v, i + j, &batch[j]);
			cp_profile__add_counts(r->p, batch, k);
		}
		r->st.counters += n;
		return 0;
	case CP_SEC_MAPS:
		return on_maps(r, c, err, err_sz);
	case CP_SEC_BUILD_ID:
		return on_build_id(r, c, err, err_sz);
	case CP_SEC_STACKS:
		return on_stacks(r, c, err, err_sz);
	case CP_SEC_SAMPLE_STACKS:
		return on_sample_stacks(r, c, err, err_sz);
	case CP_SEC_END:
		if (cp_rec_decode_end(c, &end, err, err_sz))
			return -EINVAL;
		cp_profile__set_end(r->p, &end);
		return 0;
	default:
		return -EINVAL; /* the reader lets none through */
	}
}

int cp_replay__run(FILE *f, const char *name, FILE *warn, const struct cp_path_map *map,
		   struct cp_replay **out, char *err, size_t err_sz)
{
	struct cp_replay *r = calloc(1, sizeof(*r));
	struct cp_rec_reader *rd = NULL;
	struct cp_rec_section sec;
	char why[512] = "";
	int ret = -ENOMEM;

	*out = NULL;
	if (!r || !(r->stack_buf = malloc(CP_MAX_THREAD_STACKS * sizeof(*r->stack_buf)))) {
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	r->warn = warn;
	r->path_map = map;
	r->src = (struct cp_proc_source){
		.maps = src_maps,
		.thread_stacks = src_thread_stacks,
		.ctx = r,
	};
	rd = cp_rec_reader__new(f, why, sizeof(why));
	if (!rd) {
		ret = -EINVAL;
		goto fail;
	}
	while ((ret = cp_rec_reader__next(rd, &sec, why, sizeof(why))) > 0) {
		r->st.sections++;
		ret = on_section(r, &sec, why, sizeof(why));
		if (ret)
			goto fail;
	}
	if (ret)
		goto fail;
	cp_rec_reader__free(rd);
	r->st.maps_skipped = r->skipped;
	if (r->skipped && r->warn)
		fprintf(r->warn,
			"cacheperf-bpf: warning: %s: %llu maps texts not kept (more than %d "
			"processes alive at once, or %u MiB of maps text): those processes' "
			"instructions are unnamed\n",
			name, (unsigned long long)r->skipped, CP_REPLAY_MAX_PROCS,
			CP_REPLAY_MAX_TEXT >> 20);
	*out = r;
	return 0;
fail:
	snprintf(err, err_sz, "%s: %s", name, why[0] ? why : strerror(-ret));
	cp_rec_reader__free(rd);
	cp_replay__free(r);
	return ret ? ret : -EINVAL;
}

struct cp_profile *cp_replay__profile(struct cp_replay *r)
{
	return r->p;
}

void cp_replay__stats(const struct cp_replay *r, struct cp_replay_stats *out)
{
	*out = r->st;
}

void cp_replay__free(struct cp_replay *r)
{
	if (!r)
		return;
	cp_profile__free(r->p);
	for (size_t i = 0; i < r->nr_procs; i++)
		proc_clear(r, &r->procs[i]);
	for (size_t i = 0; i < r->nr_bad; i++)
		free(r->bad[i].path);
	free(r->bad);
	free(r->procs);
	free(r->stack_buf);
	free(r);
}
