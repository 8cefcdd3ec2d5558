// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the Prometheus file says about issues and processes: locations as
 * "function file:line", objects as a global's name or an allocation call
 * site, at most --prom-top issue series plus "other" holding the rest,
 * issues with the same labels as one series (never a duplicate series),
 * at most CP_PROM_MAX_PROCS processes plus pid "other", a process's
 * current comm before the one it had at start, and the profiler's own
 * figures only when given.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/prom_metrics.h"

static struct cp_issue issue(enum cp_issue_type t, __u32 pid, const char *fn, const char *file,
			     __u32 line, double score)
{
	struct cp_issue is;

	memset(&is, 0, sizeof(is));
	is.type = t;
	is.tgid = pid;
	is.score = score;
	is.misses_per_s = score * 1000;
	is.nr_insns = 1;
	is.insns[0].ip = 0x401000 + line;
	is.insns[0].have_loc = fn != NULL;
	snprintf(is.insns[0].loc.function, CP_LOC_FUNCTION_LEN, "%s", fn ? fn : "");
	snprintf(is.insns[0].loc.file, CP_LOC_FILE_LEN, "%s", file ? file : "");
	is.insns[0].loc.line = line;
	return is;
}

static void test_labels(void **state)
{
	struct cp_issue is = issue(CP_ISSUE_CAPACITY, 1, "walk", "/src/app/walk.c", 42, 0.5);
	char buf[CP_PROM_LABEL_LEN];

	(void)state;
	cp_prom_location(&is, buf, sizeof(buf));
	assert_string_equal(buf, "walk walk.c:42");
	is.insns[0].loc.line = 0;
	cp_prom_location(&is, buf, sizeof(buf));
	assert_string_equal(buf, "walk");
	is.insns[0].have_loc = false;
	cp_prom_location(&is, buf, sizeof(buf));
	assert_string_equal(buf, "0x40102a");

	cp_prom_object(&is, buf, sizeof(buf));
	assert_string_equal(buf, "");
	is.nr_objects = 1;
	is.objects[0].kind = CP_OBJ_GLOBAL;
	strcpy(is.objects[0].name, "counters");
	cp_prom_object(&is, buf, sizeof(buf));
	assert_string_equal(buf, "counters");
	is.objects[0].kind = CP_OBJ_HEAP;
	is.objects[0].name[0] = '\0';
	cp_prom_object(&is, buf, sizeof(buf));
	assert_string_equal(buf, "heap");	/* no call site known */
	is.objects[0].nr_frames = 1;
	strcpy(is.objects[0].alloc_stack[0].function, "make_table");
	strcpy(is.objects[0].alloc_stack[0].file, "table.c");
	is.objects[0].alloc_stack[0].line = 7;
	cp_prom_object(&is, buf, sizeof(buf));
	assert_string_equal(buf, "make_table table.c:7");
}

static int fake_comm(void *ctx, __u32 pid, char *buf, size_t sz)
{
	(void)ctx;
	if (pid != 1)
		return -1;
	snprintf(buf, sz, "renamed");
	return 0;
}

static char *render(const struct cp_prom_input *in)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);

	assert_non_null(f);
	assert_int_equal(cp_prom_metrics_write(in, f), 0);
	fclose(f);
	return p;
}

static size_t count(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static void test_top_other_and_merged_series(void **state)
{
	struct cp_issue list[4] = {
		issue(CP_ISSUE_CAPACITY, 1, "walk", "walk.c", 42, 0.4),
		/* the same labels as the first (another instruction of the line) */
		issue(CP_ISSUE_CAPACITY, 1, "walk", "walk.c", 42, 0.1),
		issue(CP_ISSUE_CONFLICT, 2, "scan", "scan.c", 9, 0.2),
		issue(CP_ISSUE_FALSE_SHARING, 2, "bump", "bump.c", 3, 0.05),
	};
	struct cp_classification c = { .issues = list, .nr_issues = 4 };
	struct cp_report_target targets[] = { { 1, "atstart" }, { 2, "two" } };
	struct cp_report r = { .source = "faults", .targets = targets, .nr_targets = 2 };
	struct cp_prom_input in = {
		.r = &r, .issues = &c, .window_s = 60, .top = 3, .pmu = "none",
		.comm = fake_comm,
	};
	char *text;

	(void)state;
	text = render(&in);
	/* the first two are one series; top 3 takes the conflict too; the rest is other */
	assert_non_null(strstr(text, "cacheperf_issue_miss_share_ratio{type=\"capacity\",origin="
				     "\"application\",pid=\"1\",comm=\"renamed\",location=\"walk "
				     "walk.c:42\",object=\"\"} 0.5\n"));
	assert_non_null(strstr(text, "cacheperf_issue_miss_share_ratio{type=\"conflict\",origin="
				     "\"application\",pid=\"2\",comm=\"two\",location=\"scan scan.c:9\""
				     ",object=\"\"} 0.2\n"));
	assert_non_null(strstr(text, "cacheperf_issue_miss_share_ratio{type=\"other\",origin=\"\","
				     "pid=\"\",comm=\"\",location=\"\",object=\"\"} 0.05\n"));
	assert_non_null(strstr(text, "cacheperf_issue_misses_per_second{type=\"other\",origin=\"\","
				     "pid=\"\",comm=\"\",location=\"\",object=\"\"} 50\n"));
	assert_int_equal(count(text, "cacheperf_issue_miss_share_ratio{"), 3);
	assert_int_equal(count(text, "# TYPE cacheperf_issue_miss_share_ratio gauge\n"), 1);
	assert_non_null(strstr(text, "\ncacheperf_issues 4\n"));
	/* no profiler figures given: none written */
	assert_null(strstr(text, "cacheperf_profiler_"));
	assert_null(strstr(text, "cacheperf_last_write"));
	free(text);
}

static void test_processes_bounded_and_self(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(1024);
	struct cp_report r = { .source = "pebs", .insns = s };
	struct cp_prom_self self = { .cpu_seconds = 1.5, .rss_bytes = 4096, .write_time = 1e9 };
	struct cp_prom_input in = { .r = &r, .window_s = 10, .top = 20, .pmu = "pebs",
				    .self = &self };
	char *text;

	(void)state;
	/* CP_PROM_MAX_PROCS + 3 processes; pid p has 1000 - p loads, a tenth of them missing */
	for (__u32 p = 1; p <= CP_PROM_MAX_PROCS + 3; p++) {
		struct cp_ip_key k = { .tgid = p, .ip = 0x10 };
		struct cp_ip_counts c = { .loads = 1000 - p, .load_misses = (1000 - p) / 10,
					  .lvl = { [CP_LVL_L1] = 1 } };

		assert_int_equal(cp_insn_store__add(s, &k, &c), 0);
	}
	static const char *const want[] = {
		"\ncacheperf_process_samples{pid=\"1\",comm=\"\"} 999\n",
		/* the three with the fewest samples: 1000-65 + 1000-66 + 1000-67 */
		"\ncacheperf_process_samples{pid=\"other\",comm=\"\"} 2802\n",
		"\ncacheperf_process_load_miss_ratio{pid=\"1\",comm=\"\"} 0.0990990990990991\n",
		"\ncacheperf_profiler_cpu_seconds_total 1.5\n",
		"\ncacheperf_profiler_resident_memory_bytes 4096\n",
		"\ncacheperf_last_write_timestamp_seconds 1000000000\n",
		"\ncacheperf_source_info{source=\"pebs\",pmu=\"pebs\"} 1\n",
	};

	r.bpf.samples[CP_ACCESS_LOAD] = 1;
	text = render(&in);
	assert_int_equal(count(text, "cacheperf_process_samples{"), CP_PROM_MAX_PROCS + 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("missing '%s' in:\n%s", want[i], text);
	/* no stores: no store ratio rather than 0/0 */
	assert_null(strstr(text, "cacheperf_process_store_miss_ratio{"));
	free(text);
	cp_insn_store__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_top_other_and_merged_series),
		cmocka_unit_test(test_processes_bounded_and_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
