// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/cgroup and mountinfo parsing (pure; see proc_cgroup.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "machine/proc_cgroup.h"

#define CP_CONTAINER_HEX	64

/* Systemd scope names of container runtimes: "<prefix><64 hex>.scope". */
static const struct {
	const char *prefix;
	const char *runtime;
} scopes[] = {
	{ "docker-", "docker" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "libpod-", "podman" },
};

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The id of one path component [c, c + n), or NULL. */
static const char *component_id(const char *c, size_t n, const char **runtime)
{
	static const char suffix[] = ".scope";
	size_t sl = sizeof(suffix) - 1;

	if (n == CP_CONTAINER_HEX && all_hex(c, n)) {
		*runtime = "";
		return c;
	}
	if (n <= sl || memcmp(c + n - sl, suffix, sl) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		size_t pl = strlen(scopes[i].prefix);

		if (n == pl + CP_CONTAINER_HEX + sl && !memcmp(c, scopes[i].prefix, pl) &&
		    all_hex(c + pl, CP_CONTAINER_HEX)) {
			*runtime = scopes[i].runtime;
			return c + pl;
		}
	}
	return NULL;
}

bool cp_container_id(const char *path, char *id, const char **runtime)
{
	const char *end = path + strlen(path), *c, *found;

	id[0] = '\0';
	*runtime = "";
	/* from the leaf up: a pod's cgroup holds its containers' */
	while (end > path) {
		for (c = end; c > path && c[-1] != '/'; c--)
			;
		found = component_id(c, (size_t)(end - c), runtime);
		if (found) {
			memcpy(id, found, CP_CONTAINER_HEX);
			id[CP_CONTAINER_HEX] = '\0';
			return true;
		}
		end = c > path ? c - 1 : path;
	}
	*runtime = "";
	return false;
}

/* Copies the path [p, p + n) into @out, keeping its end when too long. */
static void copy_path(char *out, const char *p, size_t n)
{
	if (n >= CP_CGROUP_PATH_LEN) {
		p += n - (CP_CGROUP_PATH_LEN - 1);
		n = CP_CGROUP_PATH_LEN - 1;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

/* True when the controllers field [c, e) is systemd's named hierarchy. */
static bool is_systemd(const char *c, const char *e)
{
	return e - c == 12 && !memcmp(c, "name=systemd", 12);
}

int cp_cgroup_parse(const char *text, struct cp_cgroup_info *out)
{
	const char *line = text, *v1 = NULL, *v2 = NULL;
	size_t v1_len = 0, v2_len = 0;
	bool any = false, v1_systemd = false;

	memset(out, 0, sizeof(*out));
	out->runtime = "";
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		/* "ID:CONTROLLERS:PATH" */
		if (c2 && c2 + 1 < end && c2[1] == '/') {
			const char *p = c2 + 1;
			size_t n = (size_t)(end - p);
			bool systemd = is_systemd(c1 + 1, c2);

			any = true;
			if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
				v2 = p;
				v2_len = n;
			} else if (n > 1 && (!v1 || (systemd && !v1_systemd))) {
				v1 = p;
				v1_len = n;
				v1_systemd = systemd;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!any)
		return -EINVAL;
	if (v2 && (v2_len > 1 || !v1)) {
		copy_path(out->path, v2, v2_len);
		out->v2 = true;
	} else {
		copy_path(out->path, v1, v1_len);
	}
	cp_container_id(out->path, out->container_id, &out->runtime);
	return 0;
}

int cp_cgroup2_mount(const char *text, char *out, size_t sz)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPER" */
		const char *tok = line, *mp = NULL, *te;
		size_t mp_len = 0;
		bool after_sep = false;

		for (int field = 0; tok < end; field++, tok = te + 1) {
			te = memchr(tok, ' ', (size_t)(end - tok));
			if (!te)
				te = end;
			if (field == 4) {
				mp = tok;
				mp_len = (size_t)(te - tok);
			} else if (field > 5 && te - tok == 1 && *tok == '-') {
				after_sep = true;
			} else if (after_sep) {
				if (mp && te - tok == 7 && !memcmp(tok, "cgroup2", 7)) {
					if (mp_len >= sz)
						return -ENAMETOOLONG;
					memcpy(out, mp, mp_len);
					out[mp_len] = '\0';
					return 0;
				}
				break;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int cp_cgroup_dir(const char *mount, const char *path, char *out, size_t sz)
{
	size_t ml = strlen(mount);
	int n;

	if (path[0] != '/')
		return -EINVAL;
	for (const char *c = path; (c = strstr(c, "..")); c += 2)
		if (c[-1] == '/' && (c[2] == '/' || c[2] == '\0'))
			return -EINVAL;
	if (!strncmp(path, mount, ml) && (path[ml] == '/' || path[ml] == '\0'))
		n = snprintf(out, sz, "%s", path);
	else
		n = snprintf(out, sz, "%s%s", mount, strcmp(path, "/") ? path : "");
	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}
