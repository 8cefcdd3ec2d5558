// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One pprof profile per interval in a directory (see pprof_dir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"
#include "export/pprof_dir.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/out_file.h"

#define PREFIX "cacheperf-"
#define SUFFIX ".pb.gz"

/* Whether @ret refuses what holds a name (util/out_file.h): the next name may be free. */
static bool name_taken(int ret)
{
	return ret == -EPERM || ret == -ELOOP || ret == -EISDIR || ret == -EINVAL || ret == -EEXIST;
}

int cp_pprof_dir_check(const char *dir, char *err, size_t err_sz)
{
	char probe[PATH_MAX];
	struct stat st;
	int ret;

	if (lstat(dir, &st)) {
		snprintf(err, err_sz, "--pprof-dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, err_sz, "--pprof-dir %s: not a directory%s", dir,
			 S_ISLNK(st.st_mode) ? " (a symbolic link: name the directory itself)"
					     : "");
		return -ENOTDIR;
	}
	/* a file made and removed there, as each interval's will be */
	if (snprintf(probe, sizeof(probe), "%s/" PREFIX "check" SUFFIX, dir) >=
	    (int)sizeof(probe)) {
		snprintf(err, err_sz, "--pprof-dir %s: path too long", dir);
		return -ENAMETOOLONG;
	}
	ret = cp_out_file_try(probe, err, err_sz);
	/* its name held by another's node (planted): not fatal, each profile's name is judged */
	return name_taken(ret) ? 0 : ret;
}

void cp_pprof_dir_name(__u64 unix_s, __u64 seq, char *buf, size_t sz)
{
	snprintf(buf, sz, PREFIX "%llu-%06llu" SUFFIX, (unsigned long long)unix_s,
		 (unsigned long long)seq);
}

/* Decimal digits at *@s up to @stop into @v; advances *@s past them. */
static bool digits(const char **s, char stop, __u64 *v)
{
	const char *p = *s;

	*v = 0;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (~0ull - 9) / 10)
			return false;
		*v = *v * 10 + (__u64)(*p - '0');
	}
	if (*p != stop)
		return false;
	*s = p;
	return true;
}

bool cp_pprof_dir_parse(const char *name, __u64 *unix_s, __u64 *seq)
{
	const char *p = name;

	if (strncmp(p, PREFIX, strlen(PREFIX)))
		return false;
	p += strlen(PREFIX);
	if (!digits(&p, '-', unix_s))
		return false;
	p++;
	if (!digits(&p, '.', seq))
		return false;
	return !strcmp(p, SUFFIX);
}

size_t cp_pprof_dir_prune_plan(const __u64 *unix_s, const __u64 *seq, size_t n, unsigned int keep,
			       bool *drop)
{
	size_t dropped = 0;

	memset(drop, 0, n * sizeof(*drop));
	/* n is at most a few files past keep: the oldest left, found again each time */
	while (n - dropped > keep) {
		size_t old = n;

		for (size_t i = 0; i < n; i++)
			if (!drop[i] && (old == n || unix_s[i] < unix_s[old] ||
					 (unix_s[i] == unix_s[old] && seq[i] < seq[old])))
				old = i;
		drop[old] = true;
		dropped++;
	}
	return dropped;
}

bool cp_pprof_dir_adoptable(const struct stat *st, uid_t euid)
{
	return S_ISREG(st->st_mode) && st->st_uid == euid && st->st_nlink == 1;
}

bool cp_pprof_dir_still_ours(const struct cp_pprof_file *f, const struct stat *st, uid_t euid)
{
	return S_ISREG(st->st_mode) && st->st_uid == euid && st->st_dev == f->dev &&
	       st->st_ino == f->ino;
}

static int note_file(struct cp_pprof_dir *d, __u64 unix_s, __u64 seq, dev_t dev, ino_t ino)
{
	if (d->nr == d->cap && cp_grow((void **)&d->files, &d->cap, d->nr, sizeof(*d->files), 32))
		return -ENOMEM;
	d->files[d->nr++] = (struct cp_pprof_file){unix_s, seq, dev, ino};
	return 0;
}

/* Whether the name of @f in @dfd still holds it (AT_SYMLINK_NOFOLLOW: the name itself). */
static bool still_ours(int dfd, const struct cp_pprof_file *f)
{
	char name[CP_PPROF_NAME_LEN];
	struct stat st;

	cp_pprof_dir_name(f->unix_s, f->seq, name, sizeof(name));
	return !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       cp_pprof_dir_still_ours(f, &st, geteuid());
}

/* Records the files of earlier runs in @dfd (cp_pprof_dir_adoptable()). 0 or < 0. */
static int adopt(struct cp_pprof_dir *d, int dfd)
{
	int fd = dup(dfd), ret = 0;
	struct dirent *de;
	struct stat st;
	DIR *dir;
	__u64 t, s;

	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (!ret && (de = readdir(dir)))
		if (cp_pprof_dir_parse(de->d_name, &t, &s) &&
		    !fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    cp_pprof_dir_adoptable(&st, geteuid()))
			ret = note_file(d, t, s, st.st_dev, st.st_ino);
	closedir(dir);
	return ret;
}

/*
 * Forgets the files whose names no longer hold them (an agent took them),
 * then removes our oldest beyond @d->keep, each checked again just before.
 * 0 or a negative errno.
 */
static int prune(struct cp_pprof_dir *d, int dfd)
{
	char name[CP_PPROF_NAME_LEN];
	__u64 *unix_s, *seq;
	size_t n = 0, left = 0;
	bool *drop;
	int ret = 0;

	for (size_t i = 0; i < d->nr; i++)
		if (still_ours(dfd, &d->files[i]))
			d->files[n++] = d->files[i];
	d->nr = n;
	if (n <= d->keep)
		return 0;
	unix_s = calloc(n, sizeof(*unix_s));
	seq = calloc(n, sizeof(*seq));
	drop = calloc(n, sizeof(*drop));
	if (!unix_s || !seq || !drop) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		unix_s[i] = d->files[i].unix_s;
		seq[i] = d->files[i].seq;
	}
	cp_pprof_dir_prune_plan(unix_s, seq, n, d->keep, drop);
	for (size_t i = 0; i < n; i++) {
		if (!drop[i]) {
			d->files[left++] = d->files[i];
			continue;
		}
		/* by name in the directory opened, and only while the name is still ours */
		cp_pprof_dir_name(d->files[i].unix_s, d->files[i].seq, name, sizeof(name));
		if (still_ours(dfd, &d->files[i]) && unlinkat(dfd, name, 0) && errno != ENOENT &&
		    !ret)
			ret = -errno;
	}
	d->nr = left;
out:
	free(unix_s);
	free(seq);
	free(drop);
	return ret;
}

/*
 * Writes @gz as our next file in @d (the first name not held by another's
 * node) and records it. 0 or < 0 with @err.
 */
static int put_profile(struct cp_pprof_dir *d, __u64 unix_s, const __u8 *gz, size_t len, char *err,
		       size_t err_sz)
{
	char name[CP_PPROF_NAME_LEN], path[PATH_MAX];
	struct cp_out_id id;
	int ret = 0;

	for (int i = 0; i < CP_PPROF_NAME_TRIES; i++) {
		__u64 seq = d->seq++;

		cp_pprof_dir_name(unix_s, seq, name, sizeof(name));
		if (snprintf(path, sizeof(path), "%s/%s", d->dir, name) >= (int)sizeof(path)) {
			snprintf(err, err_sz, "--pprof-dir %s: path too long", d->dir);
			return -ENAMETOOLONG;
		}
		ret = cp_export_file(path, gz, len, &id, err, err_sz);
		if (!ret && id.created && (ret = note_file(d, unix_s, seq, id.dev, id.ino)))
			snprintf(err, err_sz, "--pprof-dir %s: %s written, not remembered: %s",
				 d->dir, name, strerror(-ret));
		if (!ret || !name_taken(ret))
			return ret;
	}
	return ret;
}

int cp_pprof_dir_interval(struct cp_pprof_dir *d, struct cp_profile *p,
			  const struct cp_classification *issues, char *err, size_t err_sz)
{
	const struct cp_insn_store *epoch;
	struct cp_interval_stacks is;
	__u64 start_ns, end_ns, wall_ns;
	__u8 *gz = NULL;
	size_t len;
	int ret, dfd;

	epoch = p->roll ? cp_rolling__last(p->roll, &start_ns, &end_ns) : NULL;
	if (!epoch)
		return 0;
	wall_ns = cp_wall_ns_of(start_ns);
	is = (struct cp_interval_stacks){.stacks = p->interval_stacks, .epoch = epoch};
	ret = cp_export_pprof(p, issues, cp_stack_walk_of_interval(&is), (__s64)wall_ns,
			      (__s64)(end_ns - start_ns), &gz, &len);
	if (ret) {
		snprintf(err, err_sz, "--pprof-dir: cannot make the profile: %s", strerror(-ret));
		return ret;
	}
	dfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : 0;
	if (!ret && !d->scanned) {
		ret = adopt(d, dfd);
		d->scanned = !ret;
	}
	if (ret) {
		snprintf(err, err_sz, "--pprof-dir %s: %s", d->dir, strerror(-ret));
		goto out;
	}
	ret = put_profile(d, wall_ns / 1000000000ull, gz, len, err, err_sz);
	if (!ret && (ret = prune(d, dfd)))
		snprintf(err, err_sz, "--pprof-dir %s: cannot remove the oldest profiles: %s",
			 d->dir, strerror(-ret));
out:
	if (dfd >= 0)
		close(dfd);
	free(gz);
	return ret;
}

void cp_pprof_dir_free(struct cp_pprof_dir *d)
{
	free(d->files);
	d->files = NULL;
	d->nr = d->cap = 0;
}
