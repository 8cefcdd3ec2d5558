// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/path_map.h"

int cp_path_map_add(struct cp_path_map *m, char *arg, char *err, size_t err_sz)
{
	char *eq = strchr(arg, '=');
	size_t len;

	if (!eq || eq == arg || arg[0] != '/' || !eq[1]) {
		snprintf(err, err_sz, "--path-map: '%s' is not OLD=NEW with an absolute OLD", arg);
		return -EINVAL;
	}
	if (m->nr == CP_MAX_PATH_MAPS) {
		snprintf(err, err_sz, "--path-map: at most %d of them", CP_MAX_PATH_MAPS);
		return -EINVAL;
	}
	*eq = '\0';
	len = strlen(arg);
	while (len > 1 && arg[len - 1] == '/')
		arg[--len] = '\0';
	m->e[m->nr].from = arg;
	m->e[m->nr].from_len = len;
	m->e[m->nr].to = eq + 1;
	m->nr++;
	return 0;
}

const char *cp_path_map_apply(const struct cp_path_map *m, const char *path, char *buf, size_t sz)
{
	/* "[vdso]", "[heap]" and the like name no file */
	for (unsigned int i = 0; m && path[0] == '/' && i < m->nr; i++) {
		const char *from = m->e[i].from;
		size_t n = m->e[i].from_len;
		int len;

		/* "/" maps every absolute path; else a whole component must match */
		if (n == 1 && from[0] == '/')
			n = 0;
		else if (strncmp(path, from, n) || (path[n] && path[n] != '/'))
			continue;
		len = snprintf(buf, sz, "%s%s", m->e[i].to, path + n);
		return len < 0 || (size_t)len >= sz ? NULL : buf;
	}
	return path;
}
