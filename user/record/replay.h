/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A recording fed through the live profile's own
 * handlers (cp_profile__feed, __add_counts) into an offline profile, whose
 * report is then the live one. What /proc gave the run comes from the
 * recording: maps texts and thread stacks in file order, each applied where
 * the run read it. Mapped files are opened by path on this machine; each is
 * checked against its recorded build-id, and the instructions of a file
 * that changed or is missing are shown as "file+offset (why)" instead of
 * another binary's lines.
 */
#ifndef CP_REPLAY_H
#define CP_REPLAY_H

#include <stdio.h>
#include <linux/types.h>

#include "profile/profile.h"

#define CP_REPLAY_MAX_PROCS	4096	     /* processes with maps at once (exited let go) */
#define CP_REPLAY_MAX_TEXT	(256u << 20) /* maps text and parsed maps kept, all processes */
#define CP_REPLAY_MAX_BAD_FILES 1024

struct cp_replay_stats {
	__u64 sections;
	__u64 records;	 /* ring-buffer records fed */
	__u64 counters;	 /* counter entries added */
	__u64 maps;	 /* maps texts applied */
	__u64 bad_files; /* mapped files changed or missing since the recording */
	/* maps texts and thread stacks not kept: past the caps, none exited to let go */
	__u64 maps_skipped;
};

struct cp_replay;

/*
 * Reads the whole recording @f (named @name in messages) into an offline
 * profile; warnings about mapped files go to @warn (NULL: none); the files
 * the recording names are opened through @map (NULL: as named). Returns 0
 * with *@out set, or a negative errno with "@name: corrupt at byte N: ..."
 * and the like in @err.
 */
int cp_replay__run(FILE *f, const char *name, FILE *warn, const struct cp_path_map *map,
		   struct cp_replay **out, char *err, size_t err_sz);
struct cp_profile *cp_replay__profile(struct cp_replay *r);
void cp_replay__stats(const struct cp_replay *r, struct cp_replay_stats *out);
void cp_replay__free(struct cp_replay *r);

#endif /* CP_REPLAY_H */
