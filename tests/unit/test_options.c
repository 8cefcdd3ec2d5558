// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Option parsing: every accepted form and every usage error path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "cli/options.h"

#define MAX_ARGS 32

/* Splits @line on spaces into a fresh argv (argv[0] = "cacheperf-bpf"). */
static int split(const char *line, char *buf, size_t buf_sz, char **argv)
{
	int argc = 0;
	char *save = NULL, *tok;

	snprintf(buf, buf_sz, "cacheperf-bpf %s", line);
	for (tok = strtok_r(buf, " ", &save); tok && argc < MAX_ARGS - 1;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	return argc;
}

static int parse(const char *line, struct cp_options *o, char *err, size_t err_sz)
{
	static char buf[512];
	static char *argv[MAX_ARGS];
	int argc = split(line, buf, sizeof(buf), argv);

	return cp_options_parse(argc, argv, o, err, err_sz);
}

struct error_case {
	const char *args;
	const char *message;	/* substring the user must see */
};

static const struct error_case error_cases[] = {
	{ "", "no target" },
	{ "-v", "no target" },
	{ "-p", "needs a value" },
	{ "-p abc", "'abc' is not a process ID" },
	{ "-p 0", "'0' is not a process ID" },
	{ "-p -5", "is not a process ID" },
	{ "-p 12x", "'12x' is not a process ID" },
	{ "-p 99999999999999999999", "is not a process ID" },
	{ "-p ,", "no process ID" },
	{ "-p 1 -a", "choose one target" },
	{ "-a -p 1", "choose one target" },
	{ "-a -- true", "choose one target" },
	{ "-p 1 -- true", "choose one target" },
	{ "-a --", "no command after --" },
	{ "-a stray", "unexpected argument 'stray'" },
	{ "-x -a", "unknown option '-x'" },
	{ "--bogus -a", "unknown option '--bogus'" },
	{ "-a -d", "needs a value" },
	{ "-a -d 0", "--duration: '0' is not a whole number from 1" },
	{ "-a -d -1", "--duration: '-1'" },
	{ "-a -d 1.5", "--duration: '1.5'" },
	{ "-a -d 10s", "--duration: '10s'" },
	{ "-a -d 99999999999", "--duration" },
	{ "-a -i 0", "--interval: '0'" },
	{ "-a --ldlat 0", "--ldlat: '0' is not a whole number from 1 to 65535" },
	{ "-a --ldlat 65536", "--ldlat" },
	{ "-a --load-period 5", "--load-period: '5' is not a whole number from 100" },
	{ "-a --store-period x", "--store-period: 'x'" },
	{ "-a --max-sample-rate 0", "--max-sample-rate" },
	{ "-a --window 1", "--window: '1' is not a whole number from 2 to 512" },
	{ "-a --window 1024", "--window" },
	{ "-a --window 100", "--window: 100 is not a power of two" },
	{ "-a --window-miss-ratio abc", "--window-miss-ratio: 'abc' is not a percentage" },
	{ "-a --window-miss-ratio 101", "--window-miss-ratio" },
	{ "-a --window-miss-ratio -1", "--window-miss-ratio" },
	{ "-a --window-miss-ratio 0.5x", "--window-miss-ratio" },
	{ "-a --window-miss-ratio nan", "--window-miss-ratio" },
	{ "-a --top 0", "--top: '0' is not a whole number from 1 to 1000" },
	{ "-a --top 1001", "--top" },
	{ "-a --top 5x", "--top: '5x'" },
	{ "-a --min-access-share abc", "--min-access-share: 'abc' is not a percentage" },
	{ "-a --min-access-share 100.5", "--min-access-share" },
	{ "-a --min-miss-share -1", "--min-miss-share: '-1' is not a percentage" },
	{ "-a --app-load-miss 3x", "--app-load-miss: '3x' is not a percentage" },
	{ "-a --app-store-miss inf", "--app-store-miss" },
	{ "-a --app-store-miss", "needs a value" },
	{ "-a --source magic", "--source: 'magic' is not one of auto, pebs, ibs, soft, faults" },
	{ "--probe -a", "--probe takes no target" },
	{ "-a -o -", "-o: the text report goes to stdout without -o" },
	{ "-a --json r.json -o r.json", "-o and --json name the same file 'r.json'" },
	{ "-a -o", "needs a value" },
	{ "-a --record", "needs a value" },
	{ "report", "usage: cacheperf-bpf report FILE" },
	{ "report a b", "usage: cacheperf-bpf report FILE" },
	{ "report -a f", "report reads a recording: it takes no target" },
	{ "report --record x f", "no --record" },
	{ "diff", "usage: cacheperf-bpf diff BEFORE AFTER" },
	{ "diff a", "usage: cacheperf-bpf diff BEFORE AFTER" },
	{ "diff a b c", "usage: cacheperf-bpf diff BEFORE AFTER" },
	{ "diff -p 1 a b", "diff reads two recordings: it takes no target" },
	{ "diff --record x a b", "no --record" },
	{ "diff --prom-file p a b", "--prom-file is for a run or report FILE, not for diff" },
	{ "--fail-on-new -a", "--fail-on-new is for `cacheperf-bpf diff BEFORE AFTER`" },
	{ "report --fail-on-new f", "--fail-on-new is for" },
	{ "-a --window-seconds 0", "--window-seconds: '0' is not a whole number" },
	{ "-a -i 1 --window-seconds 61", "at most 60 intervals of 1 s in a window" },
	{ "-a --prom-top 0", "--prom-top: '0' is not a whole number from 1 to 1000" },
	{ "-a --prom-file -", "--prom-file: give a file name" },
	{ "-a --pprof -", "--pprof: give a file name" },
	{ "-a --folded -", "--folded: give a file name" },
	{ "-a --pprof p --folded p", "--pprof and --folded name the same file 'p'" },
	{ "-a --pprof", "needs a value" },
	{ "-a --pprof-dir=", "--pprof-dir: empty file name" },
	{ "-a --pprof-keep 0", "--pprof-keep: '0' is not a whole number from 1 to 100000" },
	{ "report --pprof-dir d run.cprec", "--pprof-dir writes a profile per interval of a run" },
	{ "-a --alloc-wrapper", "needs a value" },
	{ "-a --alloc-wrapper=", "--alloc-wrapper: '' is not a function name of 1 to 63" },
};

static void test_usage_errors(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const struct error_case *c = &error_cases[i];
		int ret = parse(c->args, &o, err, sizeof(err));

		if (ret != -EINVAL || !strstr(err, c->message))
			fail_msg("args '%s': ret %d, error '%s', want '%s'", c->args, ret, err,
				 c->message);
	}
}

static void test_defaults(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_PROFILE);
	assert_int_equal(o.target, CP_TARGET_ALL);
	assert_int_equal(o.duration_s, 0);
	assert_int_equal(o.interval_s, 10);
	assert_int_equal(o.source, CP_SOURCE_AUTO);
	assert_int_equal(o.ldlat_cycles, 3);
	assert_int_equal(o.load_period, 20000);
	assert_int_equal(o.store_period, 50000);
	assert_int_equal(o.max_sample_rate, 20000);
	assert_int_equal(o.window, 512);
	assert_int_equal(o.window_ratio_ppm, 5000);	/* 0.5 % */
	assert_int_equal(o.stack_every, 32);		/* docs/stacks.md: 164-224 ns a sample */
	/* the paper's filters (§3.5): 3 %, 1 %, 0.01 %, 1 %; ten issues */
	assert_int_equal(o.classify.app_load_miss_ppm, 30000);
	assert_int_equal(o.classify.app_store_miss_ppm, 10000);
	assert_int_equal(o.classify.min_access_ppm, 100);
	assert_int_equal(o.classify.min_miss_ppm, 10000);
	assert_int_equal(o.classify.top, 10);
	assert_null(o.cache_spec);
	assert_string_equal(o.sysfs_root, "/");
}

static void test_report_filters(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a --top 25 --min-access-share 0.05 --min-miss-share 2% "
			       "--app-load-miss 0 --app-store-miss 100", &o, err, sizeof(err)), 0);
	assert_int_equal(o.classify.top, 25);
	assert_int_equal(o.classify.min_access_ppm, 500);
	assert_int_equal(o.classify.min_miss_ppm, 20000);
	assert_int_equal(o.classify.app_load_miss_ppm, 0);
	assert_int_equal(o.classify.app_store_miss_ppm, 1000000);
	/* what the options do not set keeps its default */
	assert_int_equal(o.classify.min_line_miss_ppm, 10000);
	assert_int_equal(o.classify.conflict_min_accesses, 8);
	/* the window ratio still parses through the same path */
	assert_int_equal(parse("-a --window-miss-ratio 1.5", &o, err, sizeof(err)), 0);
	assert_int_equal(o.window_ratio_ppm, 15000);
	assert_int_equal(o.classify.min_miss_ppm, 10000);
}

static void test_outputs(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_null(o.output);
	assert_null(o.json);
	assert_int_equal(parse("-a -o report.txt --json -", &o, err, sizeof(err)), 0);
	assert_string_equal(o.output, "report.txt");
	assert_string_equal(o.json, "-");
	assert_int_equal(parse("--output=r.txt --json=r.json -a", &o, err, sizeof(err)), 0);
	assert_string_equal(o.output, "r.txt");
	assert_string_equal(o.json, "r.json");
}

/* --alloc-wrapper: repeatable, for a run and for report FILE alike */
static void test_alloc_wrappers(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a --alloc-wrapper zmalloc --alloc-wrapper=g_malloc", &o, err,
			       sizeof(err)), 0);
	assert_int_equal(o.alloc_wrappers.nr, 2);
	assert_string_equal(o.alloc_wrappers.names[1], "g_malloc");
	assert_int_equal(parse("report f.cprec --alloc-wrapper xmalloc", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_wrappers.nr, 1);
	assert_string_equal(o.report_path, "f.cprec");
}

/* --alloc-stack-bytes: by target kind when not given (-a sees every process start) */
static void test_alloc_stack_bytes(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-p 1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_stack_bytes, CP_USTACK_BYTES);
	assert_int_equal(parse("-- ./app", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_stack_bytes, CP_USTACK_BYTES);
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_stack_bytes, 0);
	assert_int_equal(parse("-a --alloc-stack-bytes 1024", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_stack_bytes, 1024);
	assert_int_equal(parse("-p 1 --alloc-stack-bytes 0", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_stack_bytes, 0);
	assert_int_equal(parse("-p 1 --alloc-stack-bytes 4097", &o, err, sizeof(err)), -EINVAL);
}

static void test_pid_list(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-p 12,34,56 -d 5 -i 2 -vv", &o, err, sizeof(err)), 0);
	assert_int_equal(o.target, CP_TARGET_PIDS);
	assert_int_equal(o.nr_pids, 3);
	assert_int_equal(o.pids[0], 12);
	assert_int_equal(o.pids[1], 34);
	assert_int_equal(o.pids[2], 56);
	assert_int_equal(o.duration_s, 5);
	assert_int_equal(o.interval_s, 2);
	assert_int_equal(o.verbose, 2);
	/* -p twice accumulates, as perf does not but users expect */
	assert_int_equal(parse("-p 1 --pid 2", &o, err, sizeof(err)), 0);
	assert_int_equal(o.nr_pids, 2);
}

/* --log-level and -v: whichever says more; a bad level is a usage error naming it. */
static void test_log_level(void **state)
{
	static const struct {
		const char *args;
		enum cp_log_level level;
	} cases[] = {
		{ "-a", CP_LOG_WARNING },
		{ "-a --log-level notice", CP_LOG_NOTICE },
		{ "-a --log-level err", CP_LOG_ERR },
		{ "-a --log-level 7", CP_LOG_DEBUG },
		{ "-a -v", CP_LOG_INFO },
		{ "-a -vv", CP_LOG_DEBUG },
		{ "-a --log-level notice -v", CP_LOG_INFO },
		{ "-a -v --log-level debug", CP_LOG_DEBUG },
		{ "-a -vv --log-level err", CP_LOG_DEBUG },
	};
	struct cp_options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(cases[i].args, &o, err, sizeof(err)), 0);
		assert_int_equal(cp_options_log_level(&o), cases[i].level);
	}
	assert_int_equal(parse("-a --log-level loud", &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--log-level: 'loud'"));
}

static void test_too_many_pids(void **state)
{
	char list[1024] = "-p 1", args[1100];
	struct cp_options o;
	char err[256];
	size_t n;

	(void)state;
	for (int i = 2; i <= CP_MAX_TGIDS + 1; i++) {
		n = strlen(list);
		snprintf(list + n, sizeof(list) - n, ",%d", i);
	}
	snprintf(args, sizeof(args), "%s", list);
	assert_int_equal(parse(args, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 64 processes"));
}

static void test_command(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	/* the command's own flags belong to it, not to us */
	assert_int_equal(parse("-d 3 -- ./app -p 7 --window 9", &o, err, sizeof(err)), 0);
	assert_int_equal(o.target, CP_TARGET_CMD);
	assert_string_equal(o.cmd_argv[0], "./app");
	assert_string_equal(o.cmd_argv[1], "-p");
	assert_string_equal(o.cmd_argv[4], "9");
	assert_null(o.cmd_argv[5]);
	assert_int_equal(o.window, 512);
	assert_int_equal(o.nr_pids, 0);
}

static void test_sampling_knobs(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a --source soft --ldlat 30 --load-period 1000 "
			       "--store-period 2000 --max-sample-rate 500 --window 64 "
			       "--window-miss-ratio 2.5% --cache L1D=48K:12:64",
			       &o, err, sizeof(err)), 0);
	assert_int_equal(o.source, CP_SOURCE_SOFT);
	assert_string_equal(cp_source_name(o.source), "soft");
	assert_int_equal(o.ldlat_cycles, 30);
	assert_int_equal(o.load_period, 1000);
	assert_int_equal(o.store_period, 2000);
	assert_int_equal(o.max_sample_rate, 500);
	assert_int_equal(o.window, 64);
	assert_int_equal(o.window_ratio_ppm, 25000);
	assert_string_equal(o.cache_spec, "L1D=48K:12:64");
	assert_int_equal(parse("-a --window-miss-ratio 0", &o, err, sizeof(err)), 0);
	assert_int_equal(o.window_ratio_ppm, 0);
	/* --stack-every: 0 (no stacks) and 1 (every event) are both meaningful */
	assert_int_equal(parse("-a --stack-every 0", &o, err, sizeof(err)), 0);
	assert_int_equal(o.stack_every, 0);
	assert_int_equal(parse("-a --stack-every 1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.stack_every, 1);
	assert_int_not_equal(parse("-a --stack-every 65537", &o, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--stack-every"));
}

/* Breakpoint knobs: defaults from the paper's 100 ms expiry and a 2000 hits/s budget. */
static void test_breakpoint_knobs(void **state)
{
	static const struct error_case bad[] = {
		{ "-a --bp-expiry 0", "--bp-expiry: '0' is not a whole number from 1 to 60000" },
		{ "-a --bp-expiry 60001", "--bp-expiry" },
		{ "-a --max-bp-rate -1", "--max-bp-rate: '-1'" },
		{ "-a --max-bp-rate 1000001", "--max-bp-rate" },
	};
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_int_equal(o.bp_expiry_ms, 100);
	assert_int_equal(o.max_bp_rate, 2000);
	assert_int_equal(parse("-a --bp-expiry 250 --max-bp-rate 0", &o, err, sizeof(err)), 0);
	assert_int_equal(o.bp_expiry_ms, 250);
	assert_int_equal(o.max_bp_rate, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i].args, &o, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].message))
			fail_msg("args '%s': error '%s', want '%s'", bad[i].args, err,
				 bad[i].message);
}

/* --soft-freq: ticks per second per CPU, 4999 by default (not a multiple of HZ). */
static void test_soft_freq(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_int_equal(o.soft_freq_hz, 4999);
	assert_int_equal(parse("-a --source soft --soft-freq 997", &o, err, sizeof(err)), 0);
	assert_int_equal(o.soft_freq_hz, 997);
	assert_int_equal(o.source, CP_SOURCE_SOFT);
	assert_int_equal(parse("-a --soft-freq 0", &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--soft-freq: '0' is not a whole number from 1 to 100000");
	assert_int_equal(parse("-a --soft-freq 100001", &o, err, sizeof(err)), -EINVAL);
}

static void test_system_wide_and_memory(void **state)
{
	static const struct error_case bad[] = {
		{ "-p 1 --cgroup /a", "--cgroup limits -a to one cgroup: use it with -a" },
		{ "--cgroup /a -- true", "use it with -a" },
		{ "-a --cgroup", "needs a value" },
		{ "-a --max-memory 15M", "--max-memory: '15M' is not a size of 16M or more" },
		{ "-a --max-memory 256X", "--max-memory: '256X'" },
		{ "-a --max-memory -1", "--max-memory: '-1'" },
	};
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_null(o.cgroup);
	assert_int_equal(o.max_memory_bytes, 256ull << 20);
	assert_int_equal(parse("-a --cgroup /system.slice/x.service --max-memory 1G", &o, err,
			       sizeof(err)), 0);
	assert_string_equal(o.cgroup, "/system.slice/x.service");
	assert_int_equal(o.max_memory_bytes, 1ull << 30);
	assert_int_equal(parse("-a --max-memory 16M", &o, err, sizeof(err)), 0);
	assert_int_equal(o.max_memory_bytes, 16ull << 20);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i].args, &o, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].message))
			fail_msg("args '%s': error '%s', want '%s'", bad[i].args, err,
				 bad[i].message);
}

static void test_modes(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("--help", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_HELP);
	/* --help wins even next to an error later on the line */
	assert_int_equal(parse("-h --bogus", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_HELP);
	assert_int_equal(parse("--version", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_VERSION);
	assert_int_equal(parse("--probe --sysfs-root /tmp/x", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_PROBE);
	assert_string_equal(o.sysfs_root, "/tmp/x");
}

static void test_recordings(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("--record run.cprec -a", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_PROFILE);
	assert_string_equal(o.record_path, "run.cprec");
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_null(o.record_path);
	assert_int_equal(parse("report run.cprec", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_REPORT);
	assert_string_equal(o.report_path, "run.cprec");
	/* a file named like an option, after -- */
	assert_int_equal(parse("report -- -odd", &o, err, sizeof(err)), 0);
	assert_string_equal(o.report_path, "-odd");
}

/* diff BEFORE AFTER: the report's options before, between or after the two files. */
static void test_diff(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("diff a.cprec b.cprec", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_DIFF);
	assert_string_equal(o.diff_paths[0], "a.cprec");
	assert_string_equal(o.diff_paths[1], "b.cprec");
	assert_false(o.fail_on_new);
	assert_null(o.report_path);
	assert_int_equal(parse("diff --path-map /a=/b a.cprec --min-miss-share 2 b.cprec "
			       "--fail-on-new --json - -o d.txt --alloc-wrapper xmalloc",
			       &o, err, sizeof(err)), 0);
	assert_string_equal(o.diff_paths[0], "a.cprec");
	assert_string_equal(o.diff_paths[1], "b.cprec");
	assert_true(o.fail_on_new);
	assert_int_equal(o.path_map.nr, 1);
	assert_int_equal(o.classify.min_miss_ppm, 20000);
	assert_string_equal(o.json, "-");
	assert_string_equal(o.output, "d.txt");
	assert_int_equal(o.alloc_wrappers.nr, 1);
	/* a file named "diff" is a recording of report, not the command */
	assert_int_equal(parse("report diff", &o, err, sizeof(err)), 0);
	assert_int_equal(o.mode, CP_MODE_REPORT);
	assert_string_equal(o.report_path, "diff");
}

static void test_continuous(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_int_equal(o.interval_s, 10);
	assert_int_equal(o.window_s, 60);
	assert_int_equal(o.prom_top, 20);
	assert_false(o.quiet);
	assert_null(o.prom_file);
	assert_int_equal(parse("-a -i 5 --window-seconds 300 --quiet --prom-file /x/c.prom "
			       "--prom-top 3", &o, err, sizeof(err)), 0);
	assert_int_equal(o.interval_s, 5);
	assert_int_equal(o.window_s, 300);	/* 60 intervals: the most a window has */
	assert_true(o.quiet);
	assert_string_equal(o.prom_file, "/x/c.prom");
	assert_int_equal(o.prom_top, 3);
	assert_int_equal(parse("report --prom-file r.prom run.cprec", &o, err, sizeof(err)), 0);
	assert_string_equal(o.prom_file, "r.prom");
	assert_int_equal(parse("report run.cprec --prom-file s.prom", &o, err, sizeof(err)), 0);
	assert_string_equal(o.prom_file, "s.prom");
	assert_string_equal(o.report_path, "run.cprec");
}

static void test_export(void **state)
{
	struct cp_options o;
	char err[256];

	(void)state;
	assert_int_equal(parse("-a", &o, err, sizeof(err)), 0);
	assert_null(o.pprof);
	assert_null(o.folded);
	assert_null(o.pprof_dir);
	assert_int_equal(o.pprof_keep, 20);
	assert_int_equal(parse("-a -i 5 --pprof a.pb.gz --folded a.folded --pprof-dir /d "
			       "--pprof-keep 3", &o, err, sizeof(err)), 0);
	assert_string_equal(o.pprof, "a.pb.gz");
	assert_string_equal(o.folded, "a.folded");
	assert_string_equal(o.pprof_dir, "/d");
	assert_int_equal(o.pprof_keep, 3);
	/* a recording's profile: options after FILE too */
	assert_int_equal(parse("report run.cprec --pprof r.pb.gz --folded r.folded", &o, err,
			       sizeof(err)), 0);
	assert_string_equal(o.pprof, "r.pb.gz");
	assert_string_equal(o.folded, "r.folded");
	assert_string_equal(o.report_path, "run.cprec");
}

/* Every long option the parser knows is documented in --help. */
static void test_help_documents_every_flag(void **state)
{
	char text[16384] = "";
	FILE *f = fmemopen(text, sizeof(text) - 1, "w");

	(void)state;
	assert_non_null(f);
	cp_options_usage(f);
	fclose(f);
	for (const struct option *o = cp_options_table(); o->name; o++) {
		char flag[64];

		/* "--window " with its trailing blank is not "--window-miss-ratio" */
		snprintf(flag, sizeof(flag), "--%s%s", o->name,
			 o->has_arg == required_argument ? " " : "");
		if (!strstr(text, flag))
			fail_msg("--help does not document %s", flag);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_report_filters),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_pid_list),
		cmocka_unit_test(test_log_level),
		cmocka_unit_test(test_alloc_wrappers),
		cmocka_unit_test(test_alloc_stack_bytes),
		cmocka_unit_test(test_too_many_pids),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_sampling_knobs),
		cmocka_unit_test(test_breakpoint_knobs),
		cmocka_unit_test(test_soft_freq),
		cmocka_unit_test(test_system_wide_and_memory),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_recordings),
		cmocka_unit_test(test_help_documents_every_flag),
		cmocka_unit_test(test_continuous),
		cmocka_unit_test(test_export),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
