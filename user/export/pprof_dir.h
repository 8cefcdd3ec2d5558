/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --pprof-dir DIR: each interval, the pprof profile of that interval (the
 * rolling window's epoch that just closed, profile/rolling.h) as
 * DIR/cacheperf-<unix seconds>-<sequence>.pb.gz, for an agent that pushes
 * new files to Pyroscope or Parca (docs/pprof.md). A file is written under
 * a temporary name that does not end in .pb.gz and renamed into place
 * (util/out_file.h), so the agent never reads half of one. At most
 * --pprof-keep files stay: past that the oldest of ours (by the time and
 * sequence in their names) are removed. Ours are the files this run put
 * there, and those of earlier runs found at the first interval (named as
 * ours, regular, of this profiler's user, one link): their device and
 * inode are recorded, and a file is removed only while its name still
 * holds that inode, so no file of another user (a tenant's, in a directory
 * it can write) is ever counted or removed, whatever its name. A name
 * taken by something not ours is skipped for the next sequence. Issue
 * labels are those of the rolling window's classification at that interval;
 * the stacks are the interval's (cp_profile.interval_stacks), and its
 * epoch's instructions that none starts with, as stacks of one frame.
 */
#ifndef CP_PPROF_DIR_H
#define CP_PPROF_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/types.h>

#include "classify/classify.h"
#include "profile/profile.h"

#define CP_PPROF_KEEP_DEFAULT 20 /* --pprof-keep */
#define CP_PPROF_KEEP_MAX     100000
#define CP_PPROF_NAME_LEN     64
#define CP_PPROF_NAME_TRIES   8 /* names tried for one profile when others' nodes hold them */

/* A file of ours in the directory: its name's time and sequence, and what it is. */
struct cp_pprof_file {
	__u64 unix_s, seq;
	dev_t dev;
	ino_t ino;
};

struct cp_pprof_dir {
	const char *dir;
	unsigned int keep;
	__u64 seq;		     /* of the next file */
	bool scanned;		     /* earlier runs' files looked for */
	struct cp_pprof_file *files; /* ours, at most keep after each interval */
	size_t nr, cap;
};

/*
 * Whether profiles can be written in @dir: a directory (not a symbolic
 * link) where a file can be created. 0, or < 0 with @err saying why.
 */
int cp_pprof_dir_check(const char *dir, char *err, size_t err_sz);

/* Pure: "cacheperf-<unix_s>-<seq>.pb.gz" into @buf. */
void cp_pprof_dir_name(__u64 unix_s, __u64 seq, char *buf, size_t sz);

/* Pure: whether @name is one of ours (as cp_pprof_dir_name() writes them), its time and sequence.
 */
bool cp_pprof_dir_parse(const char *name, __u64 *unix_s, __u64 *seq);

/*
 * Pure: whether @st, met at one of our names at the first interval, is a
 * file of an earlier run: regular, of the profiler's effective user @euid,
 * with one link (not a link to a file made elsewhere).
 */
bool cp_pprof_dir_adoptable(const struct stat *st, uid_t euid);

/* Pure: whether the name of @f still holds it (@st, not following a link), of user @euid. */
bool cp_pprof_dir_still_ours(const struct cp_pprof_file *f, const struct stat *st, uid_t euid);

/*
 * Pure: which of @n names (ours, parsed into @unix_s and @seq) go so that
 * @keep stay: the oldest, by time then sequence. Sets @drop[i]; returns
 * how many.
 */
size_t cp_pprof_dir_prune_plan(const __u64 *unix_s, const __u64 *seq, size_t n, unsigned int keep,
			       bool *drop);

/*
 * The profile of the interval that just closed into @d, then the oldest
 * files removed. Its issue labels are @issues (NULL: none), the rolling
 * window's every serious issue (export/outputs.h classifies it once for
 * every output of the interval). 0, or < 0 with @err (nothing to write,
 * before the first rotation, is 0).
 */
int cp_pprof_dir_interval(struct cp_pprof_dir *d, struct cp_profile *p,
			  const struct cp_classification *issues, char *err, size_t err_sz);

/* Frees what @d recorded (not its files). */
void cp_pprof_dir_free(struct cp_pprof_dir *d);

#endif /* CP_PPROF_DIR_H */
