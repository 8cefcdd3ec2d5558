// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/cgroup paths, container ids and the cgroup2 mount point. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "machine/proc_cgroup.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct cg_case {
	const char *text;
	const char *path;
	bool v2;
	const char *id;
	const char *runtime;
};

static const struct cg_case cases[] = {
	/* a pure v2 host, a systemd service */
	{ "0::/system.slice/nginx.service\n", "/system.slice/nginx.service", true, "", "" },
	/* docker with the systemd cgroup driver */
	{ "0::/system.slice/docker-" HEX64 ".scope\n",
	  "/system.slice/docker-" HEX64 ".scope", true, HEX64, "docker" },
	/* docker with the cgroupfs driver, v1 only */
	{ "12:pids:/docker/" HEX64 "\n1:name=systemd:/docker/" HEX64 "\n",
	  "/docker/" HEX64, false, HEX64, "" },
	/* kubernetes: containerd, then CRI-O, in a pod slice */
	{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/cri-containerd-" HEX64 ".scope\n",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/cri-containerd-" HEX64 ".scope",
	  true, HEX64, "containerd" },
	{ "0::/kubepods.slice/crio-" HEX64 ".scope\n", "/kubepods.slice/crio-" HEX64 ".scope", true,
	  HEX64, "cri-o" },
	/* podman: the container, not its conmon */
	{ "0::/machine.slice/libpod-" HEX64 ".scope/container\n",
	  "/machine.slice/libpod-" HEX64 ".scope/container", true, HEX64, "podman" },
	{ "0::/machine.slice/libpod-conmon-" HEX64 ".scope\n",
	  "/machine.slice/libpod-conmon-" HEX64 ".scope", true, "", "" },
	/* a hybrid host with the process at the v2 root: systemd's v1 path wins */
	{ "4:memory:/process_api/824dca94\n1:name=systemd:/user.slice/session-3.scope\n0::/\n",
	  "/user.slice/session-3.scope", false, "", "" },
	/* ... and the first deeper v1 path when systemd's is the root */
	{ "4:memory:/process_api/824dca94\n1:name=systemd:/\n0::/\n", "/process_api/824dca94", false,
	  "", "" },
	/* everything at the root */
	{ "0::/\n", "/", true, "", "" },
	/* 63 hex digits, uppercase, or a prefix alone: no container */
	{ "0::/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n",
	  "/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", true, "", "" },
	{ "0::/docker-0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF.scope\n",
	  "/docker-0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF.scope", true, "",
	  "" },
	{ "0::/docker-.scope", "/docker-.scope", true, "", "" },
	/* a container's own cgroups below its scope are still its */
	{ "0::/system.slice/docker-" HEX64 ".scope/init.scope\n",
	  "/system.slice/docker-" HEX64 ".scope/init.scope", true, HEX64, "docker" },
	{ "12:pids:/docker/" HEX64 "/sub\n", "/docker/" HEX64 "/sub", false, HEX64, "" },
	/* kubernetes, systemd driver: a guaranteed pod (no QoS slice); dockershim */
	{ "0::/kubepods.slice/kubepods-pod1234_5678.slice/cri-containerd-" HEX64 ".scope\n",
	  "/kubepods.slice/kubepods-pod1234_5678.slice/cri-containerd-" HEX64 ".scope", true, HEX64,
	  "containerd" },
	{ "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/docker-" HEX64
	  ".scope\n",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/docker-" HEX64
	  ".scope", true, HEX64, "docker" },
	/* kubernetes, cgroupfs driver (v1): QoS and pod levels, then the bare id */
	{ "11:memory:/kubepods/burstable/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/" HEX64 "\n",
	  "/kubepods/burstable/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/" HEX64, false, HEX64, "" },
	{ "11:memory:/kubepods/pod0a1b2c3d/" HEX64 "\n", "/kubepods/pod0a1b2c3d/" HEX64, false, HEX64,
	  "" },
	/* podman, cgroupfs driver */
	{ "0::/libpod_parent/libpod-" HEX64 "\n", "/libpod_parent/libpod-" HEX64, true, HEX64,
	  "podman" },
	/*
	 * Look-alikes a user makes in a delegated subtree (systemd's user@.service
	 * delegates; so does a test's chown'd cgroup): no container. Rootless
	 * podman lives there too, and is no more trustworthy.
	 */
	{ "0::/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" HEX64 ".scope\n",
	  "/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" HEX64 ".scope", true, "",
	  "" },
	{ "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" HEX64 ".scope\n",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" HEX64 ".scope", true, "",
	  "" },
	{ "0::/user.slice/docker-" HEX64 ".scope\n", "/user.slice/docker-" HEX64 ".scope", true, "",
	  "" },
	{ "0::/cp-tenant/system.slice/docker-" HEX64 ".scope\n",
	  "/cp-tenant/system.slice/docker-" HEX64 ".scope", true, "", "" },
	{ "0::/docker-" HEX64 ".scope\n", "/docker-" HEX64 ".scope", true, "", "" },
	{ "0::/tenant/" HEX64 "\n", "/tenant/" HEX64, true, "", "" },
	/* the right name under the wrong runtime's parent, or too deep for a pod */
	{ "0::/system.slice/crio-" HEX64 ".scope\n", "/system.slice/crio-" HEX64 ".scope", true, "",
	  "" },
	{ "0::/machine.slice/docker-" HEX64 ".scope\n", "/machine.slice/docker-" HEX64 ".scope", true,
	  "", "" },
	{ "0::/kubepods.slice/a.slice/cri-containerd-" HEX64 ".scope\n",
	  "/kubepods.slice/a.slice/cri-containerd-" HEX64 ".scope", true, "", "" },
	{ "0::/kubepods/burstable/pod1/pod2/" HEX64 "\n", "/kubepods/burstable/pod1/pod2/" HEX64, true,
	  "", "" },
	{ "0::/system.slice/user.slice/docker-" HEX64 ".scope\n",
	  "/system.slice/user.slice/docker-" HEX64 ".scope", true, "", "" },
};

static void test_cgroup_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_cgroup_info ci;

		if (cp_cgroup_parse(cases[i].text, &ci))
			fail_msg("case %zu: not parsed", i);
		if (strcmp(ci.path, cases[i].path))
			fail_msg("case %zu: path '%s', want '%s'", i, ci.path, cases[i].path);
		if (ci.v2 != cases[i].v2)
			fail_msg("case %zu: v2 %d, want %d", i, ci.v2, cases[i].v2);
		if (strcmp(ci.container_id, cases[i].id))
			fail_msg("case %zu: id '%s', want '%s'", i, ci.container_id, cases[i].id);
		if (strcmp(ci.runtime, cases[i].runtime))
			fail_msg("case %zu: runtime '%s', want '%s'", i, ci.runtime, cases[i].runtime);
	}
}

static void test_cgroup_bad_text(void **state)
{
	struct cp_cgroup_info ci;

	(void)state;
	assert_int_equal(cp_cgroup_parse("", &ci), -EINVAL);
	assert_int_equal(cp_cgroup_parse("garbage\nno colons here\n", &ci), -EINVAL);
	assert_int_equal(cp_cgroup_parse("0::relative\n", &ci), -EINVAL);
}

/*
 * A path longer than the buffer keeps its leaf; the container id comes
 * from the whole path, whose start (the runtime's parent) was cut. A
 * look-alike deep in someone's subtree stays no container.
 */
static void test_cgroup_long_path(void **state)
{
	char text[1024] = "0::/system.slice/docker-" HEX64 ".scope";
	struct cp_cgroup_info ci;

	(void)state;
	for (int i = 0; i < 30; i++)
		strcat(text, "/deeper.slice");
	strcat(text, "\n");
	assert_int_equal(cp_cgroup_parse(text, &ci), 0);
	assert_int_equal(strlen(ci.path), CP_CGROUP_PATH_LEN - 1);
	assert_null(strstr(ci.path, "docker-"));
	assert_string_equal(ci.container_id, HEX64);
	assert_string_equal(ci.runtime, "docker");

	strcpy(text, "0::/user.slice");
	for (int i = 0; i < 30; i++)
		strcat(text, "/deeper.slice");
	strcat(text, "/docker-" HEX64 ".scope\n");
	assert_int_equal(cp_cgroup_parse(text, &ci), 0);
	assert_non_null(strstr(ci.path, ".scope"));
	assert_string_equal(ci.container_id, "");
}

static void test_cgroup2_mount(void **state)
{
	char out[64];

	(void)state;
	/* hybrid: v1 controllers first, then the unified hierarchy */
	assert_int_equal(cp_cgroup2_mount(
		"30 25 0:26 / /sys/fs/cgroup ro,nosuid shared:4 - tmpfs tmpfs ro,mode=755\n"
		"31 30 0:27 / /sys/fs/cgroup/memory rw shared:5 - cgroup cgroup rw,memory\n"
		"41 30 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n",
		out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/unified");
	/* no optional fields */
	assert_int_equal(cp_cgroup2_mount("41 31 0:38 / /sys/fs/cgroup rw - cgroup2 none rw\n", out,
					  sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup");
	/* a mount point named cgroup2 is not the file system */
	assert_int_equal(cp_cgroup2_mount("1 0 0:1 / /cgroup2 rw - tmpfs cgroup2 rw\n", out,
					  sizeof(out)), -ENOENT);
	assert_int_equal(cp_cgroup2_mount("", out, sizeof(out)), -ENOENT);
	assert_int_equal(cp_cgroup2_mount("41 31 0:38 / /sys/fs/cgroup rw - cgroup2 none rw\n", out,
					  8), -ENAMETOOLONG);
}

static void test_cgroup_dir(void **state)
{
	char out[128];

	(void)state;
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/system.slice/a.service", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/system.slice/a.service");
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/sys/fs/cgroup/system.slice", out,
				       sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/system.slice");
	/* "/sys/fs/cgroupX" is not under the mount */
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/sys/fs/cgroupX", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/sys/fs/cgroupX");
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup");
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "system.slice", out, sizeof(out)), -EINVAL);
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/a/../../etc", out, sizeof(out)), -EINVAL);
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/a/..", out, sizeof(out)), -EINVAL);
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/a..b", out, sizeof(out)), 0);
	assert_int_equal(cp_cgroup_dir("/sys/fs/cgroup", "/system.slice", out, 16), -ENAMETOOLONG);
}

/* What cp_cgroup_line_dirs() called back with, joined: "HIERARCHY DIR;" each. */
static int seen_dir(void *ctx, __u32 hierarchy, const char *dir)
{
	char *out = ctx;

	snprintf(out + strlen(out), 1024 - strlen(out), "%u %s;", hierarchy, dir);
	return 0;
}

static int stop_at_memory(void *ctx, __u32 hierarchy, const char *dir)
{
	(void)ctx;
	(void)hierarchy;
	return strstr(dir, "/memory") ? -EIO : 0;
}

/*
 * Each line's directory, on a hybrid host (this VM's mounts): the unified
 * line under the cgroup2 mount, a v1 line under the cgroup mount holding
 * each of its controllers (two on one hierarchy, a named one); a bind mount
 * of a subtree, an escaped mount point or a missing hierarchy finds none.
 */
static void test_line_dirs(void **state)
{
	static const char mounts[] =
		"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"90 30 0:28 /sub /mnt/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
		"31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:7 - cgroup cgroup rw,cpu,cpuacct\n"
		"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
		"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
	char out[1024] = "";

	(void)state;
	assert_int_equal(cp_cgroup_line_dirs("9:name=systemd:/\n"
					     "4:memory:/process_api/64\n"
					     "2:cpu,cpuacct:/\n"
					     "0::/\n",
					     mounts, seen_dir, out),
			 4);
	assert_string_equal(out, "9 /sys/fs/cgroup/systemd;"
				 "4 /sys/fs/cgroup/memory/process_api/64;"
				 "2 /sys/fs/cgroup/cpu,cpuacct;"
				 "0 /sys/fs/cgroup/unified;");
	/* a hierarchy with no mount of its root: the bind mount of /sub is none */
	out[0] = '\0';
	assert_int_equal(cp_cgroup_line_dirs("5:pids:/\n", mounts, seen_dir, out), -ENOENT);
	assert_int_equal(cp_cgroup_line_dirs("2:cpu:/\n", "90 30 0:28 /sub /mnt/cpu rw - cgroup cgroup rw,cpu\n",
					     seen_dir, out),
			 -ENOENT);
	assert_int_equal(cp_cgroup_line_dirs("2:cpu:/\n",
					     "31 30 0:28 / /mnt/my\\040cg rw - cgroup cgroup rw,cpu\n",
					     seen_dir, out),
			 -ENOENT);
	assert_int_equal(cp_cgroup_line_dirs("0::/a\n", "", seen_dir, out), -ENOENT);
	assert_string_equal(out, "");
	/* not the kernel's text */
	assert_int_equal(cp_cgroup_line_dirs("x:memory:/\n", mounts, seen_dir, out), -EINVAL);
	assert_int_equal(cp_cgroup_line_dirs("4:memory:a\n", mounts, seen_dir, out), -EINVAL);
	assert_int_equal(cp_cgroup_line_dirs("0:memory:/\n", mounts, seen_dir, out), -EINVAL);
	assert_int_equal(cp_cgroup_line_dirs("4::/\n", mounts, seen_dir, out), -EINVAL);
	assert_int_equal(cp_cgroup_line_dirs("4:memory:/a/../..\n", mounts, seen_dir, out), -EINVAL);
	assert_int_equal(cp_cgroup_line_dirs("", mounts, seen_dir, out), -EINVAL);
	/* the callback's error ends the walk */
	assert_int_equal(cp_cgroup_line_dirs("4:memory:/\n0::/\n", mounts, stop_at_memory, NULL),
			 -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_cases),
		cmocka_unit_test(test_cgroup_bad_text),
		cmocka_unit_test(test_cgroup_long_path),
		cmocka_unit_test(test_cgroup2_mount),
		cmocka_unit_test(test_cgroup_dir),
		cmocka_unit_test(test_line_dirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
