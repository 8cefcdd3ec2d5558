// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/cgroup and mountinfo parsing (pure; see proc_cgroup.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "machine/proc_cgroup.h"

#define CP_CONTAINER_HEX 64

/*
 * Where each runtime puts its containers: the first path component (a
 * parent only root can create under), then up to CP_POD_LEVELS Kubernetes
 * QoS and pod levels, then "<prefix><64 hex><suffix>". Anchoring at the
 * root is what keeps a user's delegated subtree out: under
 * /user.slice/user-1000.slice/... the user names cgroups as it likes
 * (docker-<64 hex>.scope included), so rootless containers get no id.
 */
#define CP_POD_LEVELS 2

static const struct container_rule {
	const char *parent;
	bool pod_levels;
	const char *prefix, *suffix, *runtime;
} rules[] = {
	/* systemd cgroup driver: docker, podman, kubelet with its CRIs */
	{"system.slice", false, "docker-", ".scope", "docker"},
	{"machine.slice", false, "libpod-", ".scope", "podman"},
	{"kubepods.slice", true, "cri-containerd-", ".scope", "containerd"},
	{"kubepods.slice", true, "crio-", ".scope", "cri-o"},
	{"kubepods.slice", true, "docker-", ".scope", "docker"},
	/* cgroupfs driver: /docker/<id>, /kubepods/<qos>/pod<uid>/<id>, podman's parent */
	{"docker", false, "", "", ""},
	{"kubepods", true, "", "", ""},
	{"libpod_parent", false, "libpod-", "", "podman"},
};

struct comp {
	const char *p;
	size_t n;
};

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool comp_is(const struct comp *c, const char *s)
{
	return c->n == strlen(s) && !memcmp(c->p, s, c->n);
}

static bool comp_affix(const struct comp *c, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	return c->n >= pl + sl && !memcmp(c->p, prefix, pl) &&
	       !memcmp(c->p + c->n - sl, suffix, sl);
}

/* A Kubernetes level between the root and a container: QoS class or pod. */
static bool pod_level(const struct comp *c)
{
	return comp_affix(c, "kubepods-", ".slice") || comp_affix(c, "pod", "") ||
	       comp_is(c, "besteffort") || comp_is(c, "burstable");
}

/* The id in @c when it is "<prefix><64 hex><suffix>", else NULL. */
static const char *comp_id(const struct comp *c, const struct container_rule *r)
{
	size_t pl = strlen(r->prefix);

	if (c->n != pl + CP_CONTAINER_HEX + strlen(r->suffix) ||
	    !comp_affix(c, r->prefix, r->suffix) || !all_hex(c->p + pl, CP_CONTAINER_HEX))
		return NULL;
	return c->p + pl;
}

/* Splits @path (@len bytes) into at most @max components; their count. */
static size_t split(const char *path, size_t len, struct comp *c, size_t max)
{
	const char *p = path, *end = path + len;
	size_t n = 0;

	while (p < end && n < max) {
		const char *slash;

		while (p < end && *p == '/')
			p++;
		if (p == end)
			break;
		slash = memchr(p, '/', (size_t)(end - p));
		c[n].p = p;
		c[n].n = (size_t)((slash ? slash : end) - p);
		n++;
		p += c[n - 1].n;
	}
	return n;
}

/* The id by rule @r in components @c, or NULL. */
static const char *rule_id(const struct container_rule *r, const struct comp *c, size_t n)
{
	const char *id;

	if (!n || !comp_is(&c[0], r->parent))
		return NULL;
	for (size_t i = 1; i < n && i <= 1 + (r->pod_levels ? CP_POD_LEVELS : 0); i++) {
		id = comp_id(&c[i], r);
		if (id)
			return id;
		if (!r->pod_levels || !pod_level(&c[i]))
			return NULL;
	}
	return NULL;
}

bool cp_container_id(const char *path, size_t len, char *id, const char **runtime)
{
	struct comp c[2 + CP_POD_LEVELS];
	size_t n = split(path, len, c, sizeof(c) / sizeof(c[0]));

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const char *found = rule_id(&rules[i], c, n);

		if (found) {
			memcpy(id, found, CP_CONTAINER_HEX);
			id[CP_CONTAINER_HEX] = '\0';
			*runtime = rules[i].runtime;
			return true;
		}
	}
	id[0] = '\0';
	*runtime = "";
	return false;
}

bool cp_container_named(const char *id, const char *runtime, char *out_id, const char **out_runtime)
{
	out_id[0] = '\0';
	*out_runtime = "";
	if (strlen(id) != CP_CONTAINER_HEX || !all_hex(id, CP_CONTAINER_HEX))
		return false;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (strcmp(rules[i].runtime, runtime))
			continue;
		memcpy(out_id, id, CP_CONTAINER_HEX + 1);
		*out_runtime = rules[i].runtime;
		return true;
	}
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

void cp_cgroup_info_unknown(struct cp_cgroup_info *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->runtime = "";
}

/* A line of /proc/PID/cgroup text, "ID:CONTROLLERS:PATH": its start, colons (NULL: missing), end. */
struct cgroup_line {
	const char *start, *c1, *c2, *end;
};

/* The line at *@at into @l, *@at moved past it; false at the text's end. */
static bool next_cgroup_line(const char **at, struct cgroup_line *l)
{
	const char *nl;

	if (!*at || !**at)
		return false;
	nl = strchr(*at, '\n');
	l->start = *at;
	l->end = nl ? nl : *at + strlen(*at);
	l->c1 = memchr(l->start, ':', (size_t)(l->end - l->start));
	l->c2 = l->c1 ? memchr(l->c1 + 1, ':', (size_t)(l->end - l->c1 - 1)) : NULL;
	*at = nl ? nl + 1 : NULL;
	return true;
}

int cp_cgroup_parse(const char *text, struct cp_cgroup_info *out)
{
	const char *v1 = NULL, *v2 = NULL;
	size_t v1_len = 0, v2_len = 0;
	bool any = false, v1_systemd = false;
	struct cgroup_line l;

	cp_cgroup_info_unknown(out);
	for (const char *at = text; next_cgroup_line(&at, &l);) {
		if (l.c2 && l.c2 + 1 < l.end && l.c2[1] == '/') {
			const char *p = l.c2 + 1;
			size_t n = (size_t)(l.end - p);
			bool systemd = is_systemd(l.c1 + 1, l.c2);

			any = true;
			if (l.c1 - l.start == 1 && l.start[0] == '0' && l.c2 == l.c1 + 1) {
				v2 = p;
				v2_len = n;
			} else if (n > 1 && (!v1 || (systemd && !v1_systemd))) {
				v1 = p;
				v1_len = n;
				v1_systemd = systemd;
			}
		}
	}
	if (!any)
		return -EINVAL;
	out->v2_line = v2 != NULL;
	if (v2 && (v2_len > 1 || !v1)) {
		v1 = v2;
		v1_len = v2_len;
		out->v2 = true;
	}
	/* only v1 lines at their root ("1:cpu:/"): no path, as unknown */
	if (!v1)
		return 0;
	copy_path(out->path, v1, v1_len);
	/* from the whole path: the parent that makes it a container may be cut from out->path */
	cp_container_id(v1, v1_len, out->container_id, &out->runtime);
	return 0;
}

/* Bytes [p, e) of a text. */
struct span {
	const char *p, *e;
};

/* The fields of a /proc/self/mountinfo line that are looked at ({NULL}: absent). */
struct mount_line {
	struct span root;  /* the mount's root within its file system */
	struct span point; /* the mount point */
	struct span type;  /* the file system type, first after " - " */
	struct span super; /* its super options, third after it */
};

/*
 * Splits mountinfo line [line, end): "ID PARENT MAJ:MIN ROOT MOUNTPOINT
 * OPTS [TAGS...] - FSTYPE SOURCE SUPER". False when it has no mount point
 * or no file system type.
 */
static bool mount_line(const char *line, const char *end, struct mount_line *m)
{
	const char *tok = line, *te;
	int after = -1; /* the field's place past the separator; -1: before it */

	memset(m, 0, sizeof(*m));
	for (int field = 0; tok < end; field++, tok = te + 1) {
		struct span *to = NULL;

		te = memchr(tok, ' ', (size_t)(end - tok));
		if (!te)
			te = end;
		if (after < 0 && field > 5 && te - tok == 1 && *tok == '-') {
			after = 0;
		} else if (after < 0) {
			to = field == 3 ? &m->root : field == 4 ? &m->point : NULL;
		} else {
			to = after == 0 ? &m->type : after == 2 ? &m->super : NULL;
			after++;
		}
		if (to)
			*to = (struct span){tok, te};
		if (to == &m->super)
			break;
	}
	return m->point.p && m->type.p;
}

/* The next mountinfo line at *@at that splits (mount_line()) into @m, *@at moved past it. */
static bool next_mount(const char **at, struct mount_line *m)
{
	while (*at && **at) {
		const char *line = *at, *nl = strchr(line, '\n'),
			   *end = nl ? nl : line + strlen(line);

		*at = nl ? nl + 1 : NULL;
		if (mount_line(line, end, m))
			return true;
	}
	return false;
}

/* Whether @sp is the string @s. */
static bool span_is(struct span sp, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(sp.e - sp.p) == n && !memcmp(sp.p, s, n);
}

/* @sp into @out (@sz bytes) with its NUL: 0, or -ENAMETOOLONG. */
static int copy_span(struct span sp, char *out, size_t sz)
{
	if ((size_t)(sp.e - sp.p) >= sz)
		return -ENAMETOOLONG;
	memcpy(out, sp.p, (size_t)(sp.e - sp.p));
	out[sp.e - sp.p] = '\0';
	return 0;
}

int cp_cgroup2_mount(const char *text, char *out, size_t sz)
{
	struct mount_line m;

	for (const char *at = text; next_mount(&at, &m);)
		if (span_is(m.type, "cgroup2"))
			return copy_span(m.point, out, sz);
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

/* Whether each comma-separated item of [c, e) is one of those of [o, oe). */
static bool items_in(const char *c, const char *e, const char *o, const char *oe)
{
	while (c < e) {
		const char *ce = memchr(c, ',', (size_t)(e - c));
		bool found = false;

		if (!ce)
			ce = e;
		for (const char *q = o; q < oe && !found;) {
			const char *qe = memchr(q, ',', (size_t)(oe - q));

			if (!qe)
				qe = oe;
			found = qe - q == ce - c && !memcmp(q, c, (size_t)(ce - c));
			q = qe + 1;
		}
		if (!found)
			return false;
		c = ce + 1;
	}
	return true;
}

/*
 * The mount point, in mountinfo @text, of the v1 hierarchy whose
 * controllers are [c, e): a "cgroup" mount of its root holding them all.
 */
static int cgroup1_mount(const char *text, const char *c, const char *e, char *out, size_t sz)
{
	struct mount_line m;

	for (const char *at = text; next_mount(&at, &m);) {
		if (!span_is(m.type, "cgroup") || !span_is(m.root, "/") || !m.super.p ||
		    !items_in(c, e, m.super.p, m.super.e))
			continue;
		if (memchr(m.point.p, '\\', (size_t)(m.point.e - m.point.p)))
			return -ENOENT; /* an escaped name: not looked up */
		return copy_span(m.point, out, sz);
	}
	return -ENOENT;
}

int cp_cgroup_line_dirs(const char *text, const char *mounts, cp_cgroup_dir_fn fn, void *ctx)
{
	char mount[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	struct cgroup_line l;
	int lines = 0, err;

	for (const char *at = text; next_cgroup_line(&at, &l);) {
		__u32 hierarchy = 0;

		if (!l.c2 || l.c1 == l.start || l.c1 - l.start > 9 || l.c2 + 1 >= l.end ||
		    l.c2[1] != '/' || copy_span((struct span){l.c2 + 1, l.end}, path, sizeof(path)))
			return -EINVAL;
		for (const char *d = l.start; d < l.c1; d++) {
			if (*d < '0' || *d > '9')
				return -EINVAL;
			hierarchy = hierarchy * 10 + (__u32)(*d - '0');
		}
		if (!hierarchy && l.c2 == l.c1 + 1)
			err = cp_cgroup2_mount(mounts, mount, sizeof(mount));
		else if (hierarchy && l.c2 > l.c1 + 1)
			err = cgroup1_mount(mounts, l.c1 + 1, l.c2, mount, sizeof(mount));
		else
			return -EINVAL;
		if (!err)
			err = cp_cgroup_dir(mount, path, dir, sizeof(dir));
		if (!err)
			err = fn(ctx, hierarchy, dir);
		if (err)
			return err;
		lines++;
	}
	return lines ? lines : -EINVAL;
}

static pthread_once_t salt_once = PTHREAD_ONCE_INIT;
static __u64 salt;

static void draw_salt(void)
{
	struct timespec ts;

	if (getrandom(&salt, sizeof(salt), GRND_NONBLOCK) == (ssize_t)sizeof(salt) && salt)
		return;
	/* no entropy yet (early boot): a value a tenant cannot read back either way */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	salt = ((__u64)ts.tv_nsec << 32 ^ (__u64)ts.tv_sec ^ (__u64)getpid() << 16) | 1;
}

__u64 cp_cgroup_v1_salt(void)
{
	pthread_once(&salt_once, draw_salt);
	return salt;
}
