// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The log (util/log.h): levels as the journal numbers them, the journal
 * found only when JOURNAL_STREAM names stderr itself, one line per message
 * whatever a tenant put in it, and what repeats said once a period with
 * its count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "util/log.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_level_parse(void **state)
{
	static const struct {
		const char *in;
		int ret;
		enum cp_log_level level;
	} cases[] = {
		{ "err", 0, CP_LOG_ERR },	  { "error", 0, CP_LOG_ERR },
		{ "warning", 0, CP_LOG_WARNING }, { "WARN", 0, CP_LOG_WARNING },
		{ "notice", 0, CP_LOG_NOTICE },	  { "info", 0, CP_LOG_INFO },
		{ "debug", 0, CP_LOG_DEBUG },	  { "5", 0, CP_LOG_NOTICE },
		{ "7", 0, CP_LOG_DEBUG },	  { "2", -22, 0 },
		{ "8", -22, 0 },		  { "", -22, 0 },
		{ "verbose", -22, 0 },		  { "notice ", -22, 0 },
	};
	enum cp_log_level l;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		l = 0;
		assert_int_equal(cp_log_level_parse(cases[i].in, &l), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(l, cases[i].level);
	}
	assert_int_equal(cp_log_level_parse(NULL, &l), -22);
	/* a name parses back to its level */
	for (int v = CP_LOG_ERR; v <= CP_LOG_DEBUG; v++) {
		assert_int_equal(cp_log_level_parse(cp_log_level_name(v), &l), 0);
		assert_int_equal(l, v);
	}
}

static void test_journal_match(void **state)
{
	(void)state;
	assert_true(cp_log_journal_match("64768:123456", 64768, 123456));
	assert_false(cp_log_journal_match("64768:123456", 64768, 123457));
	assert_false(cp_log_journal_match("64769:123456", 64768, 123456));
	assert_false(cp_log_journal_match(NULL, 0, 0));
	assert_false(cp_log_journal_match("", 0, 0));
	assert_false(cp_log_journal_match("64768", 64768, 0));
	assert_false(cp_log_journal_match("64768:", 64768, 0));
	assert_false(cp_log_journal_match(":5", 0, 5));
	assert_false(cp_log_journal_match("64768:5x", 64768, 5));
	assert_false(cp_log_journal_match("99999999999999999999999:5", 0, 5));
}

static void test_format(void **state)
{
	static const struct {
		bool journal;
		enum cp_log_level level;
		const char *text, *line;
	} cases[] = {
		{ false, CP_LOG_ERR, "cannot open x", "cacheperf-bpf: cannot open x\n" },
		{ false, CP_LOG_WARNING, "lost", "cacheperf-bpf: warning: lost\n" },
		{ false, CP_LOG_NOTICE, "source soft", "cacheperf-bpf: source soft\n" },
		{ false, CP_LOG_DEBUG, "libbpf: x\n", "cacheperf-bpf: libbpf: x\n" },
		{ true, CP_LOG_ERR, "cannot open x", "<3>cannot open x\n" },
		{ true, CP_LOG_WARNING, "lost", "<4>lost\n" },
		{ true, CP_LOG_NOTICE, "n", "<5>n\n" },
		{ true, CP_LOG_INFO, "i", "<6>i\n" },
		{ true, CP_LOG_DEBUG, "d", "<7>d\n" },
		/* a comm with a newline forges no line, nor a priority; escapes are text */
		{ true, CP_LOG_INFO, "process 7 (a\n<0>b): x", "<6>process 7 (a?<0>b): x\n" },
		{ false, CP_LOG_INFO, "p (\033]0;pwned\007\033[2J)", "cacheperf-bpf: p (?]0;pwned??[2J)\n" },
		{ false, CP_LOG_INFO, "x\302\233y\r", "cacheperf-bpf: x?y?\n" },
		{ false, CP_LOG_INFO, NULL, "cacheperf-bpf: \n" },
	};
	char buf[CP_LOG_LINE_MAX];

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		size_t n = cp_log_format(cases[i].journal, cases[i].level, cases[i].text, buf,
					 sizeof(buf));

		assert_string_equal(buf, cases[i].line);
		assert_int_equal(n, strlen(cases[i].line));
	}
}

/* A very long message is cut to one line, which still ends in a newline. */
static void test_format_cut(void **state)
{
	char text[3000], buf[64], small[8];
	size_t n;

	(void)state;
	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	n = cp_log_format(true, CP_LOG_WARNING, text, buf, sizeof(buf));
	assert_int_equal(n, sizeof(buf) - 1);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(strncmp(buf, "<4>aaa", 6), 0);
	assert_null(memchr(buf, '\n', n - 1));
	n = cp_log_format(false, CP_LOG_WARNING, "x", small, sizeof(small));
	assert_int_equal(n, 7);
	assert_string_equal(small, "cachep\n");
}

static void test_limit(void **state)
{
	static struct cp_log_limit l = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 2);
	char buf[256];

	(void)state;
	/* nothing held back: nothing to say */
	assert_int_equal(cp_log_limit_end(&l, buf, sizeof(buf)), 0);
	assert_true(cp_log_limit_pass(&l));
	assert_true(cp_log_limit_pass(&l));
	assert_int_equal(cp_log_limit_end(&l, buf, sizeof(buf)), 0);
	/* a new period: two pass again, the next five are held back */
	assert_true(cp_log_limit_pass(&l));
	assert_true(cp_log_limit_pass(&l));
	for (int i = 0; i < 5; i++) {
		assert_false(cp_log_limit_pass(&l));
		snprintf(l.last, sizeof(l.last), "no probes for process %d", 100 + i);
	}
	assert_int_equal(cp_log_limit_end(&l, buf, sizeof(buf)),
			 strlen("no probes for process 104 (4 more)"));
	assert_string_equal(buf, "no probes for process 104 (4 more)");
	/* one held back is said as it was */
	assert_true(cp_log_limit_pass(&l));
	assert_true(cp_log_limit_pass(&l));
	assert_false(cp_log_limit_pass(&l));
	snprintf(l.last, sizeof(l.last), "x");
	cp_log_limit_end(&l, buf, sizeof(buf));
	assert_string_equal(buf, "x");
	assert_int_equal(cp_log_limit_end(&l, buf, sizeof(buf)), 0);
}

static void test_tally(void **state)
{
	struct cp_log_tally t = {
		.level = CP_LOG_NOTICE,
		.subject = "allocation probes skipped",
		.why = { "mapped no malloc yet", "exited before attach" },
	};
	char buf[256];

	(void)state;
	assert_int_equal(cp_log_tally_end(&t, buf, sizeof(buf)), 0);
	for (int i = 0; i < 17; i++)
		cp_log_tally_count(&t, 0);
	cp_log_tally_count(&t, 1);
	assert_int_equal(cp_log_tally_end(&t, buf, sizeof(buf)),
			 strlen("allocation probes skipped for 18 processes: 17 mapped no malloc yet; 1 exited before attach"));
	assert_string_equal(buf, "allocation probes skipped for 18 processes: 17 mapped no malloc yet; 1 exited before attach");
	/* a new period: only what happened since, one reason, one process */
	cp_log_tally_count(&t, 1);
	cp_log_tally_end(&t, buf, sizeof(buf));
	assert_string_equal(buf, "allocation probes skipped for 1 process: 1 exited before attach");
	assert_int_equal(cp_log_tally_end(&t, buf, sizeof(buf)), 0);
	assert_int_equal(t.total, 19);
	/* a reason past the table counts as the last one; a small buffer is cut */
	cp_log_tally_count(&t, 99);
	assert_true(cp_log_tally_end(&t, buf, 20) < 20);
	assert_string_equal(buf, "allocation probes s");
}

/*
 * The writer: stderr into a file of the test's; JOURNAL_STREAM naming that
 * file makes the lines the journal's, naming another one does not.
 */
static char *capture(bool journal_env, bool other_file, enum cp_log_level level,
		     void (*say)(void))
{
	char tmpl[] = "/tmp/cp_test_log_XXXXXX", env[64];
	int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO);
	struct stat st;
	char *out = calloc(1, 8192);

	assert_true(fd >= 0 && saved >= 0 && out);
	unlink(tmpl);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + (other_file ? 1 : 0));
	if (journal_env)
		setenv("JOURNAL_STREAM", env, 1);
	else
		unsetenv("JOURNAL_STREAM");
	dup2(fd, STDERR_FILENO);
	cp_log_init(level);
	say();
	fflush(NULL);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_true(pread(fd, out, 8191, 0) >= 0);
	close(fd);
	unsetenv("JOURNAL_STREAM");
	return out;
}

static void say_some(void)
{
	cp_err("e %d", 1);
	cp_warn("w");
	cp_notice("n");
	cp_info("i");
	cp_debug("d");
}

static void test_writer_levels(void **state)
{
	char *out;

	(void)state;
	out = capture(false, false, CP_LOG_WARNING, say_some);
	assert_string_equal(out, "cacheperf-bpf: e 1\ncacheperf-bpf: warning: w\n");
	free(out);
	out = capture(true, false, CP_LOG_NOTICE, say_some);
	assert_string_equal(out, "<3>e 1\n<4>w\n<5>n\n");
	free(out);
	/* an inherited JOURNAL_STREAM, stderr redirected since: not the journal */
	out = capture(true, true, CP_LOG_DEBUG, say_some);
	assert_string_equal(out, "cacheperf-bpf: e 1\ncacheperf-bpf: warning: w\n"
				 "cacheperf-bpf: n\ncacheperf-bpf: i\ncacheperf-bpf: d\n");
	free(out);
}

static struct cp_log_limit limit = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 1);
static struct cp_log_tally tally = {
	.level = CP_LOG_NOTICE, .subject = "probes skipped", .why = { "a", "b" },
};

static void say_repeats(void)
{
	for (int i = 0; i < 50; i++) {
		cp_log_limited(&limit, "cannot probe process %d", i);
		cp_log_tally(&tally, (unsigned int)(i % 5 == 0));
	}
	cp_log_set_period(2, 1000);
	cp_log_tick(1000 + 1999999999ull);	/* not yet over */
	cp_log_tick(1000 + 2000000000ull);
	cp_log_limited(&limit, "cannot probe process %d", 50);
	cp_log_flush();
	cp_log_flush();	/* nothing new: nothing said */
}

static void test_writer_repeats(void **state)
{
	char *out;

	(void)state;
	out = capture(false, false, CP_LOG_NOTICE, say_repeats);
	assert_string_equal(out, "cacheperf-bpf: warning: cannot probe process 0\n"
				 "cacheperf-bpf: probes skipped for 50 processes: 40 a; 10 b\n"
				 "cacheperf-bpf: warning: cannot probe process 49 (48 more)\n"
				 "cacheperf-bpf: warning: cannot probe process 50\n");
	free(out);
}

static void say_libbpf(void)
{
	FILE *f = cp_log_file(CP_LOG_INFO);

	cp_log_text(CP_LOG_WARNING, "libbpf: -- BEGIN --\n0: (b7)\tr0 = 0\nlibbpf: -- END --\n");
	fprintf(f, "cacheperf-bpf: warning: a %s\n", "file");
	fprintf(f, "plain ");
	fprintf(f, "info\ncut");
	fflush(f);
	cp_log_text(CP_LOG_DEBUG, "not said\n");
}

/* Another voice's text: each of its lines a line of ours; a FILE * stream says its lines. */
static void test_writer_text(void **state)
{
	char *out;

	(void)state;
	out = capture(true, false, CP_LOG_INFO, say_libbpf);
	assert_string_equal(out, "<4>libbpf: -- BEGIN --\n<4>0: (b7) r0 = 0\n<4>libbpf: -- END --\n"
				 "<4>a file\n<6>plain info\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_parse),    cmocka_unit_test(test_journal_match),
		cmocka_unit_test(test_format),	       cmocka_unit_test(test_format_cut),
		cmocka_unit_test(test_limit),	       cmocka_unit_test(test_tally),
		cmocka_unit_test(test_writer_levels),  cmocka_unit_test(test_writer_repeats),
		cmocka_unit_test(test_writer_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
