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
#include "report/profile_report.h"
#include "report/summary_out.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/out_file.h"

#define PREFIX "cacheperf-"
#define SUFFIX ".pb.gz"

int cp_pprof_dir_check(const char *dir, char *err, size_t err_sz)
{
	char probe[PATH_MAX];
	struct stat st;

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
	return cp_out_file_try(probe, err, err_sz);
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

struct ours {
	char (*names)[CP_PPROF_NAME_LEN];
	__u64 *unix_s, *seq;
	size_t nr, cap;
};

static int note_ours(struct ours *o, const char *name, __u64 t, __u64 s)
{
	size_t cap = o->cap;

	if (o->nr == o->cap &&
	    (cp_grow((void **)&o->names, &cap, o->nr, sizeof(*o->names), 32) ||
	     (cap = o->cap, cp_grow((void **)&o->unix_s, &cap, o->nr, sizeof(*o->unix_s), 32)) ||
	     (cap = o->cap, cp_grow((void **)&o->seq, &cap, o->nr, sizeof(*o->seq), 32))))
		return -ENOMEM;
	o->cap = cap;
	snprintf(o->names[o->nr], CP_PPROF_NAME_LEN, "%s", name);
	o->unix_s[o->nr] = t;
	o->seq[o->nr++] = s;
	return 0;
}

/* Removes our oldest files in @d->dir beyond @d->keep. 0 or a negative errno. */
static int prune(struct cp_pprof_dir *d)
{
	struct ours o = {0};
	struct dirent *de;
	DIR *dir = opendir(d->dir);
	bool *drop = NULL;
	int ret = 0;
	__u64 t, s;

	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir)))
		if (strlen(de->d_name) < CP_PPROF_NAME_LEN &&
		    cp_pprof_dir_parse(de->d_name, &t, &s))
			ret = note_ours(&o, de->d_name, t, s);
	if (!ret && o.nr > d->keep) {
		drop = calloc(o.nr, sizeof(*drop));
		if (!drop)
			ret = -ENOMEM;
		else
			cp_pprof_dir_prune_plan(o.unix_s, o.seq, o.nr, d->keep, drop);
		for (size_t i = 0; drop && i < o.nr; i++)
			/* by name in the directory opened: a path swapped meanwhile cannot redirect
			 * it */
			if (drop[i] && unlinkat(dirfd(dir), o.names[i], 0) && errno != ENOENT)
				ret = -errno;
	}
	closedir(dir);
	free(drop);
	free(o.names);
	free(o.unix_s);
	free(o.seq);
	return ret;
}

int cp_pprof_dir_interval(struct cp_pprof_dir *d, struct cp_profile *p,
			  const struct cp_geometry *geo, const struct cp_classify_cfg *cfg,
			  char *err, size_t err_sz)
{
	const struct cp_insn_store *epoch;
	struct cp_interval_stacks is;
	struct cp_classify_cfg all = *cfg;
	char name[CP_PPROF_NAME_LEN], path[PATH_MAX];
	struct cp_summary sum;
	__u64 start_ns, end_ns, wall_ns;
	__u8 *gz = NULL;
	size_t len;
	int ret;

	epoch = p->roll ? cp_rolling__last(p->roll, &start_ns, &end_ns) : NULL;
	if (!epoch)
		return 0;
	/* every serious issue labels its instructions, not only the report's top */
	all.top = CP_SUMMARY_ALL_ISSUES;
	ret = cp_profile__summary(p, geo, &all, &sum);
	if (ret) {
		snprintf(err, err_sz, "--pprof-dir: cannot classify the window: %s",
			 strerror(-ret));
		return ret;
	}
	wall_ns = cp_wall_ns_of(start_ns);
	is = (struct cp_interval_stacks){.stacks = p->interval_stacks, .epoch = epoch};
	ret = cp_export_pprof(p, &sum.issues, cp_stack_walk_of_interval(&is), (__s64)wall_ns,
			      (__s64)(end_ns - start_ns), &gz, &len);
	cp_summary_free(&sum);
	if (ret) {
		snprintf(err, err_sz, "--pprof-dir: cannot make the profile: %s", strerror(-ret));
		return ret;
	}
	cp_pprof_dir_name(wall_ns / 1000000000ull, d->seq++, name, sizeof(name));
	if (snprintf(path, sizeof(path), "%s/%s", d->dir, name) >= (int)sizeof(path)) {
		free(gz);
		snprintf(err, err_sz, "--pprof-dir %s: path too long", d->dir);
		return -ENAMETOOLONG;
	}
	ret = cp_export_file(path, gz, len, err, err_sz);
	free(gz);
	if (!ret && (ret = prune(d)))
		snprintf(err, err_sz, "--pprof-dir %s: cannot remove the oldest profiles: %s",
			 d->dir, strerror(-ret));
	return ret;
}
