// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Prometheus text format, byte for byte: label values escaped as the
 * format says (backslash, double quote, newline) and made valid UTF-8 (each
 * byte of an invalid sequence becomes U+FFFD), for process names chosen by
 * an attacker; HELP and TYPE once per family; names checked; values as
 * Prometheus parses them.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/prom_writer.h"

#define FFFD "\xef\xbf\xbd"

struct esc_case {
	const char *in;
	const char *out;
};

/* Hostile comm values (a comm is any 15 bytes but NUL) and what the label must hold. */
static const struct esc_case esc_cases[] = {
	{ "plain", "plain" },
	{ "", "" },
	{ "a\"b", "a\\\"b" },				/* quote: \" */
	{ "a\\b", "a\\\\b" },				/* backslash: \\ */
	{ "a\nb", "a\\nb" },				/* newline: \n */
	{ "\\n", "\\\\n" },				/* a backslash and an n stay two characters */
	{ "\"}\n# x 1", "\\\"}\\n# x 1" },		/* no way out of the label, no fake line */
	/* other controls, as the text report replaces them: ESC would act on a terminal */
	{ "tab\there\r\x1b[2J\x7f", "tab" FFFD "here" FFFD FFFD "[2J" FFFD },
	/* C1 (8-bit CSI), RLO and the line separator: one U+FFFD each */
	{ "\xc2\x9b" "a\xe2\x80\xae" "b\xe2\x80\xa8", FFFD "a" FFFD "b" FFFD },
	{ "caf\xc3\xa9", "caf\xc3\xa9" },		/* valid UTF-8 (é) kept */
	{ "\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80" },	/* €, 😀 */
	{ "a\xff" "b", "a" FFFD "b" },		/* never valid */
	{ "\x80", FFFD },				/* a lone continuation byte */
	{ "\xc3", FFFD },				/* cut short at the end */
	{ "\xc3(", FFFD "(" },				/* cut short by an ASCII byte, which is kept */
	{ "\xc0\xaf", FFFD FFFD },			/* overlong '/' */
	{ "\xe0\x80\xaf", FFFD FFFD FFFD },		/* overlong, 3 bytes */
	{ "\xed\xa0\x80", FFFD FFFD FFFD },		/* a UTF-16 surrogate */
	{ "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD },	/* past U+10FFFF */
	{ "\xff\"\\\n", FFFD "\\\"\\\\\\n" },		/* everything at once */
};

static void test_escape_label_exact_bytes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		char out[64];
		size_t n = cp_prom_escape_label(esc_cases[i].in, out, sizeof(out));

		if (strcmp(out, esc_cases[i].out) || n != strlen(esc_cases[i].out))
			fail_msg("case %zu: got '%s' (%zu), want '%s'", i, out, n, esc_cases[i].out);
	}
}

static void test_escape_truncates_whole_characters(void **state)
{
	char out[5];

	(void)state;
	/* "a\"" needs 3 bytes, then é 2: 4 bytes fit, é does not and nothing follows it */
	assert_int_equal(cp_prom_escape_label("a\"\xc3\xa9z", out, sizeof(out)), 6);
	assert_string_equal(out, "a\\\"");
	/* an escape is never cut in half */
	assert_int_equal(cp_prom_escape_label("ab\\", out, 4), 4);
	assert_string_equal(out, "ab");
	/* sizing call */
	assert_int_equal(cp_prom_escape_label("\xff", NULL, 0), 3);
}

#define CUT "\xe2\x80\xa6"

struct bound_case {
	const char *in;
	size_t max;
	const char *out;
	bool cut;
};

/* Bounded label texts: valid UTF-8, at most max bytes with the marker, whole characters. */
static const struct bound_case bound_cases[] = {
	{ "abc", 8, "abc", false },
	{ "abcdefgh", 8, "abcdefgh", false },		/* exactly max: not cut */
	{ "abcdefghi", 8, "abcde" CUT, true },		/* 5 bytes and the 3-byte marker */
	{ "a\xff", 8, "a" FFFD, false },			/* U+FFFD counts its 3 bytes */
	{ "abc\xff\xff", 8, "abc" CUT, true },	/* 9 bytes made; abc, U+FFFD and the marker would be 9 */
	{ "ab\xc3\xa9\xc3\xa9xyz", 8, "ab\xc3\xa9" CUT, true },	/* 9 bytes; the second é would pass 5 */
	{ "abcd\xe2\x82\xacxy", 8, "abcd" CUT, true },	/* € fits in 8, not with the marker */
	{ "", 8, "", false },
	{ "abcd", 3, CUT, true },
};

static void test_label_bound(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bound_cases) / sizeof(bound_cases[0]); i++) {
		const struct bound_case *c = &bound_cases[i];
		char out[32];
		bool cut = cp_prom_label_bound(c->in, out, c->max);

		if (strcmp(out, c->out) || cut != c->cut || strlen(out) > c->max)
			fail_msg("case %zu: got '%s' (cut %d), want '%s' (cut %d)", i, out, cut,
				 c->out, c->cut);
	}
}

static char *write_file(void (*fn)(struct cp_prom_writer *w), int *ret)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);
	struct cp_prom_writer w;

	assert_non_null(f);
	cp_prom_writer_init(&w, f);
	fn(&w);
	*ret = cp_prom_writer_finish(&w);
	fclose(f);
	return p;
}

static void small_file(struct cp_prom_writer *w)
{
	struct cp_prom_label l[] = { { "pid", "42" }, { "comm", "x\"y\\z\n\xfe" } };

	assert_int_equal(cp_prom_family(w, "cacheperf_issue_miss_share_ratio", CP_PROM_GAUGE,
					"Share of misses.\nSecond line with a \\ backslash."), 0);
	assert_int_equal(cp_prom_sample(w, l, 2, 0.25), 0);
	assert_int_equal(cp_prom_sample(w, l, 1, 1), 0);
	assert_int_equal(cp_prom_family(w, "cacheperf_drops_total", CP_PROM_COUNTER, "Drops."), 0);
	assert_int_equal(cp_prom_sample(w, NULL, 0, 12345678901234.0), 0);
}

static void test_file_exact_bytes(void **state)
{
	int ret;
	char *text = write_file(small_file, &ret);

	(void)state;
	assert_int_equal(ret, 0);
	assert_string_equal(text,
		"# HELP cacheperf_issue_miss_share_ratio Share of misses.\\nSecond line with a \\\\ backslash.\n"
		"# TYPE cacheperf_issue_miss_share_ratio gauge\n"
		"cacheperf_issue_miss_share_ratio{pid=\"42\",comm=\"x\\\"y\\\\z\\n" FFFD "\"} 0.25\n"
		"cacheperf_issue_miss_share_ratio{pid=\"42\"} 1\n"
		"# HELP cacheperf_drops_total Drops.\n"
		"# TYPE cacheperf_drops_total counter\n"
		"cacheperf_drops_total 12345678901234\n");
	free(text);
}

static void twice(struct cp_prom_writer *w)
{
	assert_int_equal(cp_prom_family(w, "cacheperf_a", CP_PROM_GAUGE, "A."), 0);
	assert_int_equal(cp_prom_family(w, "cacheperf_b", CP_PROM_GAUGE, "B."), 0);
	/* HELP and TYPE once per family: a second start is refused and nothing is written */
	assert_int_equal(cp_prom_family(w, "cacheperf_a", CP_PROM_GAUGE, "A."), -EEXIST);
}

static void bad_names(struct cp_prom_writer *w)
{
	struct cp_prom_label bad[] = { { "a-b", "v" } }, reserved[] = { { "__name__", "v" } };

	/* a sample before any family has no name */
	assert_int_equal(cp_prom_sample(w, NULL, 0, 1), -EINVAL);
	assert_int_equal(cp_prom_family(w, "9lives", CP_PROM_GAUGE, "x"), -EINVAL);
	assert_int_equal(cp_prom_family(w, "has space", CP_PROM_GAUGE, "x"), -EINVAL);
	assert_int_equal(cp_prom_family(w, "cacheperf_drops", CP_PROM_COUNTER, "x"), -EINVAL);
	assert_int_equal(cp_prom_family(w, "ns:cacheperf_ok", CP_PROM_GAUGE, "x"), 0);
	assert_int_equal(cp_prom_sample(w, bad, 1, 1), -EINVAL);
	assert_int_equal(cp_prom_sample(w, reserved, 1, 1), -EINVAL);
}

static void test_families_once_and_names_checked(void **state)
{
	int ret;
	char *text = write_file(twice, &ret);

	(void)state;
	assert_int_equal(ret, -EEXIST);
	assert_string_equal(text, "# HELP cacheperf_a A.\n# TYPE cacheperf_a gauge\n"
				  "# HELP cacheperf_b B.\n# TYPE cacheperf_b gauge\n");
	free(text);
	text = write_file(bad_names, &ret);
	/* the first error is the one the file reports */
	assert_int_equal(ret, -EINVAL);
	assert_null(strstr(text, "9lives"));
	assert_null(strstr(text, "a-b"));
	free(text);
}

static void test_values(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0, "0" }, { -0.0, "0" }, { 3, "3" }, { -7, "-7" }, { 0.5, "0.5" }, { 0.1, "0.1" },
		{ 1795408779, "1795408779" }, { 9007199254740991.0, "9007199254740991" },
		{ 1e20, "1e+20" }, { 2.0 / 3.0, "0.666666666666667" },
	};
	char buf[40];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cp_prom_format_value(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
	}
	cp_prom_format_value(NAN, buf, sizeof(buf));
	assert_string_equal(buf, "NaN");
	cp_prom_format_value(INFINITY, buf, sizeof(buf));
	assert_string_equal(buf, "+Inf");
	cp_prom_format_value(-INFINITY, buf, sizeof(buf));
	assert_string_equal(buf, "-Inf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_label_exact_bytes),
		cmocka_unit_test(test_escape_truncates_whole_characters),
		cmocka_unit_test(test_file_exact_bytes),
		cmocka_unit_test(test_families_once_and_names_checked),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_label_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
