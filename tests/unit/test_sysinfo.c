// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Machine facts, pure parts: kernel release strings, cpulists, /proc
 * integers, the privilege decision and the --probe text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "machine/sysinfo.h"

struct version_case {
	const char *release;
	int ret;
	unsigned int major, minor, patch;
};

static const struct version_case version_cases[] = {
	{ "6.18.44-fc-v669", 0, 6, 18, 44 },
	{ "5.15.0-91-generic", 0, 5, 15, 0 },
	{ "6.1.0-18-amd64", 0, 6, 1, 0 },
	{ "6.10-rc7", 0, 6, 10, 0 },
	{ "6.1", 0, 6, 1, 0 },
	{ "4.19.0+", 0, 4, 19, 0 },
	{ "6.8.0_custom", 0, 6, 8, 0 },
	{ "2.6.32.71", 0, 2, 6, 32 },		/* 2.6 era: four parts */
	{ "6.18.", 0, 6, 18, 0 },
	{ "6.18.x", 0, 6, 18, 0 },
	{ "3.10.0-1160.el7.x86_64", 0, 3, 10, 0 },
	{ "6.6.30-android15-8", 0, 6, 6, 30 },
	{ "65535.65535.65535", 0, 65535, 65535, 65535 },
	{ "65536.1.1", -EINVAL, 0, 0, 0 },
	{ "6.1.99999999999999999999", -EINVAL, 0, 0, 0 },
	{ "", -EINVAL, 0, 0, 0 },
	{ "6", -EINVAL, 0, 0, 0 },
	{ "6.", -EINVAL, 0, 0, 0 },
	{ "6..1", -EINVAL, 0, 0, 0 },
	{ "6.x", -EINVAL, 0, 0, 0 },
	{ "v6.1", -EINVAL, 0, 0, 0 },
	{ " 6.1", -EINVAL, 0, 0, 0 },
	{ "-6.1", -EINVAL, 0, 0, 0 },
	{ "linux", -EINVAL, 0, 0, 0 },
};

static void test_kernel_version_parse(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(version_cases) / sizeof(version_cases[0]); c++) {
		const struct version_case *vc = &version_cases[c];
		struct cp_kernel_version v = { 7, 7, 7 };

		print_message("# '%s'\n", vc->release);
		assert_int_equal(cp_kernel_version_parse(vc->release, &v), vc->ret);
		if (vc->ret) {
			/* untouched on error */
			assert_int_equal(v.major, 7);
			assert_int_equal(v.minor, 7);
			assert_int_equal(v.patch, 7);
			continue;
		}
		assert_int_equal(v.major, vc->major);
		assert_int_equal(v.minor, vc->minor);
		assert_int_equal(v.patch, vc->patch);
	}
	assert_int_equal(cp_kernel_version_parse(NULL, &(struct cp_kernel_version){ 0 }), -EINVAL);
}

static void test_kernel_version_cmp(void **state)
{
	struct cp_kernel_version v = { 6, 18, 44 };

	(void)state;
	assert_int_equal(cp_kernel_version_cmp(&v, 6, 18, 44), 0);
	assert_true(cp_kernel_version_cmp(&v, 6, 2, 0) > 0);	/* kfunc data_src needs 6.2 */
	assert_true(cp_kernel_version_cmp(&v, 6, 18, 45) < 0);
	assert_true(cp_kernel_version_cmp(&v, 7, 0, 0) < 0);
	assert_true(cp_kernel_version_cmp(&v, 5, 99, 99) > 0);
	/* numeric, not lexical: 6.9 is older than 6.10 */
	assert_true(cp_kernel_version_cmp(&(struct cp_kernel_version){ 6, 9, 0 }, 6, 10, 0) < 0);
}

struct cpulist_case {
	const char *text;
	int count;		/* or a negative errno */
};

static const struct cpulist_case cpulist_cases[] = {
	{ "0-1\n", 2 },
	{ "0\n", 1 },
	{ "0", 1 },
	{ "0-3,8,10-11\n", 7 },
	{ "0-255\n", 256 },
	{ "1,3,5,7\n", 4 },
	{ "5-5\n", 1 },
	{ "\n", 0 },			/* an empty mask, as in .../cpu/offline */
	{ "", 0 },
	{ "0-\n", -EINVAL },
	{ "-1\n", -EINVAL },
	{ "3-1\n", -EINVAL },
	{ "0,,1\n", -EINVAL },
	{ "0,\n", -EINVAL },
	{ "0-1-2\n", -EINVAL },
	{ "0 1\n", -EINVAL },
	{ "a\n", -EINVAL },
	{ "0-1\n\n", -EINVAL },
	{ "99999999999\n", -ERANGE },
	{ "0-99999999999\n", -ERANGE },
	{ "0-1048576,0-1048576\n", -ERANGE },
};

static void test_cpulist_count(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cpulist_cases) / sizeof(cpulist_cases[0]); c++) {
		print_message("# '%s'\n", cpulist_cases[c].text);
		assert_int_equal(cp_cpulist_count(cpulist_cases[c].text), cpulist_cases[c].count);
	}
}

struct proc_int_case {
	const char *text;
	int ret, value;
};

static const struct proc_int_case proc_int_cases[] = {
	{ "2\n", 0, 2 },
	{ "-1\n", 0, -1 },
	{ "4", 0, 4 },
	{ "0\n", 0, 0 },
	{ "2147483647\n", 0, 2147483647 },
	{ "-2147483648\n", 0, -2147483647 - 1 },
	{ "2147483648\n", -ERANGE, 0 },
	{ "-2147483649\n", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "\n", -EINVAL, 0 },
	{ "-\n", -EINVAL, 0 },
	{ "--1\n", -EINVAL, 0 },
	{ "+2\n", -EINVAL, 0 },
	{ " 2\n", -EINVAL, 0 },
	{ "2 \n", -EINVAL, 0 },
	{ "2\n\n", -EINVAL, 0 },
	{ "two\n", -EINVAL, 0 },
};

static void test_parse_proc_int(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(proc_int_cases) / sizeof(proc_int_cases[0]); c++) {
		const struct proc_int_case *pc = &proc_int_cases[c];
		int v = 12345;

		print_message("# '%s'\n", pc->text);
		assert_int_equal(cp_parse_proc_int(pc->text, &v), pc->ret);
		assert_int_equal(v, pc->ret ? 12345 : pc->value);
	}
}

#define CAP(n) (1ULL << (n))

struct priv_case {
	unsigned int euid;
	__u64 caps;
	bool ok;
	const char *missing;
};

static const struct priv_case priv_cases[] = {
	{ 0, ~0ULL >> 23, true, "" },			/* root: all 41 capabilities */
	{ 1000, CAP(38) | CAP(39), true, "" },		/* setcap cap_bpf,cap_perfmon */
	{ 1000, CAP(21), true, "" },			/* CAP_SYS_ADMIN covers both */
	{ 1000, 0, false, "CAP_BPF, CAP_PERFMON" },
	{ 1000, CAP(39), false, "CAP_PERFMON" },
	{ 1000, CAP(38), false, "CAP_BPF" },
	/* uid 0 without capabilities (docker --cap-drop=ALL): the kernel says EPERM */
	{ 0, 0, false, "CAP_BPF, CAP_PERFMON" },
	{ 0, CAP(12) | CAP(19), false, "CAP_BPF, CAP_PERFMON" },	/* NET_ADMIN, SYS_PTRACE */
};

static void test_privileges_eval(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(priv_cases) / sizeof(priv_cases[0]); c++) {
		const struct priv_case *pc = &priv_cases[c];
		struct cp_privileges p;

		print_message("# case %zu\n", c);
		cp_privileges_eval(pc->euid, pc->caps, &p);
		assert_int_equal(p.ok, pc->ok);
		assert_string_equal(p.missing, pc->missing);
		assert_int_equal(p.euid, pc->euid);
		assert_int_equal(p.cap_effective, pc->caps);
	}
}

static char *render(const struct cp_sysinfo *si)
{
	char *out = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&out, &sz);

	assert_non_null(f);
	cp_sysinfo_print(si, f);
	fclose(f);
	print_message("%s", out);
	return out;
}

static void test_print_healthy(void **state)
{
	struct cp_sysinfo si = {
		.release = "6.18.44-fc-v669", .kernel = { 6, 18, 44 },
		.cpus_online = 2, .cpus_possible = 2,
		.kfunc_cast_to_kern_ctx = 1, .uprobe_type = 8, .hw_breakpoint_slots = 4,
		.perf_paranoid = 2,
	};
	char *out;

	(void)state;
	cp_privileges_eval(0, ~0ULL >> 23, &si.priv);
	out = render(&si);
	assert_non_null(strstr(out, "kernel: 6.18.44-fc-v669 (6.18.44)\n"));
	assert_non_null(strstr(out, "cpus: 2 online, 2 possible\n"));
	assert_non_null(strstr(out, "privileges: ok (euid 0, CAP_BPF and CAP_PERFMON)\n"));
	assert_non_null(strstr(out, "perf_event_paranoid: 2\n"));
	assert_non_null(strstr(out, "bpf(): loads a perf_event program\n"));
	assert_non_null(strstr(out, "BTF: /sys/kernel/btf/vmlinux\n"));
	assert_non_null(strstr(out, "kfunc bpf_cast_to_kern_ctx: present"));
	assert_non_null(strstr(out, "uprobes: available (perf type 8)\n"));
	assert_non_null(strstr(out, "hardware breakpoints: 4 of 4 free\n"));
	free(out);
}

/* Every missing capability says what is missing and what to do about it. */
static void test_print_degraded(void **state)
{
	struct cp_sysinfo si = {
		.release = "weird", .kernel_err = -EINVAL,
		.cpus_err = -ENOENT, .btf_err = -ENOENT, .kfunc_cast_to_kern_ctx = -ENOENT,
		.uprobe_type = -ENOENT, .hw_breakpoint_slots = 0, .perf_paranoid_err = -EACCES,
		.bpf_load_err = -EPERM,
	};
	char *out;

	(void)state;
	cp_privileges_eval(1000, 0, &si.priv);
	out = render(&si);
	assert_non_null(strstr(out, "kernel: 'weird', version not understood"));
	assert_non_null(strstr(out, "cpus: unknown (No such file or directory)"));
	assert_non_null(strstr(out, "privileges: missing CAP_BPF, CAP_PERFMON (euid 1000); "
				    "run as root or grant them: setcap cap_bpf,cap_perfmon+ep"));
	assert_non_null(strstr(out, "perf_event_paranoid: unknown (Permission denied)"));
	assert_non_null(strstr(out, "bpf(): cannot load a perf_event program (Operation not "
				    "permitted); needs CAP_BPF and CAP_PERFMON"));
	assert_non_null(strstr(out, "CONFIG_DEBUG_INFO_BTF=y"));
	assert_non_null(strstr(out, "kfunc bpf_cast_to_kern_ctx: unknown, no BTF"));
	assert_non_null(strstr(out, "uprobes: unavailable (No such file or directory)"));
	assert_non_null(strstr(out, "CONFIG_UPROBE_EVENTS=y"));
	assert_non_null(strstr(out, "hardware breakpoints: 0 of 4 free; another tool holds them"));
	free(out);

	si.hw_breakpoint_slots = 3;
	out = render(&si);
	assert_non_null(strstr(out, "hardware breakpoints: 3 of 4 free; the others are held by "
				    "CPU-wide breakpoints"));
	free(out);

	si.hw_breakpoint_slots = -ENOENT;
	si.kfunc_cast_to_kern_ctx = 0;
	si.bpf_load_err = -ENOSYS;
	out = render(&si);
	assert_non_null(strstr(out, "hardware breakpoints: unavailable (No such file or "
				    "directory); conflict and capacity misses cannot be told "
				    "apart"));
	assert_non_null(strstr(out, "kfunc bpf_cast_to_kern_ctx: absent (kernel before 6.2)"));
	assert_non_null(strstr(out, "CONFIG_BPF_SYSCALL=y"));
	free(out);
}

/* The file readers over a fake root: the parsers' results, and errno when absent. */
static void test_readers_over_fake_root(void **state)
{
	char dir[] = "/tmp/cp-sysinfo-XXXXXX", path[256];
	int online = -1, possible = -1, paranoid = 99;
	static const char *const files[][2] = {
		{ "sys/devices/system/cpu/online", "0-5\n" },
		{ "sys/devices/system/cpu/possible", "0-7\n" },
		{ "proc/sys/kernel/perf_event_paranoid", "-1\n" },
		{ "sys/bus/event_source/devices/uprobe/type", "9\n" },
	};

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(cp_sysinfo_cpus(dir, &online, &possible), -ENOENT);
	assert_int_equal(cp_sysinfo_perf_paranoid(dir, &paranoid), -ENOENT);
	assert_int_equal(cp_sysinfo_uprobe_type(dir), -ENOENT);
	assert_int_equal(cp_sysinfo_btf_vmlinux(dir), -ENOENT);
	assert_true(cp_sysinfo_btf_has_func(dir, "bpf_cast_to_kern_ctx") < 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "mkdir -p \"$(dirname %s/%s)\"", dir, files[i][0]);
		assert_int_equal(system(path), 0);
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	assert_int_equal(cp_sysinfo_cpus(dir, &online, &possible), 0);
	assert_int_equal(online, 6);
	assert_int_equal(possible, 8);
	assert_int_equal(cp_sysinfo_perf_paranoid(dir, &paranoid), 0);
	assert_int_equal(paranoid, -1);
	assert_int_equal(cp_sysinfo_uprobe_type(dir), 9);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_version_parse),
		cmocka_unit_test(test_kernel_version_cmp),
		cmocka_unit_test(test_cpulist_count),
		cmocka_unit_test(test_parse_proc_int),
		cmocka_unit_test(test_privileges_eval),
		cmocka_unit_test(test_print_healthy),
		cmocka_unit_test(test_print_degraded),
		cmocka_unit_test(test_readers_over_fake_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
