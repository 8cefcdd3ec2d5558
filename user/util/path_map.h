/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the files a recording names are now (`report --path-map OLD=NEW`,
 * like perf's --symfs but per prefix): a recording made on another machine,
 * or of a binary built in another directory, is symbolized from the copy
 * here; the build-id check still tells a wrong copy. Pure.
 */
#ifndef CP_PATH_MAP_H
#define CP_PATH_MAP_H

#include <stddef.h>

#define CP_MAX_PATH_MAPS 16

struct cp_path_map {
	unsigned int nr;
	struct {
		const char *from; /* absolute, no trailing '/' (but "/" itself) */
		size_t from_len;
		const char *to;
	} e[CP_MAX_PATH_MAPS];
};

/*
 * Adds "OLD=NEW" (@arg is kept, not copied; a trailing '/' of OLD is
 * ignored). Returns 0, or -EINVAL with a sentence in @err: no '=', OLD not
 * absolute, NEW empty, more than CP_MAX_PATH_MAPS.
 */
int cp_path_map_add(struct cp_path_map *m, char *arg, char *err, size_t err_sz);

/*
 * @path as the first entry whose OLD is @path or a directory above it maps
 * it, in @buf; @path itself when none does (or @m is NULL). NULL when the
 * mapped path does not fit in @buf.
 */
const char *cp_path_map_apply(const struct cp_path_map *m, const char *path, char *buf, size_t sz);

#endif /* CP_PATH_MAP_H */
