// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The text report and the capability check: what a user reads. Inputs are
 * built by hand with numbers whose percentages and order are worked out
 * here, so each assertion states what the text must say.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "objects/object_stats.h"
#include "cli/probe.h"
#include "report/report.h"

static char *render(const struct cp_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cp_report_print(r, f);
	fclose(f);
	return buf;
}

static void expect_line(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing line '%s' in:\n%s", line, text);
}

static void add(struct cp_insn_store *s, __u32 tgid, __u64 ip, __u64 loads, __u64 load_misses,
		__u64 stores, __u64 store_misses, enum cp_mem_lvl lvl, __u64 lat_sum)
{
	struct cp_ip_key k = { .tgid = tgid, .ip = ip };
	struct cp_ip_counts c = {
		.loads = loads, .load_misses = load_misses, .stores = stores,
		.store_misses = store_misses, .lat_sum = lat_sum,
	};

	c.lvl[CP_LVL_L1] = loads + stores - load_misses - store_misses;
	c.lvl[lvl] += load_misses + store_misses;
	assert_int_equal(cp_insn_store__add(s, &k, &c), 0);
}

static int fake_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz)
{
	(void)ctx;
	if (ip != 0x401000)
		return -1;
	snprintf(buf, sz, "walk (matrix.c:%u)", tgid);
	return 0;
}

static void test_pmu_report(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(16);
	struct cp_report_target t = { .pid = 77, .comm = "matrix" };
	struct cp_report r = {
		.source = "pebs", .source_reason = "pebs: the cpu PMU (skylake)",
		.duration_s = 12.04, .end_reason = "duration reached",
		.targets = &t, .nr_targets = 1, .insns = s, .received = 300,
		.locate = fake_locate,
	};
	char *text;

	(void)state;
	/* 200 of 1000 loads missed at 0x401000, mostly to L3, 40 cycles on average */
	add(s, 77, 0x401000, 1000, 200, 0, 0, CP_LVL_L3, 40000);
	/* fewer misses, more samples: ranked second */
	add(s, 77, 0x402000, 5000, 100, 0, 0, CP_LVL_L2, 0);
	/* a store instruction: 1 of 4 missed to local RAM */
	add(s, 77, 0x403000, 0, 0, 4, 1, CP_LVL_LOCAL_RAM, 0);
	r.bpf.samples[CP_ACCESS_LOAD] = 6000;
	r.bpf.misses[CP_ACCESS_LOAD] = 300;
	r.bpf.samples[CP_ACCESS_STORE] = 4;
	r.bpf.misses[CP_ACCESS_STORE] = 1;
	r.bpf.forwarded = 301;
	r.bpf.filtered = 7;
	r.bpf.drop_ringbuf = 1;
	text = render(&r);
	expect_line(text, "  source:   pebs: the cpu PMU (skylake)\n");
	expect_line(text, "  duration: 12.0 s (duration reached)\n");
	expect_line(text, "  targets:  77 (matrix)\n");
	/* 300 / 6000 = 5.0 %, 1 / 4 = 25.0 % */
	expect_line(text, "  load samples:  6000, misses 300 (5.0 %), level unknown 0\n");
	expect_line(text, "  store samples: 4, misses 1 (25.0 %), level unknown 0\n");
	expect_line(text, "filtered (window below the miss-ratio threshold): 7\n");
	expect_line(text, "Instructions with the most sampled misses (3 of 3)\n");
	/* 200 / 1000 = 20.0 %, 40000 / 1000 = 40 cycles, the misses served by L3 */
	expect_line(text, "      1000       200   20.0 %       0       40  L3                77  "
			  "0x401000         walk (matrix.c:77)\n");
	/* ranked by misses: 0x401000 (200) before 0x402000 (100) before 0x403000 (1) */
	assert_true(strstr(text, "0x401000") < strstr(text, "0x402000"));
	assert_true(strstr(text, "0x402000") < strstr(text, "0x403000"));
	/* 1 miss of 4, served by local RAM: no latency on stores */
	expect_line(text, "         4         1   25.0 %       0        -  Local RAM");
	expect_line(text, "  ring buffer full: 1, counter map full: 0, no window for the CPU: 0\n");
	expect_line(text, "  records received: 300 of 301 forwarded\n");
	free(text);
	cp_insn_store__free(s);
}

static void test_no_levels_and_all_processes(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(16);
	struct cp_report r = { .source = "faults", .insns = s, .top = 1 };
	char *text;

	(void)state;
	add(s, 5, 0x1000, 3, 0, 0, 0, CP_LVL_NA, 0);
	add(s, 6, 0x2000, 9, 0, 0, 0, CP_LVL_NA, 0);
	r.bpf.samples[CP_ACCESS_LOAD] = 12;
	r.bpf.na[CP_ACCESS_LOAD] = 12;
	text = render(&r);
	expect_line(text, "  source:   faults\n");
	expect_line(text, "  targets:  every process (-a)\n");
	expect_line(text, "  samples: 12 (the source reports no cache levels)\n");
	/* --top 1 of two: the one with more samples */
	expect_line(text, "Instructions with the most samples (1 of 2)\n");
	expect_line(text, "         9        6  0x2000");
	assert_null(strstr(text, "0x1000"));
	assert_null(strstr(text, "misses"));
	free(text);
	cp_insn_store__free(s);
}

/* The soft source says under its name that its figures are time shares. */
static void test_soft_note(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(16);
	struct cp_report r = {
		.source = "soft", .source_reason = "soft: requested with --source soft", .insns = s,
	};
	char *text;

	(void)state;
	text = render(&r);
	expect_line(text, "  source:   soft: requested with --source soft\n"
		    "  note:     pattern-based, no PMU: impact is time share, not measured misses\n");
	free(text);
	r.source = "faults";
	text = render(&r);
	assert_null(strstr(text, "note:"));
	free(text);
	cp_insn_store__free(s);
}

/*
 * After guard back-offs: a heap group with samples in objects that lived
 * through one says how many may be stale, memory with no allocation seen
 * may come from a back-off, and the guard line counts both.
 */
static void test_guard_backoff_doubts(void **state)
{
	struct cp_object_stats *os = cp_object_stats__new(16);
	struct cp_report r = {
		.source = "faults", .objects = os, .have_alloc = true, .guard_backoffs = 2,
		.backoff_doubtful = 3, .backoff_unseen = 1,
	};
	struct cp_resolved stale = {
		.kind = CP_OBJ_HEAP, .start = 0x1000, .size = 64, .callsite = 1, .tid = 7,
		.flags = CP_OBJ_F_GUARD_BACKOFF,
	};
	struct cp_resolved fresh = stale, unseen = {
		.kind = CP_OBJ_UNKNOWN, .start = 0x555000, .before_attach = true, .backoff = true,
	};
	char *text;

	(void)state;
	assert_non_null(os);
	strcpy(unseen.name, "[heap]");
	fresh.start = 0x2000;
	fresh.flags = 0;
	for (int i = 0; i < 3; i++)
		assert_int_equal(cp_object_stats__add(os, 9, &stale, 0x401000, true), 0);
	assert_int_equal(cp_object_stats__add(os, 9, &fresh, 0x401000, true), 0);
	assert_int_equal(cp_object_stats__add(os, 9, &unseen, 0, true), 0);
	text = render(&r);
	expect_line(text, "         4        9  heap object (64 bytes) allocated at 0x401000 by thread 7 "
		    "(3 samples may be stale: allocation probes backed off while it lived)\n");
	expect_line(text, "         1        9  [heap], allocated before attach or while allocation "
		    "probes were backed off\n");
	expect_line(text, "  allocation guard back-offs: 2; samples attributed with doubt: 3 in objects "
		    "that lived through a back-off, 1 in memory maybe allocated during one\n");
	free(text);
	r.launched = true;
	text = render(&r);
	expect_line(text, "  [heap], allocated while allocation probes were backed off\n");
	free(text);
	cp_object_stats__free(os);
}

/*
 * The system-call programs skipped some allocation windows (their last one
 * recorded no mapping): the drops section says how many went with them and
 * how many without, and what that leaves unseen. None skipped: no line.
 */
static void test_syscall_windows(void **state)
{
	struct cp_report r = { .source = "soft", .have_alloc = true };
	char *text;

	(void)state;
	r.alloc.syscall_windows = 4;
	text = render(&r);
	if (strstr(text, "system-call programs:"))
		fail_msg("a line on the system-call programs though none skipped a window:\n%s", text);
	free(text);
	r.alloc.syscall_windows_skipped = 7;
	text = render(&r);
	expect_line(text, "  system-call programs: with 4 allocation windows, without 7 (the last they "
		    "went with recorded no mapping; mappings made then are unseen)\n");
	free(text);
}

static void test_empty_report(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(4);
	struct cp_report r = { .source = "pebs", .insns = s };
	char *text;

	(void)state;
	text = render(&r);
	expect_line(text, "  none: no sample of a target arrived\n");
	expect_line(text, "misses 0 (-)");
	free(text);
	cp_insn_store__free(s);
}

static void test_preflight(void **state)
{
	struct cp_sysinfo si;
	char err[512];

	(void)state;
	memset(&si, 0, sizeof(si));
	cp_privileges_eval(0, ~0ull, &si.priv);
	assert_int_equal(cp_preflight(&si, err, sizeof(err)), 0);

	/* root in a container started with --cap-drop: the capabilities decide */
	cp_privileges_eval(0, 0, &si.priv);
	assert_int_equal(cp_preflight(&si, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "missing CAP_BPF, CAP_PERFMON"));
	assert_non_null(strstr(err, "run as root"));

	cp_privileges_eval(0, ~0ull, &si.priv);
	si.btf_err = -ENOENT;
	assert_int_equal(cp_preflight(&si, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "CONFIG_DEBUG_INFO_BTF=y"));

	si.btf_err = 0;
	si.bpf_load_err = -ENOSYS;
	assert_int_equal(cp_preflight(&si, err, sizeof(err)), -ENOSYS);
	assert_non_null(strstr(err, "no bpf() system call"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmu_report),
		cmocka_unit_test(test_no_levels_and_all_processes),
		cmocka_unit_test(test_soft_note),
		cmocka_unit_test(test_guard_backoff_doubts),
		cmocka_unit_test(test_syscall_windows),
		cmocka_unit_test(test_empty_report),
		cmocka_unit_test(test_preflight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
