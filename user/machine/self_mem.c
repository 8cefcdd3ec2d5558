// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiler's memory as the kernel counts it (self_mem.h). */
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
#include <sys/wait.h>

#include "machine/self_mem.h"
#include "util/clock.h"

bool cp_self_mem_alone(pid_t self, pid_t command, const pid_t *pids, const pid_t *ppids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((pids[i] != self && ppids[i] != self) || (command > 0 && pids[i] == command))
			return false;
	return true;
}

bool cp_self_mem_fits(__u64 held, __u64 bytes, __u64 limit)
{
	return !limit || (held <= limit && bytes <= limit - held);
}

__u64 cp_self_mem_copy_limit(__u64 limit)
{
	return limit - limit / CP_SELF_MEM_HEADROOM_DIV;
}

bool cp_self_mem_scan_due(__u64 last_scan_ns, __u64 now_ns, __u64 estimate, __u64 limit)
{
	return !last_scan_ns || now_ns < last_scan_ns ||
	       now_ns - last_scan_ns >= CP_SELF_MEM_SCAN_NS || (limit && estimate > limit);
}

const char *cp_self_mem_counter_name(enum cp_self_mem_counter c)
{
	switch (c) {
	case CP_SELF_MEM_CGROUP_V2:
		return "cgroup memory.current";
	case CP_SELF_MEM_CGROUP_V1:
		return "cgroup v1 memory.usage_in_bytes";
	default:
		return "RssAnon+RssFile and memfds";
	}
}

/* ---- reading ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool chosen;
	enum cp_self_mem_counter counter;
	char dir[PATH_MAX]; /* the cgroup's directory */
	__u64 peak;	    /* the highest reading */
	__u64 last;	    /* the last reading */
	__u64 since;	    /* admitted since it */
	bool read_once;
	__u64 limit;
	pid_t command; /* the child that is a target (-- CMD); 0: none */
	pid_t worker;  /* the parse worker at work beside the drain; 0: none */
	/* the describe servers, counted by their own pages; 0: none */
	pid_t server[CP_SELF_MEM_SERVERS];
	/* /proc: the memfds and children, counted at the last scan */
	__u64 scan_ns;	  /* when; 0: never */
	__u64 scan_memfd; /* the memfds' bytes then */
	__u64 scan_kids;  /* the children's */
	__u64 scan_since; /* admitted since (copies made since are memfds not counted) */
	int status_fd;	  /* /proc/self/status held open; < 0: not yet, or failed */
	bool status_tried;
} m;

static int read_u64(const char *dir, const char *name, __u64 *out)
{
	char path[PATH_MAX + 64];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EIO;
	*out = v;
	return 0;
}

/* The value of @keys (NULL-ended) @line ("key value", "key: value kB") names, into @vals. */
static void parse_key(const char *line, const char *const *keys, __u64 *vals)
{
	unsigned long long v;
	char key[64];

	if (sscanf(line, "%63[^: ]%*[: ]%llu", key, &v) != 2)
		return;
	for (int i = 0; keys[i]; i++)
		if (!strcmp(key, keys[i]))
			vals[i] = v;
}

/* The values of @keys (NULL-ended) in a "key value" file (memory.stat, status). */
static int read_keys(const char *path, const char *const *keys, __u64 *vals)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		parse_key(line, keys, vals);
	fclose(f);
	return 0;
}

/*
 * @keys of /proc/self/status, held open and read again with one pread (it
 * is read ten times a second near the limit); opened again by path if that
 * fails. Under the lock.
 */
static int read_own_status(const char *const *keys, __u64 *vals)
{
	char buf[8192], *line, *save;
	size_t len = 0;
	ssize_t n;

	if (!m.status_tried) {
		m.status_tried = true;
		m.status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	}
	if (m.status_fd < 0)
		return read_keys("/proc/self/status", keys, vals);
	while (len < sizeof(buf) - 1 &&
	       (n = pread(m.status_fd, buf + len, sizeof(buf) - 1 - len, (off_t)len)) > 0)
		len += (size_t)n;
	if (!len)
		return read_keys("/proc/self/status", keys, vals);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		parse_key(line, keys, vals);
	return 0;
}

static pid_t parent_of(pid_t pid)
{
	const char *const keys[] = {"PPid", NULL};
	__u64 ppid = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	read_keys(path, keys, &ppid);
	return (pid_t)ppid;
}

/* Whether m.dir holds only this process and its children. */
static bool cgroup_alone(void)
{
	pid_t pids[CP_SELF_MEM_MAX_PROCS], ppids[CP_SELF_MEM_MAX_PROCS];
	char path[PATH_MAX + 64];
	size_t n = 0;
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", m.dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fscanf(f, "%ld", &pid) == 1) {
		if (n == CP_SELF_MEM_MAX_PROCS) {
			fclose(f);
			return false;
		}
		pids[n] = (pid_t)pid;
		ppids[n] = parent_of((pid_t)pid);
		n++;
	}
	fclose(f);
	return n && cp_self_mem_alone(getpid(), m.command, pids, ppids, n);
}

/* Whether @dir/@file exists: the cgroup @dir has a memory controller. */
static bool has(const char *dir, const char *file)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return !access(path, R_OK);
}

/* The memory cgroup this process is alone in, from /proc/self/cgroup; else the /proc count. */
static void choose(void)
{
	static const char *const v2_roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	char line[PATH_MAX], *path;
	FILE *f = fopen("/proc/self/cgroup", "re");

	m.chosen = true;
	m.counter = CP_SELF_MEM_PROC;
	while (f && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':');

		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path || path[1] != '/')
			continue;
		*ctl = '\0';
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (!strcmp(path, "/"))
			continue;		     /* the root: the whole host's */
		if (!strcmp(line, "0") && !ctl[1]) { /* "0::PATH": the unified hierarchy */
			for (int i = 0; i < 2; i++) {
				snprintf(m.dir, sizeof(m.dir), "%s%s", v2_roots[i], path);
				if (has(m.dir, "memory.current") && cgroup_alone()) {
					m.counter = CP_SELF_MEM_CGROUP_V2;
					goto out;
				}
			}
		} else if (strstr(ctl + 1, "memory")) {
			snprintf(m.dir, sizeof(m.dir), "/sys/fs/cgroup/memory%s", path);
			if (has(m.dir, "memory.usage_in_bytes") && cgroup_alone()) {
				m.counter = CP_SELF_MEM_CGROUP_V1;
				goto out;
			}
		}
	}
out:
	if (f)
		fclose(f);
}

static int read_cgroup(struct cp_self_mem *out)
{
	static const char *const v2[] = {"file", "shmem", NULL};
	static const char *const v1[] = {"total_cache", "total_shmem", NULL};
	bool is_v2 = m.counter == CP_SELF_MEM_CGROUP_V2;
	char path[PATH_MAX + 64];
	__u64 cur, peak = 0, st[2] = {0, 0};
	int err = read_u64(m.dir, is_v2 ? "memory.current" : "memory.usage_in_bytes", &cur);

	if (err)
		return err;
	read_u64(m.dir, is_v2 ? "memory.peak" : "memory.max_usage_in_bytes", &peak);
	snprintf(path, sizeof(path), "%s/memory.stat", m.dir);
	read_keys(path, is_v2 ? v2 : v1, st);
	/* page cache the kernel may reclaim is not the profiler's to shed */
	if (st[0] > st[1] && st[0] - st[1] < cur)
		cur -= st[0] - st[1];
	out->bytes = cur;
	out->peak_bytes = peak;
	return 0;
}

struct memfd_seen {
	__u64 ino, bytes;
};

static int by_ino(const void *a, const void *b)
{
	const struct memfd_seen *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void note_memfd(struct memfd_seen **v, size_t *n, size_t *cap, const struct stat *st)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct memfd_seen *nv = realloc(*v, c * sizeof(**v));

		if (!nv)
			return;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = (struct memfd_seen){(__u64)st->st_ino, (__u64)st->st_blocks * 512};
}

/*
 * memfd_bytes()' buffer for /proc/self/maps, ~65 KiB under -p (it runs
 * under lock): stdio's own would be 1 KiB, a read() per kilobyte every scan.
 */
static char maps_buf[64 * 1024];

/*
 * The memfds the process of /proc/@who holds open ("self", or a symbols
 * server's pid: the copies it keeps parsed, libdw holding each one's
 * descriptor, which the profiler may have let go; its own pages alone,
 * Private_*, miss those two servers both map), into @v.
 */
static void note_open_memfds(const char *who, struct memfd_seen **v, size_t *n, size_t *cap)
{
	char dir[64], path[128], target[64];
	struct dirent *de;
	struct stat st;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%.24s/fd", who);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%.32s", dir, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len >= 7 && !strncmp(target, "/memfd:", 7) && !stat(path, &st))
			note_memfd(v, n, cap, &st);
	}
	if (d)
		closedir(d);
}

/*
 * Bytes in every memfd this process maps or holds open, or its symbols
 * servers hold, each counted once.
 */
static __u64 memfd_bytes(void)
{
	struct memfd_seen *v = NULL;
	size_t n = 0, cap = 0;
	char line[PATH_MAX + 128], path[PATH_MAX], pid[24];
	struct stat st;
	__u64 sum = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f)
		setvbuf(f, maps_buf, _IOFBF, sizeof(maps_buf));
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (!strstr(line, " /memfd:") || sscanf(line, "%llx-%llx", &lo, &hi) != 2)
			continue;
		snprintf(path, sizeof(path), "/proc/self/map_files/%llx-%llx", lo, hi);
		if (!stat(path, &st))
			note_memfd(&v, &n, &cap, &st);
	}
	if (f)
		fclose(f);
	note_open_memfds("self", &v, &n, &cap);
	for (unsigned int i = 0; i < CP_SELF_MEM_SERVERS; i++) {
		if (m.server[i] <= 0)
			continue;
		snprintf(pid, sizeof(pid), "%d", (int)m.server[i]);
		note_open_memfds(pid, &v, &n, &cap);
	}
	if (n)
		qsort(v, n, sizeof(*v), by_ino);
	for (size_t i = 0; i < n; i++)
		if (!i || v[i].ino != v[i - 1].ino)
			sum += v[i].bytes;
	free(v);
	return sum;
}

/* The values of @keys in /proc/@pid/@file, in kB, into @kb (zeroed first). */
static int pid_keys(const char *pid, const char *file, const char *const *keys, __u64 *kb)
{
	char path[64];

	for (int i = 0; keys[i]; i++)
		kb[i] = 0;
	snprintf(path, sizeof(path), "/proc/%s/%s", pid, file);
	return read_keys(path, keys, kb);
}

/*
 * Resident bytes of process @pid but shared memory's: RssAnon + RssFile of
 * /proc/PID/status, the kernel's counters of what smaps_rollup's Rss less
 * RssShmem counts by walking every page table (a millisecond a reading for
 * the profiler, ten readings a second: half its steady CPU time under -p).
 */
static int private_rss(const char *pid, __u64 *bytes)
{
	static const char *const keys[] = {"RssAnon", "RssFile", NULL};
	__u64 kb[2];
	int err = pid_keys(pid, "status", keys, kb);

	*bytes = err ? 0 : (kb[0] + kb[1]) * 1024;
	return err;
}

/*
 * The pages of the describe server (@pid) no other process maps:
 * Private_Clean + Private_Dirty of its smaps_rollup (a walk of its page
 * tables, once per scan). The pages of sealed copies it alone maps are
 * in them: counted again with the memfds (memfd_bytes() counts those it
 * holds open, once with the profiler's and the other server's), never
 * missed when the profiler let the copy go, nor when both servers map it
 * (shared then, in neither's Private_*). Over, never under.
 */
static int server_private(const char *pid, __u64 *bytes)
{
	static const char *const keys[] = {"Private_Clean", "Private_Dirty", NULL};
	__u64 kb[2];
	int err = pid_keys(pid, "smaps_rollup", keys, kb);

	*bytes = err ? 0 : (kb[0] + kb[1]) * 1024;
	return err;
}

/*
 * Whether child @pid is counted, its bytes in @b then: not the command of
 * -- CMD (a target), nor the parse worker (bounded by its RLIMIT_DATA);
 * the describe server by its own pages alone; any other by its resident
 * set.
 */
static bool child_counted(const char *pid, __u64 *b)
{
	int p = atoi(pid);

	for (unsigned int i = 0; i < CP_SELF_MEM_SERVERS; i++)
		if (m.server[i] > 0 && p == m.server[i])
			return !server_private(pid, b);
	if ((m.command > 0 && p == m.command) || (m.worker > 0 && p == m.worker))
		return false;
	return !private_rss(pid, b);
}

/* The bytes of this process's children (helpers it started), from each thread's list. */
static __u64 children_bytes(void)
{
	char path[PATH_MAX], pid[24];
	struct dirent *de;
	__u64 sum = 0, b;
	siginfo_t si;
	DIR *d;

	/* no child of any thread (waitid() sees every thread's; WNOWAIT reaps none): one call */
	if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT) &&
	    errno == ECHILD)
		return 0;
	d = opendir("/proc/self/task");

	while (d && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", de->d_name);
		f = fopen(path, "re");
		while (f && fscanf(f, "%23s", pid) == 1)
			if (child_counted(pid, &b))
				sum += b;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

/*
 * @own: this process's RssAnon + RssFile, read with the rest of its status.
 * The memfds and children are counted again when a scan is due (@scan, or
 * cp_self_mem_scan_due()); else they are the last scan's, plus every copy
 * admitted since: a copy is the only memfd made after the start
 * (machine/target_file.c asks cp_self_mem_admit() first), and one closed
 * since stays counted until the next scan. So the count is never below what a
 * scan would say.
 */
static int read_proc(struct cp_self_mem *out, __u64 own, bool scan)
{
	__u64 now = cp_now_ns();

	if (scan ||
	    cp_self_mem_scan_due(m.scan_ns, now, own + m.scan_memfd + m.scan_kids + m.scan_since,
				 m.limit)) {
		m.scan_memfd = memfd_bytes();
		m.scan_kids = children_bytes();
		m.scan_since = 0;
		m.scan_ns = now ? now : 1;
		out->scanned = true;
	}
	/* the memfds' pages, mapped or not, instead of the shared pages touched */
	out->memfd_bytes = m.scan_memfd + m.scan_since;
	out->bytes = own + out->memfd_bytes + m.scan_kids;
	return 0;
}

/* A reading: the memfds and children scanned when @scan, or when due (read_proc()). */
static int self_mem_read(struct cp_self_mem *out, bool scan)
{
	static const char *const keys[] = {"VmRSS", "VmHWM", "RssAnon", "RssFile", NULL};
	__u64 kb[4] = {0, 0, 0, 0};
	int err;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&lock);
	if (!m.chosen)
		choose();
	if (m.counter != CP_SELF_MEM_PROC && !cgroup_alone())
		m.counter = CP_SELF_MEM_PROC; /* another process joined: the cgroup is not ours */
	err = read_own_status(keys, kb);
	out->rss_bytes = kb[0] * 1024;
	out->hwm_bytes = kb[1] * 1024;
	out->counter = m.counter;
	if (m.counter != CP_SELF_MEM_PROC) {
		err = read_cgroup(out);
		out->scanned = true; /* the cgroup's count holds everything */
	} else if (!err) {
		err = read_proc(out, (kb[2] + kb[3]) * 1024, scan);
	}
	if (!err) {
		if (m.counter == CP_SELF_MEM_PROC && kb[1] * 1024 > out->peak_bytes)
			out->peak_bytes = kb[1] * 1024;
		if (out->bytes > m.peak)
			m.peak = out->bytes;
		if (m.peak > out->peak_bytes)
			out->peak_bytes = m.peak;
		m.last = out->bytes;
		m.since = 0;
		m.read_once = true;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

int cp_self_mem_read(struct cp_self_mem *out)
{
	return self_mem_read(out, false);
}

int cp_self_mem_scan(struct cp_self_mem *out)
{
	return self_mem_read(out, true);
}

void cp_self_mem_set_command(pid_t pid)
{
	pthread_mutex_lock(&lock);
	m.command = pid;
	pthread_mutex_unlock(&lock);
}

void cp_self_mem_set_worker(pid_t pid)
{
	pthread_mutex_lock(&lock);
	m.worker = pid;
	pthread_mutex_unlock(&lock);
}

void cp_self_mem_set_server(unsigned int slot, pid_t pid)
{
	pthread_mutex_lock(&lock);
	m.server[slot] = pid;
	pthread_mutex_unlock(&lock);
}

void cp_self_mem_set_limit(__u64 limit_bytes)
{
	pthread_mutex_lock(&lock);
	m.limit = limit_bytes;
	pthread_mutex_unlock(&lock);
}

__u64 cp_self_mem_room(void)
{
	__u64 room = UINT64_MAX;

	pthread_mutex_lock(&lock);
	if (m.limit)
		room = m.limit > m.last + m.since ? m.limit - (m.last + m.since) : 0;
	pthread_mutex_unlock(&lock);
	return room;
}

bool cp_self_mem_admit(__u64 bytes)
{
	struct cp_self_mem now;
	bool ok;

	pthread_mutex_lock(&lock);
	ok = m.read_once &&
	     cp_self_mem_fits(m.last + m.since, bytes, cp_self_mem_copy_limit(m.limit));
	if (ok || !m.limit) {
		m.since += bytes;
		m.scan_since += bytes;
	}
	pthread_mutex_unlock(&lock);
	if (ok || !m.limit)
		return true;
	/* near the limit, or never read: a fresh reading, the memfds scanned, decides */
	if (cp_self_mem_scan(&now))
		return true;
	pthread_mutex_lock(&lock);
	ok = cp_self_mem_fits(m.last + m.since, bytes, cp_self_mem_copy_limit(m.limit));
	if (ok) {
		m.since += bytes;
		m.scan_since += bytes;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}
