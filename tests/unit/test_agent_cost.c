// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The profiler's own cost as a user reads it: start-up apart from the
 * steady state, the share of one CPU, and the report's line and JSON
 * object (machine/agent_cost.h, report/report_agent.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "machine/agent_cost.h"
#include "cacheperf/abi.h"
#include "report/report_agent.h"
#include "util/self_usage.h"

#define MS  1000000ull
#define SEC 1000000000ull

/* The split at the mark: what came before is start-up, what came after steady. */
static void test_split_at_the_mark(void **state)
{
	/* exec at 100 s, sampling from 101.5 s with 420 ms of CPU spent */
	struct cp_agent_since since = {
		.exec_ns = 100 * SEC, .mono_ns = 101 * SEC + 500 * MS, .cpu_ns = 420 * MS};
	struct cp_agent_cost c = {.memory_known = true, .memory_bytes = 7};

	(void)state;
	cp_agent_cost_split(&since, 730 * MS, 121 * SEC + 500 * MS, &c);
	assert_true(c.known);
	assert_int_equal(c.startup_cpu_ns, 420 * MS);
	assert_int_equal(c.startup_wall_ns, 1500 * MS);
	assert_int_equal(c.steady_cpu_ns, 310 * MS);
	assert_int_equal(c.steady_wall_ns, 20 * SEC);
	/* the memory is another reading's */
	assert_true(c.memory_known);
	assert_int_equal(c.memory_bytes, 7);
}

/* Never negative, never made up: no mark, no exec time, a clock or counter behind. */
static void test_split_edges(void **state)
{
	struct cp_agent_since since = {.exec_ns = 0, .mono_ns = 5 * SEC, .cpu_ns = 900 * MS};
	struct cp_agent_cost c;

	(void)state;
	cp_agent_cost_split(&since, 800 * MS, 4 * SEC, &c);
	assert_true(c.known);
	assert_int_equal(c.startup_cpu_ns, 900 * MS);
	assert_int_equal(c.startup_wall_ns, 0); /* the exec time not known */
	assert_int_equal(c.steady_cpu_ns, 0);
	assert_int_equal(c.steady_wall_ns, 0);
	/* an exec time after the mark is not a duration */
	since.exec_ns = 6 * SEC;
	cp_agent_cost_split(&since, 1000 * MS, 6 * SEC, &c);
	assert_int_equal(c.startup_wall_ns, 0);
	assert_int_equal(c.steady_cpu_ns, 100 * MS);
	/* not marked yet: nothing known */
	since = (struct cp_agent_since){0};
	cp_agent_cost_split(&since, 1000 * MS, 6 * SEC, &c);
	assert_false(c.known);
	assert_int_equal(c.startup_cpu_ns + c.steady_cpu_ns + c.steady_wall_ns, 0);
}

static void test_pct(void **state)
{
	(void)state;
	assert_true(cp_agent_cost_pct(310 * MS, 20 * SEC) == 1.55);
	assert_true(cp_agent_cost_pct(2 * SEC, 1 * SEC) == 200.0); /* two threads busy */
	assert_true(cp_agent_cost_pct(5 * MS, 0) == 0);
}

static const struct cp_agent_cost example = {
	.known = true,
	.startup_cpu_ns = 420 * MS,
	.startup_wall_ns = 1300 * MS,
	.steady_cpu_ns = 310 * MS,
	.steady_wall_ns = 20 * SEC,
	.memory_known = true,
	.memory_counter = CP_SELF_MEM_CGROUP_V2,
	.memory_bytes = 38ull << 20,
	.peak_memory_bytes = 52ull << 20,
	/* 1000 records in 4 ms of handling: 250000/s; one object event held the rings 17.25 ms */
	.drain = {.records = 1000, .busy_ns = 4 * MS, .longest_ns = 17250000,
		  .longest_type = CP_REC_OBJECT,
		  /* 40 new call sites, 3 unwound in the callback all the same */
		  .sites_queued = 40, .sites_in_drain = 3, .sites_most = 12,
		  .sites_longest_ns = 96 * MS},
};

static void test_text_line(void **state)
{
	struct cp_agent_cost c = example;
	char buf[320], small[24];

	(void)state;
	cp_report_agent_format(&c, buf, sizeof(buf));
	assert_string_equal(buf, "0.42 s CPU at start-up (in 1.3 s), 0.31 s in 20.0 s steady "
				 "(1.55 % of one CPU); memory 38.0 MiB, peak 52.0 MiB "
				 "(cgroup memory.current)");
	c.startup_wall_ns = 0;
	c.memory_known = false;
	cp_report_agent_format(&c, buf, sizeof(buf));
	assert_string_equal(buf, "0.42 s CPU at start-up, 0.31 s in 20.0 s steady (1.55 % of one "
				 "CPU); memory not read");
	/* cut, still a string */
	cp_report_agent_format(&example, small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	/* a replay: no line at all */
	c.known = false;
	cp_report_agent_format(&c, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* What @fn writes for @c, in a malloc'd string. */
static char *written(void (*fn)(const struct cp_agent_cost *, FILE *),
		     const struct cp_agent_cost *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(c, f);
	fclose(f);
	return buf;
}

static void json_of(const struct cp_agent_cost *c, FILE *f)
{
	struct cp_json j;

	cp_json_init(&j, f);
	cp_json_object(&j, NULL);
	cp_report_agent_json(&j, c);
	cp_json_end(&j);
	assert_int_equal(cp_json_finish(&j), 0);
}

static void test_report_line_and_json(void **state)
{
	struct cp_agent_cost none = {.known = false};
	char *text;

	(void)state;
	text = written(cp_report_agent_print, &example);
	assert_non_null(strstr(text, "  profiler: 0.42 s CPU at start-up (in 1.3 s), "));
	assert_non_null(strstr(text, "\n  drain: 1000 records, 250000/s while handling them; the "
				     "longest took 17.2 ms (object event); new call sites unwound "
				     "between polls: 37 of 40 (at most 12 waiting, the longest "
				     "96.0 ms)\n"));
	assert_int_equal(text[strlen(text) - 1], '\n');
	free(text);
	text = written(cp_report_agent_print, &none);
	assert_string_equal(text, "");
	free(text);
	text = written(json_of, &example);
	/* the line's figures, in seconds to the microsecond */
	assert_non_null(strstr(text, "\"agent\""));
	assert_non_null(strstr(text, "\"startup_cpu_s\": 0.420000"));
	assert_non_null(strstr(text, "\"startup_wall_s\": 1.300"));
	assert_non_null(strstr(text, "\"steady_cpu_s\": 0.310000"));
	assert_non_null(strstr(text, "\"steady_wall_s\": 20.000"));
	assert_non_null(strstr(text, "\"steady_cpu_pct\": 1.550"));
	assert_non_null(strstr(text, "\"memory_bytes\": 39845888"));
	assert_non_null(strstr(text, "\"peak_memory_bytes\": 54525952"));
	assert_non_null(strstr(text, "\"memory_counter\": \"cgroup memory.current\""));
	assert_non_null(strstr(text, "\"records\": 1000"));
	assert_non_null(strstr(text, "\"busy_s\": 0.004000"));
	assert_non_null(strstr(text, "\"longest_s\": 0.017250"));
	assert_non_null(strstr(text, "\"longest_record\": \"object event\""));
	assert_non_null(strstr(text, "\"sites_queued\": 40"));
	assert_non_null(strstr(text, "\"sites_in_drain\": 3"));
	assert_non_null(strstr(text, "\"sites_most_waiting\": 12"));
	assert_non_null(strstr(text, "\"sites_longest_s\": 0.096000"));
	free(text);
	/* a replay's document has no "agent" */
	text = written(json_of, &none);
	assert_null(strstr(text, "agent"));
	free(text);
}

/* The reading: this process's own CPU time, split at a mark taken after work. */
static void test_read_counts_this_process(void **state)
{
	struct cp_agent_since since;
	struct cp_agent_cost c;
	volatile unsigned long x = 0;
	__u64 t0 = cp_self_cpu_ns();

	(void)state;
	while (cp_self_cpu_ns() - t0 < 30 * MS) /* start-up: 30 ms of CPU */
		x++;
	cp_agent_cost_begin(&since);
	t0 = cp_self_cpu_ns();
	while (cp_self_cpu_ns() - t0 < 50 * MS) /* steady: 50 ms more */
		x++;
	cp_agent_cost_read(&since, &c);
	assert_true(c.known);
	assert_true(c.startup_cpu_ns >= 30 * MS);
	assert_true(c.steady_cpu_ns >= 50 * MS && c.steady_cpu_ns < 500 * MS);
	assert_true(c.steady_wall_ns + 10 * MS >= c.steady_cpu_ns); /* one thread: wall >= CPU */
	assert_true(c.startup_wall_ns > 0);
	assert_true(c.memory_known);
	assert_true(c.memory_bytes > 0 && c.peak_memory_bytes >= c.memory_bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_at_the_mark),
		cmocka_unit_test(test_split_edges),
		cmocka_unit_test(test_pct),
		cmocka_unit_test(test_text_line),
		cmocka_unit_test(test_report_line_and_json),
		cmocka_unit_test(test_read_counts_this_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
