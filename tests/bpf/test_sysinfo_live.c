// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Machine facts on the machine itself (root): what --probe reports must be
 * what the kernel does. Breakpoint slots are checked against the kernel's
 * accounting (kernel/events/hw_breakpoint.c): a task-bound breakpoint needs
 * a free slot on every CPU, counting that task's own breakpoints and the
 * CPU-bound ones, never another task's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"

#include "machine/sysinfo.h"

/* Something to watch: never executed by these tests. */
static __attribute__((noinline, used)) void watched(void)
{
	__asm__ __volatile__("");
}

/* A disabled user-only execute breakpoint on @pid/@cpu; fd or -errno. */
static int hold_breakpoint(pid_t pid, int cpu)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = (__u64)(uintptr_t)watched;
	attr.bp_len = sizeof(long);
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void test_kernel_matches_uname_r(void **state)
{
	struct cp_kernel_version v;
	unsigned int major = 0, minor = 0, patch = 0;
	char release[65], shell[128] = "";
	FILE *p;

	(void)state;
	assert_int_equal(cp_sysinfo_kernel(release, sizeof(release), &v), 0);
	p = popen("uname -r", "r");
	assert_non_null(p);
	assert_non_null(fgets(shell, sizeof(shell), p));
	pclose(p);
	shell[strcspn(shell, "\n")] = '\0';
	assert_string_equal(release, shell);
	/* an independent reading of the same string, not our parser twice */
	assert_true(sscanf(shell, "%u.%u.%u", &major, &minor, &patch) >= 2);
	assert_int_equal(v.major, major);
	assert_int_equal(v.minor, minor);
	assert_int_equal(v.patch, patch);
}

/* DESIGN.md "verified platform facts": these machines have BTF and uprobes. */
static void test_btf_and_kfunc(void **state)
{
	struct cp_kernel_version v;
	char release[65];

	(void)state;
	assert_int_equal(cp_sysinfo_btf_vmlinux("/"), 0);
	assert_int_equal(cp_sysinfo_kernel(release, sizeof(release), &v), 0);
	/* bpf_cast_to_kern_ctx appeared in 6.2: present exactly from then on */
	assert_int_equal(cp_sysinfo_btf_has_func("/", "bpf_cast_to_kern_ctx"),
			 cp_kernel_version_cmp(&v, 6, 2, 0) >= 0);
	assert_int_equal(cp_sysinfo_btf_has_func("/", "cp_no_such_kfunc"), 0);
	/* a struct is in BTF but is not a function */
	assert_int_equal(cp_sysinfo_btf_has_func("/", "task_struct"), 0);
	assert_int_equal(cp_sysinfo_btf_has_func("/nonexistent", "bpf_cast_to_kern_ctx"), -ENOENT);
	/* uprobe multi links (live/uprobe_multi.h) appeared in 6.6 */
	assert_int_equal(
		cp_sysinfo_btf_has_enumerator("/", "bpf_attach_type", "BPF_TRACE_UPROBE_MULTI"),
		cp_kernel_version_cmp(&v, 6, 6, 0) >= 0);
	assert_int_equal(cp_sysinfo_btf_has_enumerator("/", "bpf_attach_type", "CP_NO_SUCH"), 0);
	assert_int_equal(cp_sysinfo_btf_has_enumerator("/", "cp_no_such_enum", "X"), 0);
}

static void test_uprobes(void **state)
{
	int type = cp_sysinfo_uprobe_type("/");

	(void)state;
	/* dynamic PMU types are allocated after the fixed ones */
	assert_true(type >= PERF_TYPE_MAX);
}

static void test_cpus_match_libbpf_and_sysconf(void **state)
{
	int online = 0, possible = 0;

	(void)state;
	assert_int_equal(cp_sysinfo_cpus("/", &online, &possible), 0);
	assert_int_equal(online, sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(possible, libbpf_num_possible_cpus());
	assert_true(online >= 1 && online <= possible);
}

static void test_paranoid_matches_proc(void **state)
{
	int mine = 99, theirs = 98;
	FILE *f;

	(void)state;
	assert_int_equal(cp_sysinfo_perf_paranoid("/", &mine), 0);
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &theirs), 1);
	fclose(f);
	assert_int_equal(mine, theirs);
}

static void test_root_privileges_and_bpf(void **state)
{
	struct cp_kernel_version v;
	struct cp_privileges p;
	char release[65];

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(cp_sysinfo_privileges(&p), 0);
	assert_int_equal(p.euid, 0);
	assert_true(p.ok);
	assert_string_equal(p.missing, "");
	assert_int_equal(cp_sysinfo_bpf_load(), 0);
	/* hash maps allocating at run time in perf_event programs: since 6.1 */
	assert_int_equal(cp_sysinfo_kernel(release, sizeof(release), &v), 0);
	assert_int_equal(cp_sysinfo_bpf_runtime_alloc(), cp_kernel_version_cmp(&v, 6, 1, 0) >= 0);
}

/*
 * A child drops CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN from its effective
 * set, staying uid 0: the check must name both missing capabilities and the
 * kernel must refuse the load, so the check predicts what the kernel does.
 * User-only breakpoints on itself still work (perf_event_paranoid <= 2).
 */
static void test_dropped_capabilities(void **state)
{
	int paranoid = 3, status;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(cp_sysinfo_perf_paranoid("/", &paranoid), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
		struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
		struct cp_privileges p;

		if (syscall(SYS_capget, &hdr, d))
			_exit(10);
		d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
		d[38 / 32].effective &= ~(1u << (38 % 32)); /* CAP_PERFMON */
		d[39 / 32].effective &= ~(1u << (39 % 32)); /* CAP_BPF */
		if (syscall(SYS_capset, &hdr, d))
			_exit(11);
		if (cp_sysinfo_privileges(&p) || p.euid != 0 || p.ok ||
		    strcmp(p.missing, "CAP_BPF, CAP_PERFMON"))
			_exit(12);
		if (cp_sysinfo_bpf_load() != -EPERM)
			_exit(13);
		if (paranoid <= 2 && cp_sysinfo_hw_breakpoint_slots() != CP_HW_BREAKPOINT_SLOTS)
			_exit(14);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	/* 12: check disagrees; 13: kernel allowed the load; 14: breakpoints refused */
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * Our own breakpoints use our slots: holding 2 on this thread leaves 2,
 * holding 4 leaves 0, releasing them gives 4 back. The baseline of 4
 * assumes no CPU-bound breakpoint elsewhere on the machine (see below).
 */
static void test_breakpoints_own_task(void **state)
{
	int fds[CP_HW_BREAKPOINT_SLOTS];

	(void)state;
	REQUIRE_ROOT();
	if (cp_sysinfo_hw_breakpoint_slots() != CP_HW_BREAKPOINT_SLOTS)
		fail_msg("%d free breakpoint slots with nothing held by this test: something "
			 "on this machine holds CPU-wide breakpoints (perf record -a -e mem:...)",
			 cp_sysinfo_hw_breakpoint_slots());
	for (int i = 0; i < 2; i++)
		fds[i] = hold_breakpoint(0, -1);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	assert_int_equal(cp_sysinfo_hw_breakpoint_slots(), 2);
	for (int i = 2; i < 4; i++)
		fds[i] = hold_breakpoint(0, -1);
	assert_true(fds[2] >= 0 && fds[3] >= 0);
	assert_int_equal(cp_sysinfo_hw_breakpoint_slots(), 0);
	assert_int_equal(hold_breakpoint(0, -1), -ENOSPC);
	close_all(fds, 4);
	assert_int_equal(cp_sysinfo_hw_breakpoint_slots(), CP_HW_BREAKPOINT_SLOTS);
}

/*
 * Slots are per task: a child holding all 4 of its own leaves ours at 4 (a
 * debugger on another process does not get in our way), though the child
 * cannot take a fifth.
 */
static void test_breakpoints_other_task(void **state)
{
	int fds[CP_HW_BREAKPOINT_SLOTS], hold[2], status, free_slots;
	pid_t child;
	char c;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(pipe(hold), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(hold[1]);
		(void)!read(hold[0], &c, 1); /* parked until the parent is done */
		_exit(0);
	}
	close(hold[0]);
	for (int i = 0; i < CP_HW_BREAKPOINT_SLOTS; i++)
		fds[i] = hold_breakpoint(child, -1);
	free_slots = cp_sysinfo_hw_breakpoint_slots();
	status = hold_breakpoint(child, -1);
	close_all(fds, CP_HW_BREAKPOINT_SLOTS);
	close(hold[1]);
	waitpid(child, NULL, 0);
	for (int i = 0; i < CP_HW_BREAKPOINT_SLOTS; i++)
		assert_true(fds[i] >= 0);
	assert_int_equal(status, -ENOSPC);
	assert_int_equal(free_slots, CP_HW_BREAKPOINT_SLOTS);
}

/*
 * A CPU-bound breakpoint on one CPU takes a slot a task-bound one would need
 * there, and a task may run on any CPU: our count drops by one.
 */
static void test_breakpoints_cpu_wide(void **state)
{
	int fd, free_slots;

	(void)state;
	REQUIRE_ROOT();
	fd = hold_breakpoint(-1, 0);
	assert_true(fd >= 0);
	free_slots = cp_sysinfo_hw_breakpoint_slots();
	close(fd);
	assert_int_equal(free_slots, CP_HW_BREAKPOINT_SLOTS - 1);
}

static void test_collect_and_print(void **state)
{
	struct cp_sysinfo si;
	char *out = NULL;
	size_t sz = 0;
	FILE *f;

	(void)state;
	REQUIRE_ROOT();
	cp_sysinfo_collect("/", &si);
	f = open_memstream(&out, &sz);
	assert_non_null(f);
	cp_sysinfo_print(&si, f);
	fclose(f);
	print_message("%s", out);
	assert_int_equal(si.kernel_err, 0);
	assert_int_equal(si.btf_err, 0);
	assert_true(si.uprobe_type > 0);
	assert_int_equal(si.hw_breakpoint_slots, CP_HW_BREAKPOINT_SLOTS);
	assert_true(si.priv.ok);
	assert_int_equal(si.bpf_load_err, 0);
	assert_non_null(strstr(out, "hardware breakpoints: 4 of 4 free\n"));
	assert_non_null(strstr(out, "privileges: ok (euid 0"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_matches_uname_r),
		cmocka_unit_test(test_btf_and_kfunc),
		cmocka_unit_test(test_uprobes),
		cmocka_unit_test(test_cpus_match_libbpf_and_sysconf),
		cmocka_unit_test(test_paranoid_matches_proc),
		cmocka_unit_test(test_root_privileges_and_bpf),
		cmocka_unit_test(test_dropped_capabilities),
		cmocka_unit_test(test_breakpoints_own_task),
		cmocka_unit_test(test_breakpoints_other_task),
		cmocka_unit_test(test_breakpoints_cpu_wide),
		cmocka_unit_test(test_collect_and_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
