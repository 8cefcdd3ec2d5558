// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Files a target names: pure judgement first, then the opening and copying (target_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <linux/openat2.h>

#include "machine/copy_cache.h"
#include "machine/copy_cost.h"
#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "util/hash.h"

#define COPY_CHUNK (256u << 10)

static const char *const refusal_names[CP_TF_NR] = {
	[CP_TF_OK] = "ok",
	[CP_TF_GONE] = "gone",
	[CP_TF_NOT_REGULAR] = "not a regular file",
	[CP_TF_SYMLINK] = "a symlink",
	[CP_TF_ESCAPE] = "outside the target's root",
	[CP_TF_REPLACED] = "not the mapped file",
	[CP_TF_TOO_BIG] = "too big",
	[CP_TF_SHRUNK] = "shrunk while read",
	[CP_TF_INFLATES] = "compressed sections too big",
	[CP_TF_NO_FDS] = "out of file descriptors",
	[CP_TF_MODULE_CAP] = "modules per process capped",
	[CP_TF_MAPS_CAP] = "maps cut at their byte cap",
	[CP_TF_MAPS_BUDGET] = "maps cut for the reads' budget",
	[CP_TF_DENIED] = "cannot be opened",
	[CP_TF_MEMORY] = "copy past --max-memory",
	[CP_TF_BAD_CFI] = "CFI out of bounds",
	[CP_TF_DEEP_DWARF] = "DWARF past the walk's caps",
	[CP_TF_PARSE] = "its parse failed in the worker",
	[CP_TF_NOT_LOADABLE] = "no executable or shared object",
	[CP_TF_MALFORMED] = "string tables unterminated",
	[CP_TF_THREADS_CAP] = "threads past the stack walk's cap",
	[CP_TF_MAPS_UNRECORDED] = "maps texts not recorded for their owner's budget",
};

/* The same as JSON keys. */
static const char *const refusal_keys[CP_TF_NR] = {
	[CP_TF_OK] = "ok",
	[CP_TF_GONE] = "gone",
	[CP_TF_NOT_REGULAR] = "not_regular",
	[CP_TF_SYMLINK] = "symlink",
	[CP_TF_ESCAPE] = "escape",
	[CP_TF_REPLACED] = "replaced",
	[CP_TF_TOO_BIG] = "too_big",
	[CP_TF_SHRUNK] = "shrunk",
	[CP_TF_INFLATES] = "inflates",
	[CP_TF_NO_FDS] = "no_fds",
	[CP_TF_MODULE_CAP] = "module_cap",
	[CP_TF_MAPS_CAP] = "maps_cap",
	[CP_TF_MAPS_BUDGET] = "maps_budget",
	[CP_TF_DENIED] = "denied",
	[CP_TF_MEMORY] = "memory",
	[CP_TF_BAD_CFI] = "bad_cfi",
	[CP_TF_DEEP_DWARF] = "deep_dwarf",
	[CP_TF_PARSE] = "parse_failed",
	[CP_TF_NOT_LOADABLE] = "not_loadable",
	[CP_TF_MALFORMED] = "malformed",
	[CP_TF_THREADS_CAP] = "threads_cap",
	[CP_TF_MAPS_UNRECORDED] = "maps_unrecorded",
};

static __u64 refusals[CP_TF_NR];

enum cp_tf_refusal cp_tf_judge(const struct cp_tf_stat *st, const struct cp_tf_want *want)
{
	__u64 max = want->max_bytes ? want->max_bytes : CP_TF_MAX_BYTES;

	if (S_ISLNK(st->mode))
		return CP_TF_SYMLINK;
	if (!S_ISREG(st->mode))
		return CP_TF_NOT_REGULAR;
	if (want->ino && (st->ino != want->ino || st->dev_major != want->dev_major ||
			  st->dev_minor != want->dev_minor))
		return CP_TF_REPLACED;
	if (st->size > max)
		return CP_TF_TOO_BIG;
	return CP_TF_OK;
}

enum cp_tf_refusal cp_tf_errno_refusal(int err)
{
	switch (err) {
	case 0:
		return CP_TF_OK;
	case ENOENT:
	case ESRCH:
	case ENOTDIR:
		return CP_TF_GONE;
	case ELOOP:
		return CP_TF_SYMLINK;
	case EXDEV:
		return CP_TF_ESCAPE;
	case EMFILE:
	case ENFILE:
		return CP_TF_NO_FDS;
	case ENXIO:
	case ENODEV:
		return CP_TF_NOT_REGULAR;
	case EFBIG:
		return CP_TF_TOO_BIG;
	default:
		return CP_TF_DENIED;
	}
}

const char *cp_tf_refusal_name(enum cp_tf_refusal why)
{
	return (unsigned int)why < CP_TF_NR ? refusal_names[why] : "?";
}

const char *cp_tf_refusal_key(enum cp_tf_refusal why)
{
	return (unsigned int)why < CP_TF_NR ? refusal_keys[why] : "unknown";
}

void cp_tf_count(enum cp_tf_refusal why)
{
	if ((unsigned int)why < CP_TF_NR && why != CP_TF_OK && why != CP_TF_GONE)
		__atomic_add_fetch(&refusals[why], 1, __ATOMIC_RELAXED);
}

__u64 cp_tf_refusals(__u64 out[CP_TF_NR])
{
	__u64 sum = 0;

	for (int i = 0; i < CP_TF_NR; i++) {
		out[i] = __atomic_load_n(&refusals[i], __ATOMIC_RELAXED);
		sum += out[i];
	}
	return sum;
}

bool cp_tf_root_wrote(const struct cp_tf_stat *st, const struct cp_tf_want *want, bool in_host_ns)
{
	return in_host_ns && !want->foreign && st->uid == 0 && !(st->mode & (S_IWGRP | S_IWOTH));
}

/* ---- system calls ---- */

/* What fstat() said in @s: the judged facts in @st, the content's key in @key (may be NULL). */
static void stat_of(const struct stat *s, struct cp_tf_stat *st, struct cp_copy_key *key)
{
	*st = (struct cp_tf_stat){
		.mode = s->st_mode,
		.dev_major = major(s->st_dev),
		.dev_minor = minor(s->st_dev),
		.ino = s->st_ino,
		.size = (__u64)s->st_size,
		.uid = s->st_uid,
	};
	if (key)
		*key = (struct cp_copy_key){
			.dev = s->st_dev,
			.ino = s->st_ino,
			.size = (__u64)s->st_size,
			.mtime_ns = (__u64)s->st_mtim.tv_sec * 1000000000ull +
				    (__u64)s->st_mtim.tv_nsec,
			.ctime_ns = (__u64)s->st_ctim.tv_sec * 1000000000ull +
				    (__u64)s->st_ctim.tv_nsec,
		};
}

static int fstat_fd(int fd, struct cp_tf_stat *st, struct cp_copy_key *key)
{
	struct stat s;

	if (fstat(fd, &s))
		return -errno;
	stat_of(&s, st, key);
	return 0;
}

/* ---- files found lately, by the device and inode their maps line names ---- */

struct seen_file {
	__u32 dev_major, dev_minor;
	__u64 ino;	      /* the maps line's; 0: a free way */
	__u64 found_ns;	      /* CLOCK_MONOTONIC of the look that found it */
	struct cp_tf_stat st; /* what the look found */
	struct cp_copy_key key;
};

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seen_file seen[CP_TF_SEEN_SLOTS];
static __u64 seen_for_ns = CP_TF_SEEN_NS;

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* Whether @want names a file by the maps line's device and inode (else nothing is kept). */
static bool seen_keyed(const struct cp_tf_want *want)
{
	return want->ino && !want->follow && !want->foreign;
}

/* The first way of @want's set (CP_TF_SEEN_WAYS of them). */
static struct seen_file *seen_set(const struct cp_tf_want *want)
{
	__u64 h = cp_hash_mix(
		cp_hash64(want->ino) ^ ((__u64)want->dev_major << 20 | want->dev_minor), 32, 29);

	return &seen[cp_hash_slot(h, 0, CP_TF_SEEN_SLOTS / CP_TF_SEEN_WAYS - 1) * CP_TF_SEEN_WAYS];
}

static bool seen_is(const struct seen_file *f, const struct cp_tf_want *want)
{
	return f->ino == want->ino && f->dev_major == want->dev_major &&
	       f->dev_minor == want->dev_minor;
}

/*
 * Remembers that @w's file, as @want names it, was found as @st, holding
 * @key's content: only when it is the very inode the maps line names (not
 * an overlayfs file of an older kernel, whose line names the inode below
 * it, nor a range mapped anew since the maps were read; on a file system
 * whose maps lines name another device than fstat(), nothing), and a file
 * of the host's root: owned by root, writable by no one else, named by a
 * process of the host's mount namespace (a container's root owns its
 * image's files too). A find that is not so forgets what the line stood
 * for.
 */
static void seen_put(const struct cp_tf_where *w, const struct cp_tf_want *want,
		     const struct cp_tf_stat *st, const struct cp_copy_key *key)
{
	struct seen_file *set, *f;
	bool keep;

	if (!seen_keyed(want))
		return;
	keep = st->ino == want->ino && st->dev_major == want->dev_major &&
	       st->dev_minor == want->dev_minor && cp_tf_root_wrote(st, want, true) &&
	       (!w->pid || cp_tf_host_ns(w->proc_root, w->pid));
	pthread_mutex_lock(&seen_lock);
	set = seen_set(want);
	f = set;
	/* the same file's way, else the oldest */
	for (int i = 0; i < CP_TF_SEEN_WAYS; i++) {
		if (seen_is(&set[i], want)) {
			f = &set[i];
			break;
		}
		if (set[i].found_ns < f->found_ns)
			f = &set[i];
	}
	if (keep)
		*f = (struct seen_file){
			.dev_major = want->dev_major,
			.dev_minor = want->dev_minor,
			.ino = want->ino,
			.found_ns = mono_ns(),
			.st = *st,
			.key = *key,
		};
	else if (seen_is(f, want))
		memset(f, 0, sizeof(*f));
	pthread_mutex_unlock(&seen_lock);
}

bool cp_tf_seen(const struct cp_tf_want *want, struct cp_tf_stat *st, struct cp_copy_key *key)
{
	struct seen_file *set;
	bool hit = false;

	if (!seen_keyed(want))
		return false;
	pthread_mutex_lock(&seen_lock);
	set = seen_set(want);
	for (int i = 0; i < CP_TF_SEEN_WAYS && !hit; i++)
		if (seen_is(&set[i], want) && mono_ns() - set[i].found_ns < seen_for_ns) {
			*st = set[i].st;
			*key = set[i].key;
			hit = true;
		}
	pthread_mutex_unlock(&seen_lock);
	return hit;
}

void cp_tf_seen_for(__u64 ns)
{
	pthread_mutex_lock(&seen_lock);
	seen_for_ns = ns;
	pthread_mutex_unlock(&seen_lock);
}

/* Whether @a and @b are one file: device and inode. */
static bool same_file(const struct cp_tf_stat *a, const struct cp_tf_stat *b)
{
	return a->ino == b->ino && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
}

/* Whether @a and @b name one namespace. */
static bool same_ns(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* openat2() below @dirfd with @resolve; -errno (ENOSYS before Linux 5.6). */
static int open_below(int dirfd, const char *path, __u64 flags, __u64 resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/*
 * Whether the profiler's own root reaches the very file @st (its device and
 * inode) at @w's path: then the file is in the profiler's view of the
 * machine, whichever namespace the process that named it had, and whether
 * that process still lives (a compiler a build ran has often exited by the
 * time its ticks are read). A container's image file is another inode
 * than the host's file at its path.
 */
static bool reached_here(const struct cp_tf_where *w, const struct cp_tf_stat *st)
{
	struct cp_tf_stat here;
	int fd, err;

	if (w->path[0] != '/')
		return false;
	fd = open_below(AT_FDCWD, w->path, O_PATH | O_NOFOLLOW | O_CLOEXEC, RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return false;
	err = fstat_fd(fd, &here, NULL);
	close(fd);
	return !err && same_file(&here, st);
}

/* The profiler's own mount namespace and PID 1's under "/proc", read once: neither changes. */
static struct stat own_mnt, init_mnt;
static bool own_mnt_ok, init_mnt_ok;
static pthread_once_t mnt_once = PTHREAD_ONCE_INIT;

static void read_mnt_ns(void)
{
	own_mnt_ok = !stat("/proc/self/ns/mnt", &own_mnt);
	init_mnt_ok = !stat("/proc/1/ns/mnt", &init_mnt);
}

bool cp_tf_host_ns(const char *proc_root, pid_t pid)
{
	const char *proc = proc_root ? proc_root : "/proc";
	char path[PATH_MAX], init[PATH_MAX];
	struct stat its, host;

	snprintf(path, sizeof(path), "%s/%d/ns/mnt", proc, (int)pid);
	if (stat(path, &its))
		return false;
	pthread_once(&mnt_once, read_mnt_ns);
	/* the profiler's own, or the host's (the unit's ProtectSystem= gives it one of its own) */
	if (own_mnt_ok && same_ns(&own_mnt, &its))
		return true;
	if (!proc_root || !strcmp(proc_root, "/proc"))
		return init_mnt_ok && same_ns(&init_mnt, &its);
	snprintf(init, sizeof(init), "%s/1/ns/mnt", proc);
	return !stat(init, &host) && same_ns(&host, &its);
}

bool cp_tf_host_file(const struct cp_tf_where *w, const struct cp_tf_want *want,
		     const struct cp_tf_stat *st)
{
	if (!w->pid)
		return cp_tf_root_wrote(st, want, true);
	return cp_tf_root_wrote(st, want, true) &&
	       (cp_tf_host_ns(w->proc_root, w->pid) || reached_here(w, st));
}

/*
 * An O_PATH descriptor on @w's file, the @how'th way: 0 map_files, 1 the
 * target's root, 2 the profiler's root. Opens nothing for reading.
 */
static int open_path_fd(const struct cp_tf_where *w, const struct cp_tf_want *want, int how)
{
	const char *proc = w->proc_root ? w->proc_root : "/proc";
	char buf[PATH_MAX];
	int dirfd, fd;

	switch (how) {
	case 0:
		if (!w->pid || !w->end)
			return -ENOENT;
		snprintf(buf, sizeof(buf), "%s/%d/map_files/%llx-%llx", proc, (int)w->pid,
			 (unsigned long long)w->start, (unsigned long long)w->end);
		/* the magic link is the mapped file itself: followed, and nothing else is */
		fd = open(buf, O_PATH | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	case 1:
		if (!w->pid || w->path[0] != '/')
			return -ENOENT;
		snprintf(buf, sizeof(buf), "%s/%d/root", proc, (int)w->pid);
		dirfd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -errno;
		fd = open_below(dirfd, w->path, O_PATH | O_NOFOLLOW | O_CLOEXEC,
				RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		close(dirfd);
		return fd;
	default:
		if (want->follow) {
			fd = open(w->path, O_PATH | O_CLOEXEC);
			return fd < 0 ? -errno : fd;
		}
		return open_below(AT_FDCWD, w->path, O_PATH | O_NOFOLLOW | O_CLOEXEC,
				  RESOLVE_NO_MAGICLINKS);
	}
}

/* Reopens the judged O_PATH descriptor @pfd for reading: the same file, no path walked. */
static int reopen(int pfd, const struct cp_tf_stat *want)
{
	struct cp_tf_stat st;
	char buf[64];
	int fd, err;

	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pfd);
	fd = open(buf, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fstat_fd(fd, &st, NULL);
	if (!err && (!same_file(&st, want) || !S_ISREG(st.mode)))
		err = -ESTALE;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The first way that finds a file @want accepts; its O_PATH descriptor, or -errno and @why. */
static int find_file(const struct cp_tf_where *w, const struct cp_tf_want *want,
		     struct cp_tf_stat *st, enum cp_tf_refusal *why)
{
	struct cp_copy_key key;
	/* the profiler's root only for a file known by inode: the same inode is the same file */
	int last = !w->pid || want->ino ? 2 : 1, err = -ENOENT;

	*why = CP_TF_GONE;
	for (int how = 0; how <= last; how++) {
		/*
		 * map_files is the mapping's file by construction: only its kind
		 * and size are judged (an overlayfs file's maps line names the
		 * inode below the overlay on kernels before 6.10, fstat the
		 * overlay's)
		 */
		struct cp_tf_want mapped = {.max_bytes = want->max_bytes};
		enum cp_tf_refusal r;
		int fd = open_path_fd(w, want, how), e;

		if (fd < 0) {
			r = cp_tf_errno_refusal(-fd);
			e = fd;
		} else {
			e = fstat_fd(fd, st, &key);
			r = e ? CP_TF_DENIED : cp_tf_judge(st, how == 0 ? &mapped : want);
			if (r == CP_TF_OK) {
				*why = CP_TF_OK;
				seen_put(w, want, st, &key);
				return fd;
			}
			close(fd);
			e = -EPERM;
		}
		/* the first telling reason is the one said */
		if (*why == CP_TF_GONE && r != CP_TF_GONE) {
			*why = r;
			err = e;
		}
		if (r == CP_TF_NO_FDS)
			break;
	}
	return err;
}

enum cp_tf_refusal cp_tf_check(const struct cp_tf_where *w, const struct cp_tf_want *want)
{
	enum cp_tf_refusal why;
	struct cp_tf_stat st;
	int fd = find_file(w, want, &st, &why);

	if (fd >= 0)
		close(fd);
	return why;
}

int cp_tf_find(const struct cp_tf_where *w, const struct cp_tf_want *want, struct cp_tf_stat *st,
	       enum cp_tf_refusal *why)
{
	int pfd = find_file(w, want, st, why);

	if (pfd < 0)
		cp_tf_count(*why);
	return pfd;
}

int cp_tf_reopen(int pfd, const struct cp_tf_stat *st, enum cp_tf_refusal *why)
{
	int fd = reopen(pfd, st);

	*why = CP_TF_OK;
	if (fd < 0) {
		*why = fd == -ESTALE ? CP_TF_REPLACED : cp_tf_errno_refusal(-fd);
		cp_tf_count(*why);
	}
	return fd;
}

int cp_tf_open(const struct cp_tf_where *w, const struct cp_tf_want *want, struct cp_tf_stat *st,
	       enum cp_tf_refusal *why)
{
	int pfd = cp_tf_find(w, want, st, why), fd;

	if (pfd < 0)
		return pfd;
	fd = cp_tf_reopen(pfd, st, why);
	close(pfd);
	return fd;
}

/* @fd's data extents from @from below @size into @ext, in order; past its cap, the rest is one. */
static size_t data_extents(int fd, __u64 from, __u64 size, struct cp_copy_range *ext)
{
	__u64 pos = from;
	size_t n = 0;

	while (pos < size) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;

		if (d < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (d < 0 || n == CP_MAX_COPY_EXTENTS - 1) {
			/* no SEEK_DATA here, or too many extents: all data */
			ext[n++] = (struct cp_copy_range){pos, size - pos};
			break;
		}
		if ((__u64)d >= size)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h <= d || (__u64)h > size)
			h = (off_t)size;
		ext[n++] = (struct cp_copy_range){(__u64)d, (__u64)(h - d)};
		pos = (__u64)h;
	}
	return n;
}

/* The pages @ext (@n of them) take in a copy. */
static __u64 extent_bytes(const struct cp_copy_range *ext, size_t n)
{
	__u64 sum = 0, page = (__u64)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++)
		sum += ((ext[i].off + ext[i].len + page - 1) & ~(page - 1)) -
		       (ext[i].off & ~(page - 1));
	return sum;
}

/* Copies @fd's bytes in @ext to the same offsets of @mfd with @buf; 0 or -errno, @why. */
static int copy_extents(int fd, int mfd, const struct cp_copy_range *ext, size_t n, char *buf,
			enum cp_tf_refusal *why)
{
	for (size_t i = 0; i < n; i++) {
		__u64 done = ext[i].off, end = ext[i].off + ext[i].len;

		/* pread, never mmap: a file shrinking under us is a short read, not SIGBUS */
		while (done < end) {
			size_t want = end - done < COPY_CHUNK ? (size_t)(end - done) : COPY_CHUNK;
			ssize_t got = pread(fd, buf, want, (off_t)done);

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				*why = CP_TF_SHRUNK;
				return got < 0 ? -errno : -EIO;
			}
			if (pwrite(mfd, buf, (size_t)got, (off_t)done) != got) {
				*why = CP_TF_DENIED;
				return -EIO;
			}
			done += (__u64)got;
		}
	}
	return 0;
}

/*
 * What reading the copy in @mfd may fault in beyond its data @ext: the
 * holes under the ELF's headers and contents, and libelf's heap for its
 * sections. -EFBIG past CP_MAX_COPY_HOLE_BYTES of such holes.
 */
static int read_cost(int mfd, __u64 size, bool no_code, const struct cp_copy_range *ext, size_t n,
		     __u64 *bytes)
{
	struct cp_copy_range *r, *code = NULL;
	__u64 heap = 0, holes;
	size_t nr, nc;
	/* with no_code, the code is no reader's: its sections are left out of the count */
	int err = cp_copy_elf_ranges(mfd, size, &r, &nr, &heap, no_code ? &code : NULL, &nc);

	if (err)
		return err;
	holes = cp_copy_hole_bytes(r, nr, ext, n);
	free(r);
	free(code);
	*bytes = holes + heap;
	return holes > CP_MAX_COPY_HOLE_BYTES ? -EFBIG : 0;
}

/* @fd's data extents (@n in @ext, room for CP_MAX_COPY_EXTENTS) less its code sections. */
static size_t without_code(int fd, __u64 size, struct cp_copy_range *ext, size_t n)
{
	struct cp_copy_range *r, *code;
	size_t nr, nc;
	__u64 heap = 0;

	if (cp_copy_elf_ranges(fd, size, &r, &nr, &heap, &code, &nc))
		return n; /* all of it copied: more than needed, never less */
	n = cp_copy_ranges_minus(ext, n, CP_MAX_COPY_EXTENTS, code, nc);
	free(r);
	free(code);
	return n;
}

/*
 * A new sealed copy of @fd's first @size bytes (cp_tf_copy() without the
 * kept ones), its code sections left holes with @no_code.
 */
static int copy_now(int fd, __u64 size, bool no_code, enum cp_tf_refusal *why)
{
	int mfd = memfd_create("cacheperf-target", MFD_CLOEXEC | MFD_ALLOW_SEALING), err = 0;
	struct cp_copy_range *ext = malloc(CP_MAX_COPY_EXTENTS * sizeof(*ext));
	char *buf = malloc(COPY_CHUNK);
	off_t pos = lseek(fd, 0, SEEK_CUR), end; /* the caller's, put back: the copy seeks */
	__u64 cost = 0;
	size_t n;

	*why = CP_TF_OK;
	if (!buf || !ext) {
		err = -ENOMEM;
		*why = CP_TF_DENIED;
		goto out;
	}
	if (mfd < 0) {
		err = -errno;
		*why = cp_tf_errno_refusal(-err);
		goto out;
	}
	/* the whole size, all of it a hole: what is not data stays so, and costs nothing */
	if (size && ftruncate(mfd, (off_t)size)) {
		err = -errno;
		*why = CP_TF_TOO_BIG;
		goto out;
	}
	/* holes read no bytes: a file cut short is seen by its size (where it can seek) */
	end = lseek(fd, 0, SEEK_END);
	if (end >= 0 && end < (off_t)size) {
		err = -EIO;
		*why = CP_TF_SHRUNK;
		goto out;
	}
	n = data_extents(fd, 0, size, ext);
	if (no_code)
		n = without_code(fd, size, ext, n);
	if (!cp_self_mem_admit(extent_bytes(ext, n))) {
		err = -ENOMEM;
		*why = CP_TF_MEMORY;
		goto out;
	}
	err = copy_extents(fd, mfd, ext, n, buf, why);
	if (err)
		goto out;
	err = read_cost(mfd, size, no_code, ext, n, &cost);
	if (err || !cp_self_mem_admit(cost)) {
		err = err == -ENOMEM ? err : -EFBIG;
		*why = err == -ENOMEM ? CP_TF_DENIED : CP_TF_MEMORY;
		goto out;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		err = -errno;
		*why = CP_TF_DENIED;
	}
out:
	if (pos >= 0)
		lseek(fd, pos, SEEK_SET);
	free(buf);
	free(ext);
	if (err) {
		if (mfd >= 0)
			close(mfd);
		return err;
	}
	return mfd;
}

/* ---- the kept copies (copy_cache.h) ---- */

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cp_copy_cache kept;
static bool kept_ready;
static __u64 kept_max_bytes = CP_COPY_CACHE_BYTES;

/* Under kept_lock. */
static void kept_init(void)
{
	if (!kept_ready)
		cp_copy_cache_init(&kept, CP_COPY_CACHE_ENTRIES, kept_max_bytes);
	kept_ready = true;
}

static void close_all(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

int cp_tf_key(int fd, struct cp_copy_key *key)
{
	struct cp_tf_stat st;

	return fstat_fd(fd, &st, key);
}

/*
 * A descriptor of its own on the kept copy @mfd (not a dup(): no file
 * offset shared with another reader), read-only; the seals are the copy's.
 */
static int reopen_copy(int mfd)
{
	char buf[64];
	int fd;

	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", mfd);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * A descriptor on the kept copy of @key, or -1: a miss, counted when the
 * caller copies on it (@copies).
 */
static int kept_find(const struct cp_copy_key *key, bool copies)
{
	int fd;

	pthread_mutex_lock(&kept_lock);
	kept_init();
	fd = copies ? cp_copy_cache_find(&kept, key) : cp_copy_cache_probe(&kept, key);
	if (fd >= 0)
		fd = reopen_copy(fd);
	pthread_mutex_unlock(&kept_lock);
	return fd < 0 ? -1 : fd;
}

/* Keeps a descriptor on @mfd, the copy of @key, when it fits; evicts the least recently used. */
static void kept_put(int mfd, const struct cp_copy_key *key)
{
	int out[CP_COPY_CACHE_ENTRIES], slot, own;
	struct stat s;
	size_t n = 0;

	if (fstat(mfd, &s))
		return;
	pthread_mutex_lock(&kept_lock);
	kept_init();
	/* its pages as the kernel counts them: data only, holes cost nothing */
	slot = cp_copy_cache_make_room(&kept, (__u64)s.st_blocks * 512, out, &n);
	own = slot >= 0 ? fcntl(mfd, F_DUPFD_CLOEXEC, 0) : -1;
	if (own >= 0)
		cp_copy_cache_put(&kept, slot, key, own, (__u64)s.st_blocks * 512);
	pthread_mutex_unlock(&kept_lock);
	close_all(out, n);
}

size_t cp_tf_kept_drop(void)
{
	int out[CP_COPY_CACHE_ENTRIES];
	size_t n;

	pthread_mutex_lock(&kept_lock);
	kept_init();
	n = cp_copy_cache_drain(&kept, out);
	pthread_mutex_unlock(&kept_lock);
	close_all(out, n);
	return n;
}

void cp_tf_kept_limit(__u64 max_memory_bytes)
{
	pthread_mutex_lock(&kept_lock);
	kept_max_bytes = max_memory_bytes ? max_memory_bytes / 2 : CP_COPY_CACHE_BYTES;
	if (kept_ready)
		kept.max_bytes = kept_max_bytes;
	pthread_mutex_unlock(&kept_lock);
}

__u64 cp_tf_copy_bytes(int fd)
{
	struct stat st;

	if (fd < 0 || fcntl(fd, F_GET_SEALS) < 0 || fstat(fd, &st))
		return 0;
	return (__u64)st.st_blocks * 512;
}

__u64 cp_tf_kept_max_bytes(void)
{
	__u64 max;

	pthread_mutex_lock(&kept_lock);
	max = kept_max_bytes;
	pthread_mutex_unlock(&kept_lock);
	return max;
}

void cp_tf_kept_stats(struct cp_copy_stats *out)
{
	pthread_mutex_lock(&kept_lock);
	kept_init();
	*out = kept.stats;
	pthread_mutex_unlock(&kept_lock);
}

int cp_tf_copy_keyed(int fd, __u64 size, bool no_code, struct cp_copy_key *key,
		     enum cp_tf_refusal *why)
{
	struct cp_copy_key before = {0}, after = {0};
	int mfd;

	*why = CP_TF_OK;
	/* the key of the very descriptor copied: what the tenant holds now, not a name */
	if (cp_tf_key(fd, &before) || before.size != size)
		before.ino = 0;
	before.no_code = no_code;
	mfd = kept_find(&before, true);
	if (mfd >= 0)
		goto out;
	/*
	 * past --max-memory the kept copies are not let go here: the snapshots
	 * that map them would hold them still (a shrink lets them go)
	 */
	mfd = copy_now(fd, size, no_code, why);
	if (mfd < 0) {
		cp_tf_count(*why);
		return mfd;
	}
	pthread_mutex_lock(&kept_lock);
	kept.stats.made++;
	pthread_mutex_unlock(&kept_lock);
	/* kept only when the file did not change while it was copied */
	if (before.ino && !cp_tf_key(fd, &after))
		after.no_code = no_code;
	if (before.ino && cp_copy_key_equal(&before, &after))
		kept_put(mfd, &before);
	else
		before.ino = 0;
out:
	if (key)
		*key = before;
	return mfd;
}

int cp_tf_kept_copy(const struct cp_copy_key *key)
{
	int mfd = key->ino ? kept_find(key, false) : -1;

	return mfd < 0 ? -ENOENT : mfd;
}

int cp_tf_copy(int fd, __u64 size, enum cp_tf_refusal *why)
{
	return cp_tf_copy_keyed(fd, size, false, NULL, why);
}

int cp_tf_read_part(int fd, __u64 off, __u64 len, void *dst, enum cp_tf_refusal *why)
{
	struct cp_copy_range *ext = malloc(CP_MAX_COPY_EXTENTS * sizeof(*ext));
	off_t pos = lseek(fd, 0, SEEK_CUR); /* the caller's, put back: the extents seek */
	size_t n = 0;
	int err = 0;

	*why = CP_TF_OK;
	if (!ext) {
		*why = CP_TF_DENIED;
		return -ENOMEM;
	}
	if (len)
		n = data_extents(fd, off, off + len, ext);
	if (!cp_self_mem_admit(extent_bytes(ext, n))) {
		err = -ENOMEM;
		*why = CP_TF_MEMORY;
	}
	for (size_t i = 0; i < n && !err; i++) {
		for (__u64 done = 0; done < ext[i].len && !err;) {
			ssize_t r = pread(fd, (char *)dst + (ext[i].off - off) + done,
					  ext[i].len - done, (off_t)(ext[i].off + done));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				err = r < 0 ? -errno : -EIO;
				*why = r < 0 ? cp_tf_errno_refusal(errno) : CP_TF_SHRUNK;
			}
			done += r > 0 ? (__u64)r : 0;
		}
	}
	if (pos >= 0)
		lseek(fd, pos, SEEK_SET);
	free(ext);
	if (err)
		cp_tf_count(*why);
	return err;
}

int cp_tf_open_copy(const struct cp_tf_where *w, const struct cp_tf_want *want,
		    struct cp_tf_stat *st, enum cp_tf_refusal *why)
{
	int fd = cp_tf_open(w, want, st, why), mfd;

	if (fd < 0)
		return fd;
	mfd = cp_tf_copy_keyed(fd, st->size, want->no_code, NULL, why);
	close(fd);
	return mfd;
}

__u64 cp_tf_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	return (__u64)rl.rlim_cur;
}
