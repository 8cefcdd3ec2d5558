// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the Prometheus file says about issues and processes: locations as
 * "function file:line", objects as a global's name or an allocation call
 * site, both cut at CP_PROM_TEXT_MAX bytes on a character boundary; at most
 * --prom-top issue series plus "other" holding the rest; series labelled
 * by comm, container and cgroup (a pid only with --prom-pid-label), and
 * issues or processes with the same labels summed into one series (never
 * a duplicate series, even when names differ only in bytes that are not
 * UTF-8 or past the cut); at most CP_PROM_MAX_PROCS process series plus
 * "other"; a process's current comm before the one it had at start; the
 * profiler's own figures only when given.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/proc_summaries.h"
#include "report/prom_metrics.h"
#include "lib/golden_text.h"

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
	char buf[CP_PROM_TEXT_MAX + 1];

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

/*
 * No series twice in a family: each sample line's name and labels differ
 * from every other's (promtool rejects a file that repeats one).
 */
static void assert_no_duplicate_series(const char *text)
{
	const char *line = text;

	for (const char *next; *line; line = next) {
		const char *sp = strchr(line, ' ');
		const char *other = text;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (line[0] == '#' || !sp)
			continue;
		for (; other < line; other = strchr(other, '\n') + 1)
			if (!strncmp(other, line, (size_t)(sp - line) + 1))
				fail_msg("a series twice: %.*s", (int)(sp - line), line);
	}
}

/* --prom-pid-label: one series per process, as before the labels scaled */
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
		.r = &r, .issues = &c, .window_s = 60, .top = 2, .pmu = "none",
		.comm = fake_comm, .pid_label = true,
	};
	char *text;

	(void)state;
	text = render(&in);
	/* the first two are one series; top 2 takes the conflict too; the rest is other */
	assert_non_null(strstr(text, "cacheperf_issue_miss_share_ratio{type=\"capacity\",origin="
				     "\"application\",pid=\"1\",comm=\"renamed\",container=\"\",cgroup="
				     "\"\",location=\"walk walk.c:42\",object=\"\"} 0.5\n"));
	assert_non_null(strstr(text, "cacheperf_issue_miss_share_ratio{type=\"conflict\",origin="
				     "\"application\",pid=\"2\",comm=\"two\",container=\"\",cgroup=\"\","
				     "location=\"scan scan.c:9\",object=\"\"} 0.2\n"));
	assert_non_null(strstr(text, "cacheperf_issue_miss_share_ratio{type=\"other\",origin=\"\","
				     "pid=\"\",comm=\"\",container=\"\",cgroup=\"\",location=\"\","
				     "object=\"\"} 0.05\n"));
	assert_non_null(strstr(text, "cacheperf_issue_misses_per_second{type=\"other\",origin=\"\","
				     "pid=\"\",comm=\"\",container=\"\",cgroup=\"\",location=\"\","
				     "object=\"\"} 50\n"));
	assert_int_equal(count(text, "cacheperf_issue_miss_share_ratio{"), 3);
	assert_int_equal(count(text, "# TYPE cacheperf_issue_miss_share_ratio gauge\n"), 1);
	assert_non_null(strstr(text, "\ncacheperf_issues 4\n"));
	/* page faults carry no latency: that family is left out, not 0 */
	assert_null(strstr(text, "cacheperf_issue_latency_cycles_per_second"));
	/* no profiler figures given: none written */
	assert_null(strstr(text, "cacheperf_agent_"));
	assert_null(strstr(text, "cacheperf_last_write"));
	assert_no_duplicate_series(text);
	free(text);
}

#define C1 "1111111111111111111111111111111111111111111111111111111111111111"
#define C2 "2222222222222222222222222222222222222222222222222222222222222222"

/*
 * The fake machine: pids 10 and 11 are two workers of container C1, 12 a
 * worker of C2; 13 and 14 are named by bytes that are not UTF-8 (0xff,
 * 0xfe), both of one service.
 */
static void describe(void *ctx, struct cp_proc_summary *s, unsigned int what)
{
	(void)ctx;
	(void)what; /* asked for both: only samples make these summaries */
	s->cg.runtime = "";
	if (s->pid <= 12) {
		snprintf(s->comm, sizeof(s->comm), "worker");
		snprintf(s->cg.container_id, sizeof(s->cg.container_id), "%s",
			 s->pid < 12 ? C1 : C2);
		snprintf(s->cg.path, sizeof(s->cg.path), "/system.slice/docker-%s.scope",
			 s->cg.container_id);
	} else {
		snprintf(s->comm, sizeof(s->comm), "a%c", s->pid == 13 ? 0xff : 0xfe);
		snprintf(s->cg.path, sizeof(s->cg.path), "/system.slice/x.service");
	}
}

#define LABELS_C1 "comm=\"worker\",container=\"" C1 "\",cgroup=\"/system.slice/docker-" C1 ".scope\""
#define LABELS_C2 "comm=\"worker\",container=\"" C2 "\",cgroup=\"/system.slice/docker-" C2 ".scope\""
#define LABELS_X  "comm=\"a\xef\xbf\xbd\",container=\"\",cgroup=\"/system.slice/x.service\""

/* Two workers of one container are one series; another container's, another. */
static void test_series_by_identity(void **state)
{
	struct cp_proc_summaries *procs = cp_proc_summaries__new(16, describe, NULL);
	struct cp_insn_store *s = cp_insn_store__new(64);
	struct cp_issue list[5] = {
		issue(CP_ISSUE_CAPACITY, 10, "walk", "walk.c", 42, 0.3),
		issue(CP_ISSUE_CONFLICT, 13, "scan", "scan.c", 9, 0.2),
		issue(CP_ISSUE_CAPACITY, 12, "walk", "walk.c", 42, 0.15),
		/* ranked past --prom-top 3, yet the labels of the first: summed into it */
		issue(CP_ISSUE_CAPACITY, 11, "walk", "walk.c", 42, 0.125),
		/* "a\xfe" and "a\xff" are both "a\uFFFD" in the file: one series */
		issue(CP_ISSUE_CONFLICT, 14, "scan", "scan.c", 9, 0.0625),
	};
	struct cp_classification c = { .issues = list, .nr_issues = 5 };
	struct cp_report r = { .source = "pebs", .insns = s, .procs = procs };
	struct cp_prom_input in = { .r = &r, .issues = &c, .window_s = 60, .top = 3, .pmu = "pebs" };
	char *text;

	(void)state;
	assert_non_null(procs);
	for (__u32 p = 10; p <= 14; p++) {
		struct cp_ip_key k = { .tgid = p, .ip = 0x10 };
		/* pid p: p loads, one of them a miss */
		struct cp_ip_counts n = { .loads = p, .load_misses = 1, .lvl = { [CP_LVL_L1] = 1 } };

		assert_int_equal(cp_proc_summaries__sample(procs, (pid_t)p, false), 0);
		assert_int_equal(cp_insn_store__add(s, &k, &n), 0);
	}
	r.bpf.samples[CP_ACCESS_LOAD] = 1;	/* levels known: the miss families are written */
	text = render(&in);
	static const char *const want[] = {
		/* 0.3 + 0.125 */
		"\ncacheperf_issue_miss_share_ratio{type=\"capacity\",origin=\"application\","
		LABELS_C1 ",location=\"walk walk.c:42\",object=\"\"} 0.425\n",
		/* 0.2 + 0.0625 */
		"\ncacheperf_issue_miss_share_ratio{type=\"conflict\",origin=\"application\","
		LABELS_X ",location=\"scan scan.c:9\",object=\"\"} 0.2625\n",
		"\ncacheperf_issue_miss_share_ratio{type=\"capacity\",origin=\"application\","
		LABELS_C2 ",location=\"walk walk.c:42\",object=\"\"} 0.15\n",
		/* nothing left for other */
		"\ncacheperf_issue_miss_share_ratio{type=\"other\",origin=\"\",comm=\"\",container=\"\","
		"cgroup=\"\",location=\"\",object=\"\"} 0\n",
		/* PEBS has latencies: the family is there, its other series 0 */
		"\ncacheperf_issue_latency_cycles_per_second{type=\"other\",origin=\"\",comm=\"\","
		"container=\"\",cgroup=\"\",location=\"\",object=\"\"} 0\n",
		/* pids 10 + 11: 21 samples, 2 misses of 21 loads */
		"\ncacheperf_process_samples{" LABELS_C1 "} 21\n",
		"\ncacheperf_process_misses{" LABELS_C1 "} 2\n",
		"\ncacheperf_process_load_miss_ratio{" LABELS_C1 "} 0.0952380952380952\n",
		/* pids 13 + 14 */
		"\ncacheperf_process_samples{" LABELS_X "} 27\n",
		"\ncacheperf_process_samples{" LABELS_C2 "} 12\n",
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("missing '%s' in:\n%s", want[i], text);
	assert_int_equal(count(text, "cacheperf_issue_miss_share_ratio{"), 4);
	assert_int_equal(count(text, "cacheperf_process_samples{"), 3);
	assert_null(strstr(text, "pid="));
	assert_no_duplicate_series(text);
	free(text);

	/* --prom-pid-label: a series per process, five issues need top 5 */
	in.pid_label = true;
	in.top = 5;
	text = render(&in);
	assert_int_equal(count(text, "cacheperf_issue_miss_share_ratio{"), 6);
	assert_int_equal(count(text, "cacheperf_process_samples{"), 5);
	assert_non_null(strstr(text, "\ncacheperf_process_samples{pid=\"11\"," LABELS_C1 "} 11\n"));
	assert_no_duplicate_series(text);
	free(text);
	cp_insn_store__free(s);
	cp_proc_summaries__free(procs);
}

/* Locations and objects are cut at CP_PROM_TEXT_MAX bytes, whole characters, with a marker. */
static void test_long_labels(void **state)
{
	char fn[CP_LOC_FUNCTION_LEN], want[CP_PROM_TEXT_MAX + 1], buf[CP_PROM_TEXT_MAX + 1];
	struct cp_issue is;
	size_t i;

	(void)state;
	/* 120 bytes of name, then " walk.c:42": 130 bytes; 125 kept and "…" (3 bytes) */
	memset(fn, 'f', 120);
	fn[120] = '\0';
	is = issue(CP_ISSUE_CAPACITY, 1, fn, "walk.c", 42, 0.5);
	cp_prom_location(&is, buf, sizeof(buf));
	memcpy(want, fn, 120);
	strcpy(want + 120, " walk\xe2\x80\xa6");
	assert_string_equal(buf, want);
	assert_int_equal(strlen(buf), CP_PROM_TEXT_MAX);

	/* 63 two-byte characters (é) and " walk.c:42": 62 fit in 125 bytes, the 63rd would not */
	for (i = 0; i < 63; i++)
		memcpy(fn + 2 * i, "\xc3\xa9", 2);
	fn[126] = '\0';
	is = issue(CP_ISSUE_CAPACITY, 1, fn, "walk.c", 42, 0.5);
	cp_prom_location(&is, buf, sizeof(buf));
	assert_int_equal(strlen(buf), 62 * 2 + 3);
	assert_memory_equal(buf, fn, 124);
	assert_string_equal(buf + 124, "\xe2\x80\xa6");

	/* an allocation call site, "ggg... table.c:7" (130 bytes): cut the same way */
	is.nr_objects = 1;
	is.objects[0].kind = CP_OBJ_HEAP;
	is.objects[0].nr_frames = 1;
	memset(is.objects[0].alloc_stack[0].function, 'g', 120);
	is.objects[0].alloc_stack[0].function[120] = '\0';
	strcpy(is.objects[0].alloc_stack[0].file, "table.c");
	is.objects[0].alloc_stack[0].line = 7;
	cp_prom_object(&is, buf, sizeof(buf));
	assert_int_equal(strlen(buf), CP_PROM_TEXT_MAX);
	assert_string_equal(buf + 125, "\xe2\x80\xa6");
}

/* Two names that differ only past the cut are one series, not a repeated one. */
static void test_cut_names_one_series(void **state)
{
	char a[CP_LOC_FUNCTION_LEN], b[CP_LOC_FUNCTION_LEN];
	struct cp_issue list[2];
	struct cp_classification c = { .issues = list, .nr_issues = 2 };
	struct cp_report r = { .source = "soft" };
	struct cp_prom_input in = { .r = &r, .issues = &c, .window_s = 10, .top = 20, .pmu = "none" };
	char *text;

	(void)state;
	memset(a, 'f', 126);
	memcpy(b, a, 126);
	a[126] = 'X';
	b[126] = 'Y';
	a[127] = b[127] = '\0';
	/* "fff...X walk.c:42", 137 bytes: both keep the same 125 */
	list[0] = issue(CP_ISSUE_CAPACITY, 1, a, "walk.c", 42, 0.5);
	list[1] = issue(CP_ISSUE_CAPACITY, 1, b, "walk.c", 42, 0.25);
	text = render(&in);
	assert_int_equal(count(text, "cacheperf_issue_miss_share_ratio{"), 2);	/* and other */
	assert_non_null(strstr(text, "\xe2\x80\xa6\",object=\"\"} 0.75\n"));
	assert_no_duplicate_series(text);
	free(text);
}

static void test_processes_bounded_and_self(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(1024);
	struct cp_report r = { .source = "pebs", .insns = s,
			       .agent = { .known = true, .startup_cpu_ns = 250000000,
					  .steady_cpu_ns = 1500000000, .memory_known = true,
					  .memory_bytes = 4096, .peak_memory_bytes = 8192 } };
	struct cp_prom_self self = {
		.write_time = 1e9,
		.copies = { .made = 3, .hits = 7, .evictions = 1, .held = 2, .held_bytes = 8192 },
	};
	/* pid labels: without them these nameless processes would be one series */
	struct cp_prom_input in = { .r = &r, .window_s = 10, .top = 20, .pmu = "pebs",
				    .self = &self, .pid_label = true };
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
		"\ncacheperf_process_samples{pid=\"1\",comm=\"\",container=\"\",cgroup=\"\"} 999\n",
		/* the three with the fewest samples: 1000-65 + 1000-66 + 1000-67 */
		"\ncacheperf_process_samples{pid=\"other\",comm=\"other\",container=\"other\","
		"cgroup=\"other\"} 2802\n",
		"\ncacheperf_process_load_miss_ratio{pid=\"1\",comm=\"\",container=\"\",cgroup=\"\"} "
		"0.0990990990990991\n",
		"\ncacheperf_agent_cpu_seconds_total{phase=\"startup\"} 0.25\n",
		"\ncacheperf_agent_cpu_seconds_total{phase=\"steady\"} 1.5\n",
		"\ncacheperf_agent_memory_bytes{kind=\"now\"} 4096\n",
		"\ncacheperf_agent_memory_bytes{kind=\"peak\"} 8192\n",
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

/*
 * A live run's file, byte for byte: tests/data/prom/golden-live.prom, the
 * families a recording leaves out (latency, misses, breakpoints, budget, the
 * profiler's figures) with values derived in tests/data/prom/README.md.
 */
static void test_live_golden(void **state)
{
	struct cp_proc_summaries *procs = cp_proc_summaries__new(16, describe, NULL);
	struct cp_insn_store *s = cp_insn_store__new(64);
	struct cp_issue list[1] = { issue(CP_ISSUE_FALSE_SHARING, 10, "bump", "bump.c", 3, 0.5) };
	struct cp_classification c = { .issues = list, .nr_issues = 1 };
	struct cp_bp_summary bp = { .stats = { .hits = 100, .armed = 3, .dropped = 1, .watching = 1,
					       .released = { [CP_BPM_SETTLED] = 2 } } };
	struct cp_report r = { .source = "pebs", .insns = s, .procs = procs, .bp = &bp };
	struct cp_prom_self self = {
		.write_time = 1e9,
		.copies = { .made = 3, .hits = 7, .evictions = 1, .held = 2, .held_bytes = 8192 },
	};
	struct cp_prom_input in = { .r = &r, .issues = &c, .window_s = 60, .top = 20, .pmu = "pebs",
				    .self = &self };
	struct cp_ip_key k = { .tgid = 10, .ip = 0x401003 };
	struct cp_ip_counts n = { .loads = 10, .load_misses = 2, .stores = 5, .store_misses = 1,
				  .lvl = { [CP_LVL_L1] = 12, [CP_LVL_L2] = 3 } };
	const char *root = getenv("CP_ROOT");
	char path[512];
	char *text;

	(void)state;
	list[0].have_cost = true;
	list[0].cost_cycles_per_s = 25000;
	assert_int_equal(cp_proc_summaries__sample(procs, 10, true), 0);
	assert_int_equal(cp_insn_store__add(s, &k, &n), 0);
	r.bpf.samples[CP_ACCESS_LOAD] = 10;
	r.bpf.samples[CP_ACCESS_STORE] = 5;
	r.bpf.misses[CP_ACCESS_LOAD] = 2;
	r.bpf.misses[CP_ACCESS_STORE] = 1;
	r.received = 3;
	r.budget.plan.budget_ppm = 10000;
	r.budget.unit = (struct cp_unit_costs){ .tick_ns = 2000, .uprobe_ns = 1000,
						.uretprobe_ns = 1500, .bp_hit_ns = 4000,
						.wakeup_ns = 3000, .syscall_ns = 100,
						.tick_prog_ns = 300 };
	r.budget.spent.target_cpu_ns = 1000000000;
	r.budget.spent.ticks_ns = 2000000;
	r.budget.spent.bp_ns = 1000000;
	r.budget.spent.intervals = 3;
	r.budget.spent.interval_ppm = 8500; /* the costliest 10 s */
	r.agent = (struct cp_agent_cost){ .known = true, .startup_cpu_ns = 250000000,
					  .steady_cpu_ns = 1500000000, .memory_known = true,
					  .memory_bytes = 4096, .peak_memory_bytes = 8192 };
	text = render(&in);
	snprintf(path, sizeof(path), "%s/tests/data/prom/golden-live.prom", root ? root : ".");
	cp_test_golden("golden-live.prom", path, text);
	free(text);
	cp_insn_store__free(s);
	cp_proc_summaries__free(procs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_top_other_and_merged_series),
		cmocka_unit_test(test_series_by_identity),
		cmocka_unit_test(test_long_labels),
		cmocka_unit_test(test_cut_names_one_series),
		cmocka_unit_test(test_live_golden),
		cmocka_unit_test(test_processes_bounded_and_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
