/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --record FILE: writes down, as the live profile consumes it, everything a
 * report is made of: the run's facts, ring-buffer records after the profile
 * handled them, each interval's counter entries, every /proc/PID/maps text
 * and thread-stack list the object table read (and the build-id of each
 * mapped file at its first appearance), and the end facts. Because records
 * go in after their handling, the maps a record made the profile read come
 * before it in the file, where replay.c needs them.
 */
#ifndef CP_RECORDER_H
#define CP_RECORDER_H

#include <stddef.h>

#include "profile/insn_store.h"
#include "objects/proc_maps.h"
#include "profile/run_facts.h"

struct cp_recorder;

/* Creates @path. NULL with @err set. */
struct cp_recorder *cp_recorder__open(const char *path, char *err, size_t err_sz);

/* /proc, with each maps text and thread-stack list that differs from the last written down. */
const struct cp_proc_source *cp_recorder__proc_source(struct cp_recorder *r);

/* The symbolizer's maps (a cp_maps_text_fn on a recorder): /proc, written down the same way. */
int cp_recorder__maps_text(void *ctx, pid_t pid, const char **text, size_t *len, __u64 *gen,
			   struct cp_maps_how *how);

void cp_recorder__info(struct cp_recorder *r, const struct cp_run_info *in);
void cp_recorder__event(struct cp_recorder *r, const void *data, size_t size);
void cp_recorder__counters(struct cp_recorder *r, const struct cp_insn *v, size_t n);
/* One interval's counts per (instruction, call stack), as a sample-stacks section. */
void cp_recorder__stacks(struct cp_recorder *r, const struct cp_stack_sample *v, size_t n);

/*
 * Writes @end and closes: the recording then replaces its path. Without
 * @end (a run that failed) the recording is discarded: a reader refuses one
 * with no end section anyway. Returns 0, or a negative errno with @err
 * naming the file and the first failure (a full disk...). NULL is a no-op.
 */
int cp_recorder__close(struct cp_recorder *r, const struct cp_run_end *end, char *err,
		       size_t err_sz);

#endif /* CP_RECORDER_H */
