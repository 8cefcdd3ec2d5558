// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc readers of a process's comm and cgroup, and --cgroup's directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "cacheperf/abi.h"
#include "profile/proc_identity.h"

#define CP_CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */

/* The whole of a small file into @buf (NUL-terminated); bytes read or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < sz - 1 && (n = read(fd, buf + got, sz - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

void cp_proc_read_comm(pid_t pid, char *buf, size_t sz)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_small(path, buf, sz) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* /proc/self/mountinfo, read once ("" when it could not be). */
static const char *mountinfo(void)
{
	static char text[65536];
	static bool looked;

	if (!looked) {
		looked = true;
		if (read_small("/proc/self/mountinfo", text, sizeof(text)) < 0)
			text[0] = '\0';
	}
	return text;
}

/* The cgroup2 mount point, found once ("" when none is mounted). */
static const char *cgroup2_mount(void)
{
	static char mount[PATH_MAX];
	static bool looked;

	if (!looked) {
		looked = true;
		if (cp_cgroup2_mount(mountinfo(), mount, sizeof(mount)))
			mount[0] = '\0';
	}
	return mount;
}

/* cp_cgroup_line_dirs()'s call: the directory's inode into the XOR at @ctx. */
static int add_line(void *ctx, __u32 hierarchy, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	*(__u64 *)ctx ^= cp_cgroup_v1_of(hierarchy, st.st_ino, cp_cgroup_v1_salt());
	return 0;
}

int cp_proc_read_cgroup(pid_t pid, bool lines, struct cp_cgroup_info *out)
{
	char path[64], text[4096], dir[PATH_MAX];
	const char *mount;
	struct stat st;
	__u64 x = 0;
	ssize_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = read_small(path, text, sizeof(text));
	if (n < 0)
		return (int)n;
	err = cp_cgroup_parse(text, out);
	if (err)
		return err;
	if (lines && cp_cgroup_line_dirs(text, mountinfo(), add_line, &x) > 0)
		out->lines = x;
	if (!out->v2)
		return 0;
	/* the directory the path names: its inode is the id a BPF program sees */
	mount = cgroup2_mount();
	if (mount[0] && !cp_cgroup_dir(mount, out->path, dir, sizeof(dir)) && !stat(dir, &st) &&
	    S_ISDIR(st.st_mode))
		out->id = st.st_ino;
	return 0;
}

void cp_proc_describe(void *ctx, struct cp_proc_summary *s, unsigned int what)
{
	(void)ctx;
	if (what & CP_DESCRIBE_COMM)
		cp_proc_read_comm(s->pid, s->comm, sizeof(s->comm));
	if ((what & CP_DESCRIBE_CGROUP) &&
	    cp_proc_read_cgroup(s->pid, what & CP_DESCRIBE_CGROUP_LINES, &s->cg))
		cp_cgroup_info_unknown(&s->cg);
}

int cp_cgroup_open(const char *path, char *err, size_t err_sz)
{
	const char *mount = cgroup2_mount();
	char dir[PATH_MAX];
	struct statfs sfs;
	int fd, ret;

	if (!mount[0]) {
		snprintf(err, err_sz,
			 "--cgroup: no cgroup2 file system is mounted (cgroup v1 only is not "
			 "supported)");
		return -ENOENT;
	}
	ret = cp_cgroup_dir(mount, path, dir, sizeof(dir));
	if (ret) {
		snprintf(err, err_sz, "--cgroup: '%s' is not an absolute cgroup path", path);
		return ret;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_sz, "--cgroup: cannot open %s: %s", dir, strerror(errno));
		return ret;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CP_CGROUP2_MAGIC) {
		close(fd);
		snprintf(err, err_sz, "--cgroup: %s is not a cgroup2 directory", dir);
		return -EINVAL;
	}
	return fd;
}
