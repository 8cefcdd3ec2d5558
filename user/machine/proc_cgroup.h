/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which cgroup, and which container, a process is in: pure parsing of
 * /proc/PID/cgroup and /proc/self/mountinfo text (the reading is in
 * profile/proc_identity.c).
 */
#ifndef CP_PROC_CGROUP_H
#define CP_PROC_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_CGROUP_PATH_LEN  256
#define CP_CONTAINER_ID_LEN 65 /* 64 hex digits and a NUL */

struct cp_cgroup_info {
	char path[CP_CGROUP_PATH_LEN];		/* "/system.slice/foo.service"; "" unknown */
	bool v2;				/* from the unified hierarchy ("0::") */
	char container_id[CP_CONTAINER_ID_LEN]; /* "" when the path names none */
	const char *runtime;			/* "docker", "containerd", "cri-o", "podman", "" */
	__u64 id; /* its cgroup2 directory's inode (the kernel's cgroup id) when looked up; 0 unknown */
	bool v2_line; /* the text has the unified hierarchy's line */
	/*
	 * cp_cgroup_v1_of() over every line of the text, the unified one's as
	 * hierarchy 0, each directory's inode looked up (cp_cgroup_line_dirs());
	 * 0: not looked up, or a directory not found
	 */
	__u64 lines;
};

/* Sets @cg to nothing known: no path, no container, runtime "". */
void cp_cgroup_info_unknown(struct cp_cgroup_info *cg);

/*
 * Fills @out from the text of /proc/PID/cgroup. The unified hierarchy's
 * path ("0::/a/b") wins; on a hybrid host whose process sits at the v2 root,
 * the first v1 hierarchy with a deeper path is taken (name=systemd first).
 * A path longer than the buffer is cut at its start (the leaf is kept); the
 * container id is found in the whole path. Returns 0, or -EINVAL when the text has
 * no hierarchy line at all.
 */
int cp_cgroup_parse(const char *text, struct cp_cgroup_info *out);

/*
 * The container id in cgroup @path (@len bytes, as /proc/PID/cgroup writes
 * it): only where a runtime puts its containers, under a parent at the
 * root that only root can create: "/system.slice/docker-<id>.scope",
 * "/machine.slice/libpod-<id>.scope", "/kubepods.slice/[kubepods-*.slice/
 * [...pod*.slice/]]{cri-containerd,crio,docker}-<id>.scope" (systemd
 * driver); "/docker/<id>", "/kubepods/[QoS/][pod<uid>/]<id>",
 * "/libpod_parent/libpod-<id>" (cgroupfs driver); cgroups below the
 * container's are its own. <id> is 64 lowercase hex digits. A look-alike
 * anywhere else (a user's delegated subtree under /user.slice, a conmon
 * scope, a rootless container) is no container. Returns true and fills @id
 * (CP_CONTAINER_ID_LEN bytes) and @runtime, else false with @id "" and
 * @runtime "".
 */
bool cp_container_id(const char *path, size_t len, char *id, const char **runtime);

/*
 * A container id and runtime named elsewhere (a recording's): @id, 64
 * lowercase hex digits, into @out_id (CP_CONTAINER_ID_LEN bytes) and the
 * runtime among those cp_container_id() knows into @out_runtime; else
 * false, with "" for both.
 */
bool cp_container_named(const char *id, const char *runtime, char *out_id,
			const char **out_runtime);

/*
 * The mount point of the cgroup2 file system in /proc/self/mountinfo @text
 * ("/sys/fs/cgroup", or "/sys/fs/cgroup/unified" on hybrid hosts) into @out.
 * Returns 0, -ENOENT when none is mounted, -ENAMETOOLONG.
 */
int cp_cgroup2_mount(const char *text, char *out, size_t sz);

/*
 * The directory of cgroup @path under cgroup2 mount @mount: @path itself
 * when it already starts with @mount/ (or is it), else @mount joined with
 * @path as /proc/PID/cgroup writes it. Returns 0, -EINVAL for a relative
 * path or one with a ".." component, -ENAMETOOLONG.
 */
int cp_cgroup_dir(const char *mount, const char *path, char *out, size_t sz);

/*
 * The run's secret of cp_cgroup_v1_of() (include/cacheperf/abi.h), drawn
 * at the first call (getrandom()), the same for BPF and user space.
 */
__u64 cp_cgroup_v1_salt(void);

/* Called with each line's hierarchy and directory; non-zero stops the walk. */
typedef int (*cp_cgroup_dir_fn)(void *ctx, __u32 hierarchy, const char *dir);

/*
 * The directory of each line of /proc/PID/cgroup @text, as mounted in
 * /proc/self/mountinfo @mounts: @fn(@ctx, hierarchy, directory) for each.
 * The unified line's ("0::") is under the cgroup2 mount; a v1 line's under
 * a "cgroup" mount of the hierarchy's root whose super options hold each of
 * the line's controllers ("cpu,cpuacct", "name=systemd"). Returns the lines
 * walked, -ENOENT when one has no such mount (or an escaped mount point),
 * -EINVAL for a line that is not the kernel's, or what @fn returned.
 */
int cp_cgroup_line_dirs(const char *text, const char *mounts, cp_cgroup_dir_fn fn, void *ctx);

#endif /* CP_PROC_CGROUP_H */
