// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/maps: pure parser and classifier first, then the /proc readers. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "objects/proc_maps.h"
#include "util/clock.h"

#define DELETED_SUFFIX " (deleted)"
#define READ_CHUNK     65536

/* Hex digits at *@p up to @end; advances *@p. -EINVAL if none or over 64 bits. */
static int take_hex(const char **p, const char *end, __u64 *out)
{
	__u64 v = 0;
	int n = 0;

	while (*p < end && isxdigit((unsigned char)**p)) {
		char c = **p;
		int d = isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;

		if (++n > 16)
			return -EINVAL;
		v = v << 4 | (__u64)d;
		(*p)++;
	}
	*out = v;
	return n ? 0 : -EINVAL;
}

static int take_dec(const char **p, const char *end, __u64 *out)
{
	__u64 v = 0;
	int n = 0;

	while (*p < end && isdigit((unsigned char)**p)) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (__u64)(**p - '0');
		(*p)++;
		n++;
	}
	*out = v;
	return n ? 0 : -EINVAL;
}

static int take_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

/* One or more spaces (the kernel pads columns with spaces, never tabs). */
static int take_spaces(const char **p, const char *end)
{
	if (*p >= end || **p != ' ')
		return -EINVAL;
	while (*p < end && **p == ' ')
		(*p)++;
	return 0;
}

static bool named(const char *path, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(path, name, len);
}

static bool has_prefix(const char *path, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(path, prefix, n);
}

static enum cp_map_kind kind_of(const char *path, size_t len)
{
	if (!len)
		return CP_MAP_ANON;
	if (path[0] != '[' || path[len - 1] != ']')
		return CP_MAP_FILE;
	if (named(path, len, "[heap]"))
		return CP_MAP_HEAP;
	if (named(path, len, "[stack]") || has_prefix(path, len, "[stack:"))
		return CP_MAP_STACK;
	if (named(path, len, "[vdso]"))
		return CP_MAP_VDSO;
	if (named(path, len, "[vvar]") || named(path, len, "[vvar_vclock]"))
		return CP_MAP_VVAR;
	if (named(path, len, "[vsyscall]"))
		return CP_MAP_VSYSCALL;
	/* prctl(PR_SET_VMA_ANON_NAME) regions: anonymous memory with a name */
	if (has_prefix(path, len, "[anon:") || has_prefix(path, len, "[anon_shmem:"))
		return CP_MAP_ANON;
	return CP_MAP_SPECIAL;
}

int cp_maps_parse_line(const char *line, size_t len, struct cp_map *m, const char **path,
		       size_t *path_len)
{
	const char *p = line, *end = line + len;
	__u64 major, minor;
	char perms[4];

	memset(m, 0, sizeof(*m));
	if (take_hex(&p, end, &m->start) || take_char(&p, end, '-') || take_hex(&p, end, &m->end) ||
	    take_spaces(&p, end))
		return -EINVAL;
	if (end - p < 4)
		return -EINVAL;
	memcpy(perms, p, 4);
	p += 4;
	if ((perms[0] != 'r' && perms[0] != '-') || (perms[1] != 'w' && perms[1] != '-') ||
	    (perms[2] != 'x' && perms[2] != '-') || (perms[3] != 'p' && perms[3] != 's'))
		return -EINVAL;
	m->prot = (perms[0] == 'r' ? CP_MAP_READ : 0) | (perms[1] == 'w' ? CP_MAP_WRITE : 0) |
		  (perms[2] == 'x' ? CP_MAP_EXEC : 0);
	m->shared = perms[3] == 's';
	if (take_spaces(&p, end) || take_hex(&p, end, &m->offset) || take_spaces(&p, end) ||
	    take_hex(&p, end, &major) || take_char(&p, end, ':') || take_hex(&p, end, &minor) ||
	    take_spaces(&p, end) || take_dec(&p, end, &m->inode))
		return -EINVAL;
	if (m->end <= m->start || major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	m->dev_major = (__u32)major;
	m->dev_minor = (__u32)minor;
	/* Anonymous lines end after the inode, with or without trailing padding. */
	while (p < end && *p == ' ')
		p++;
	*path = p;
	*path_len = (size_t)(end - p);
	/*
	 * The kernel appends " (deleted)" to unlinked files; a file really named
	 * "x (deleted)" is indistinguishable, as for every reader of this file.
	 */
	if (*path_len > strlen(DELETED_SUFFIX) && **path == '/' &&
	    !memcmp(end - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX))) {
		m->deleted = true;
		*path_len -= strlen(DELETED_SUFFIX);
	}
	m->kind = kind_of(*path, *path_len);
	return 0;
}

void cp_maps__free(struct cp_maps *m)
{
	if (!m)
		return;
	free(m->maps);
	free(m->strings);
	free(m);
}

int cp_maps__parse(const char *text, size_t len, struct cp_maps **out)
{
	const char *p = text, *end = text + len;
	struct cp_maps *m = calloc(1, sizeof(*m));
	size_t cap = 0, str_len = 0;
	char *strings;
	int err = -ENOMEM;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	/* every path fits in the text it came from: one allocation, no moves */
	m->strings = malloc(len + 1);
	if (!m->strings)
		goto cleanup;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *path;
		size_t line_len = nl ? (size_t)(nl - p) : (size_t)(end - p), path_len;
		struct cp_map map;

		if (line_len) {
			err = cp_maps_parse_line(p, line_len, &map, &path, &path_len);
			if (err)
				goto cleanup;
			err = -EINVAL;
			if (m->nr && map.start < m->maps[m->nr - 1].end)
				goto cleanup;
			err = -E2BIG;
			if (m->nr == CP_MAX_MAPS)
				goto cleanup;
			if (m->nr == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct cp_map *n = realloc(m->maps, ncap * sizeof(*n));

				err = -ENOMEM;
				if (!n)
					goto cleanup;
				m->maps = n;
				cap = ncap;
			}
			memcpy(m->strings + str_len, path, path_len);
			m->strings[str_len + path_len] = '\0';
			/* an offset for now: turned into a pointer once strings stop moving */
			map.path = (const char *)(uintptr_t)str_len;
			str_len += path_len + 1;
			m->maps[m->nr++] = map;
		}
		p += line_len + (nl ? 1 : 0);
	}
	/* the paths alone: a snapshot kept holds no room for the text's other columns */
	strings = realloc(m->strings, str_len + 1);
	if (strings)
		m->strings = strings;
	m->bytes = sizeof(*m) + cap * sizeof(*m->maps) + (strings ? str_len : len) + 1;
	for (size_t i = 0; i < m->nr; i++)
		m->maps[i].path = m->strings + (uintptr_t)m->maps[i].path;
	*out = m;
	return 0;
cleanup:
	cp_maps__free(m);
	return err;
}

__u64 cp_maps_kept_max_bytes(__u64 limit_bytes)
{
	return limit_bytes ? limit_bytes / CP_MAPS_KEPT_LIMIT_DIV : CP_MAX_MAPS_KEPT_BYTES;
}

bool cp_maps_bank_may(struct cp_maps_bank *b, __u64 now_ns)
{
	if (!b->at_ns) {
		b->ns = CP_MAPS_BANK_NS;
	} else if (now_ns > b->at_ns) {
		__u64 gain = (now_ns - b->at_ns) / 1000 * CP_MAPS_BANK_PER_MILLE;

		b->ns = gain < (__u64)(CP_MAPS_BANK_NS - b->ns) ? b->ns + (__s64)gain
								: CP_MAPS_BANK_NS;
	}
	if (now_ns > b->at_ns)
		b->at_ns = now_ns;
	return b->ns > 0;
}

void cp_maps_bank_charge(struct cp_maps_bank *b, __u64 ns)
{
	b->ns -= ns < (__u64)CP_MAPS_BANK_NS ? (__s64)ns : CP_MAPS_BANK_NS;
	if (b->ns < -CP_MAPS_BANK_NS)
		b->ns = -CP_MAPS_BANK_NS;
}

/*
 * The reads' banks, the process's (every thread's reads take its time): one
 * per owner of the processes read (the uid /proc shows), the CP_MAPS_OWNERS
 * most recently read, and one for all, charged a CP_MAPS_OWNERS_AT_ONCE'th
 * of each read (as many owners' worth): a tenant spends its own bank, and
 * a tenant of many uids all of them, before other owners' reads are cut.
 */
#define CP_MAPS_OWNERS	       64
#define CP_MAPS_OWNERS_AT_ONCE 4

static pthread_mutex_t bank_lock = PTHREAD_MUTEX_INITIALIZER;
static struct owner_bank {
	uid_t uid;
	__u64 last_use; /* 0: free */
	struct cp_maps_bank bank;
} owners[CP_MAPS_OWNERS];
static struct cp_maps_bank all_bank;
static __u64 owner_clock;

/* @uid's bank, a new one (full) in the least recently used slot if none. */
static struct cp_maps_bank *owner_bank(uid_t uid)
{
	struct owner_bank *lru = &owners[0];

	for (int i = 0; i < CP_MAPS_OWNERS; i++) {
		if (owners[i].last_use && owners[i].uid == uid) {
			lru = &owners[i];
			goto found;
		}
		if (owners[i].last_use < lru->last_use)
			lru = &owners[i];
	}
	*lru = (struct owner_bank){.uid = uid};
found:
	lru->last_use = ++owner_clock;
	return &lru->bank;
}

/* Charges @ns of @uid's reading; whether its read may go on past the free bytes. */
static bool bank_go_on(uid_t uid, __u64 ns)
{
	struct cp_maps_bank *b;
	__u64 now = cp_now_ns();
	bool may;

	pthread_mutex_lock(&bank_lock);
	b = owner_bank(uid);
	cp_maps_bank_charge(b, ns);
	cp_maps_bank_charge(&all_bank, ns / CP_MAPS_OWNERS_AT_ONCE);
	may = cp_maps_bank_may(b, now);
	may = cp_maps_bank_may(&all_bank, now) && may;
	pthread_mutex_unlock(&bank_lock);
	return may;
}

bool cp_maps_owner_spend(uid_t uid, __u64 ns)
{
	return bank_go_on(uid, ns);
}

/* Whether @uid's bank is half full at least (nothing taken). */
static bool bank_half_full(uid_t uid)
{
	struct cp_maps_bank *b;
	bool half;

	pthread_mutex_lock(&bank_lock);
	b = owner_bank(uid);
	cp_maps_bank_may(b, cp_now_ns());
	half = b->ns >= CP_MAPS_BANK_NS / 2;
	pthread_mutex_unlock(&bank_lock);
	return half;
}

bool cp_maps_may_refresh(const struct cp_maps_how *how, __u64 read_ns, __u64 cost_ns, __u64 min_ns)
{
	return cp_maps_refresh_due(read_ns, cost_ns, cp_now_ns(), min_ns) &&
	       (!how || !how->cut || bank_half_full(how->owner));
}

/*
 * A maps file (its size is unknown until read), up to @max bytes, those
 * past CP_MAPS_FREE_BYTES a chunk at a time while the banks of its owner
 * (*@owner, the file's uid) let the read go on, its whole time charged:
 * *@cut says there was more, *@banked whether a bank stopped the read
 * before @max.
 */
static int read_capped(const char *path, size_t max, char **buf, size_t *len, bool *cut,
		       bool *banked, uid_t *owner)
{
	size_t cap = READ_CHUNK, n = 0, paid = max < CP_MAPS_FREE_BYTES ? max : CP_MAPS_FREE_BYTES;
	char *b = malloc(cap);
	__u64 charged_ns;
	struct stat st;
	int fd, err = 0;

	*cut = *banked = false;
	*owner = 0;
	if (!b)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(b);
		return err;
	}
	if (!fstat(fd, &st))
		*owner = st.st_uid;
	/* an owner whose bank is spent gets the first lines alone */
	if (!bank_go_on(*owner, 0) && paid > CP_MAPS_SPENT_BYTES)
		paid = CP_MAPS_SPENT_BYTES;
	charged_ns = cp_now_ns();
	for (;;) {
		ssize_t r;

		/* past the free bytes a chunk at a time, while the banks let it */
		if (n == paid && paid < max) {
			__u64 now = cp_now_ns();

			*banked = !bank_go_on(*owner, now - charged_ns);
			charged_ns = now;
			if (!*banked)
				paid += max - paid < READ_CHUNK ? max - paid : READ_CHUNK;
		}
		if (n == paid) {
			/* one byte more says whether the file goes on */
			char c;

			while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
				;
			*cut = r > 0;
			break;
		}
		if (n + 1 >= cap) {
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nb = realloc(b, ncap);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			b = nb;
			cap = ncap;
		}
		r = read(fd, b + n, cap - n - 1 < paid - n ? cap - n - 1 : paid - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	bank_go_on(*owner, cp_now_ns() - charged_ns); /* the rest of the read's time */
	if (err) {
		free(b);
		return err;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/*
 * The texts cp_maps_hold() keeps: each held process's maps as first read in
 * the hold (text NULL: not yet), with their bytes in all, bounded.
 */
#define CP_MAPS_HELD	   64
#define CP_MAPS_HELD_BYTES (8u << 20)

struct held_maps {
	pid_t pid;
	char *text;
	size_t len;
	struct cp_maps_how how;
};

static __thread struct {
	struct held_maps h[CP_MAPS_HELD];
	int nr;
	size_t bytes;
	bool turn; /* cp_maps_turn(true): the holds last to its end */
} held;

static struct held_maps *held_of(pid_t pid)
{
	for (int i = 0; i < held.nr; i++)
		if (held.h[i].pid == pid)
			return &held.h[i];
	return NULL;
}

static void drop_text(struct held_maps *h)
{
	held.bytes -= h->text ? h->len + 1 : 0;
	free(h->text);
	h->text = NULL;
	h->len = 0;
}

void cp_maps_hold(pid_t pid)
{
	struct held_maps *h;

	if (!held.turn)
		cp_maps_release();
	h = held_of(pid);
	/* held already: a new exec, a new moment */
	if (h)
		drop_text(h);
	else if (held.nr < CP_MAPS_HELD)
		held.h[held.nr++] = (struct held_maps){.pid = pid};
}

static void release_all(void)
{
	for (int i = 0; i < held.nr; i++)
		drop_text(&held.h[i]);
	held.nr = 0;
}

void cp_maps_release(void)
{
	if (!held.turn)
		release_all();
}

void cp_maps_turn(bool open)
{
	release_all();
	held.turn = open;
}

/* *@text: a copy of the held text of @pid's maps, when there is one. */
static bool copy_held(const char *proc_root, pid_t pid, char **text, size_t *len,
		      struct cp_maps_how *how)
{
	struct held_maps *h = held_of(pid);

	if (!h || !h->text || (proc_root && strcmp(proc_root, "/proc")))
		return false;
	*text = malloc(h->len + 1);
	if (!*text)
		return false;
	memcpy(*text, h->text, h->len + 1);
	*len = h->len;
	*how = h->how;
	return true;
}

/* Keeps a copy of @text, @pid's maps just read, while they are held (within the bound). */
static void keep_held(const char *proc_root, pid_t pid, const char *text, size_t len,
		      const struct cp_maps_how *how)
{
	struct held_maps *h = held_of(pid);

	if (!h || h->text || (proc_root && strcmp(proc_root, "/proc")) ||
	    held.bytes + len + 1 > CP_MAPS_HELD_BYTES)
		return;
	h->text = malloc(len + 1);
	if (!h->text)
		return;
	memcpy(h->text, text, len + 1);
	h->len = len;
	h->how = *how;
	held.bytes += len + 1;
}

int cp_maps_read_text(const char *proc_root, pid_t pid, char **text, size_t *len,
		      struct cp_maps_how *how)
{
	char path[PATH_MAX];
	bool banked;
	__u64 t;
	int err;

	*text = NULL;
	*len = 0;
	*how = (struct cp_maps_how){0};
	if (copy_held(proc_root, pid, text, len, how))
		return 0;
	if (snprintf(path, sizeof(path), "%s/%d/maps", proc_root ? proc_root : "/proc", (int)pid) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	t = cp_now_ns();
	err = read_capped(path, CP_MAX_MAPS_BYTES, text, len, &how->cut, &banked, &how->owner);
	how->cost_ns = cp_now_ns() - t;
	if (err)
		return err;
	if (how->cut) {
		/* the mappings that fit, whole lines only; the rest unknown, and said */
		char *nl = memrchr(*text, '\n', *len);

		*len = nl ? (size_t)(nl - *text) + 1 : 0;
		(*text)[*len] = '\0';
		cp_tf_count(banked ? CP_TF_MAPS_BUDGET : CP_TF_MAPS_CAP);
	}
	/* a process that exited between open and read leaves an empty file */
	if (!*len) {
		free(*text);
		*text = NULL;
		return -ESRCH;
	}
	keep_held(proc_root, pid, *text, *len, how);
	return 0;
}

bool cp_maps_refresh_due(__u64 read_ns, __u64 cost_ns, __u64 now_ns, __u64 min_ns)
{
	__u64 wait = cost_ns > min_ns / CP_MAPS_REFRESH_COST_TIMES
			     ? cost_ns * CP_MAPS_REFRESH_COST_TIMES
			     : min_ns;

	return now_ns >= read_ns && now_ns - read_ns >= wait;
}

int cp_maps__read(const char *proc_root, pid_t pid, struct cp_maps **out)
{
	char *text;
	size_t len;
	struct cp_maps_how how;
	int err;

	*out = NULL;
	err = cp_maps_read_text(proc_root, pid, &text, &len, &how);
	if (err)
		return err;
	err = cp_maps__parse(text, len, out);
	if (!err)
		(*out)->how = how;
	free(text);
	return err;
}

static int live_maps(void *ctx, const char *proc_root, pid_t pid, struct cp_maps **out)
{
	(void)ctx;
	return cp_maps__read(proc_root, pid, out);
}

static int live_thread_stacks(void *ctx, const char *proc_root, pid_t pid, const struct cp_maps *m,
			      struct cp_range *out, size_t max)
{
	(void)ctx;
	return cp_maps_thread_stacks(proc_root, pid, m, out, max);
}

const struct cp_proc_source cp_proc_live = {
	.maps = live_maps,
	.thread_stacks = live_thread_stacks,
};

ssize_t cp_proc_read_mem(void *ctx, pid_t pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	(void)ctx;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n < 0 ? -errno : n;
}

void cp_map_target_file(const struct cp_map *m, const char *proc_root, pid_t pid,
			struct cp_tf_where *w, struct cp_tf_want *want)
{
	*w = (struct cp_tf_where){
		.proc_root = proc_root,
		.pid = pid,
		.path = m->path,
		.start = m->start,
		.end = m->end,
	};
	*want = (struct cp_tf_want){
		.ino = m->inode,
		.dev_major = m->dev_major,
		.dev_minor = m->dev_minor,
	};
}

const struct cp_map *cp_maps__find(const struct cp_maps *m, __u64 addr)
{
	size_t lo = 0, hi = m ? m->nr : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->maps[mid].start)
			hi = mid;
		else if (addr >= m->maps[mid].end)
			lo = mid + 1;
		else
			return &m->maps[mid];
	}
	return NULL;
}

int cp_maps_classify(const struct cp_maps *m, __u64 addr, const struct cp_range *stacks,
		     size_t nr_stacks, struct cp_map_class *out)
{
	const struct cp_map *map = cp_maps__find(m, addr);

	memset(out, 0, sizeof(*out));
	out->kind = CP_OBJ_UNKNOWN;
	out->map = map;
	if (!map) {
		out->label = "[unmapped]";
		return -ENOENT;
	}
	for (size_t i = 0; i < nr_stacks; i++) {
		if (addr >= stacks[i].start && addr < stacks[i].end) {
			out->kind = CP_OBJ_STACK;
			out->label = "thread stack";
			return 0;
		}
	}
	switch (map->kind) {
	case CP_MAP_STACK:
		out->kind = CP_OBJ_STACK;
		out->label = map->path;
		break;
	case CP_MAP_HEAP:
	case CP_MAP_ANON:
		out->before_attach = true;
		out->label = map->path[0] ? map->path : "[anon]";
		break;
	case CP_MAP_FILE:
		out->file_offset = addr - map->start + map->offset;
		/* fallthrough */
	default:
		out->kind = CP_OBJ_MAPPING;
		out->label = map->path;
		break;
	}
	return 0;
}

int cp_parse_syscall_sp(const char *text, __u64 *sp)
{
	const char *tok[9];
	int n = 0;
	char *end;

	if (!strncmp(text, "running", 7))
		return -EAGAIN;
	/* "-1 SP PC" or "NR A1 A2 A3 A4 A5 A6 SP PC": SP is the next to last */
	for (const char *p = text; *p && *p != '\n';) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		if (n == 9)
			return -EINVAL;
		tok[n++] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	if (n != 9 && (n != 3 || strncmp(tok[0], "-1 ", 3)))
		return -EINVAL;
	if (strncmp(tok[n - 2], "0x", 2))
		return -EINVAL;
	errno = 0;
	*sp = strtoull(tok[n - 2], &end, 16);
	if (errno || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	return 0;
}

int cp_maps_thread_stacks(const char *proc_root, pid_t pid, const struct cp_maps *m,
			  struct cp_range *out, size_t max)
{
	char path[PATH_MAX], buf[256];
	struct dirent *de;
	size_t nr = 0;
	DIR *dir;

	if (!proc_root)
		proc_root = "/proc";
	snprintf(path, sizeof(path), "%s/%d/task", proc_root, (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	for (size_t seen = 0; nr < max && (de = readdir(dir));) {
		const struct cp_map *map;
		ssize_t r;
		__u64 sp;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		if (seen++ == max) {
			cp_tf_count(CP_TF_THREADS_CAP);
			break;
		}
		if (snprintf(path, sizeof(path), "%s/%d/task/%s/syscall", proc_root, (int)pid,
			     de->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* the thread exited, or no ptrace access */
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		if (cp_parse_syscall_sp(buf, &sp))
			continue;
		map = cp_maps__find(m, sp);
		/* the main thread's [stack] needs no range; file mappings are no stacks */
		if (!map || map->kind != CP_MAP_ANON)
			continue;
		out[nr].start = map->start;
		out[nr].end = map->end;
		nr++;
	}
	closedir(dir);
	return (int)nr;
}
