/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile for other tools (docs/pprof.md): --pprof FILE, a
 * gzip-compressed pprof profile (proto/profile.proto), and --folded FILE,
 * collapsed stacks, each of a whole run at its end or of a recording
 * (report FILE); export/pprof_dir.h writes one profile per interval. Their
 * values are the source's measures (export/measures.h), their stacks and
 * labels export/export_stack.h's. Files are written as the reports are
 * (util/out_file.h: mode 0600, a temporary file renamed into place).
 */
#ifndef CP_EXPORT_H
#define CP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "classify/classify.h"
#include "export/export_stack.h"
#include "profile/profile.h"
#include "util/out_file.h"

/*
 * The gzipped pprof profile of the stacks of @w in a new buffer @*gz (free()
 * it): @p's source says the sample types, @issues (NULL: none) the issue
 * labels; it started at @time_ns (ns since the epoch, 0: unknown) and
 * lasted @duration_ns. 0, or a negative errno.
 */
int cp_export_pprof(struct cp_profile *p, const struct cp_classification *issues,
		    struct cp_stack_walk w, __s64 time_ns, __s64 duration_ns, __u8 **gz,
		    size_t *len);

/*
 * Writes @len bytes at @data to @path (0600, atomically; util/out_file.h),
 * with what was put in place in @id (may be NULL). 0 or < 0 with @err.
 */
int cp_export_file(const char *path, const __u8 *data, size_t len, struct cp_out_id *id, char *err,
		   size_t err_sz);

/*
 * --pprof: the pprof profile of the whole run of @p, its issues @issues
 * (NULL: none) labelling the samples, to @path; @live: a live run, whose
 * time of day is known. 0, or < 0 with @err naming the file not written.
 */
int cp_export_pprof_file(struct cp_profile *p, const struct cp_classification *issues,
			 const char *path, bool live, char *err, size_t err_sz);

/* --folded: the collapsed stacks of the whole run to @path ("-": stdout); as above. */
int cp_export_folded_file(struct cp_profile *p, const struct cp_classification *issues,
			  const char *path, char *err, size_t err_sz);

#endif /* CP_EXPORT_H */
