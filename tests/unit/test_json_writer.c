// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON writer: the exact bytes of a small nested document, and strings
 * that would break a naive writer (quotes, control bytes, invalid UTF-8 as
 * a hostile process name may hold). Expected texts follow RFC 8259: '"' and
 * '\\' escaped, control bytes as \u00XX, and our rule that each byte of an
 * invalid UTF-8 sequence becomes U+FFFD.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/json_writer.h"

static char *string_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cp_json_write_string(f, s);
	fclose(f);
	return buf;
}

static void expect_json_string(const char *in, const char *out)
{
	char *got = string_of(in);

	assert_string_equal(got, out);
	free(got);
}

static void test_document_layout(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct cp_json j;

	(void)state;
	cp_json_init(&j, f);
	cp_json_object(&j, NULL);
	cp_json_u64(&j, "version", 1);
	cp_json_array(&j, "issues");
	cp_json_object(&j, NULL);
	cp_json_str(&j, "type", "false_sharing");
	cp_json_double(&j, "score", 0.25, 3);
	cp_json_hex(&j, "ip", 0x401136);
	cp_json_end(&j);
	cp_json_end(&j);
	cp_json_array(&j, "empty");
	cp_json_end(&j);
	cp_json_bool(&j, "ok", true);
	cp_json_null(&j, "none");
	cp_json_i64(&j, "neg", -3);
	cp_json_end(&j);
	assert_int_equal(cp_json_finish(&j), 0);
	fclose(f);
	assert_string_equal(buf,
		"{\n"
		"  \"version\": 1,\n"
		"  \"issues\": [\n"
		"    {\n"
		"      \"type\": \"false_sharing\",\n"
		"      \"score\": 0.250,\n"
		"      \"ip\": \"0x401136\"\n"
		"    }\n"
		"  ],\n"
		"  \"empty\": [],\n"
		"  \"ok\": true,\n"
		"  \"none\": null,\n"
		"  \"neg\": -3\n"
		"}\n");
	free(buf);
}

static void test_escapes(void **state)
{
	(void)state;
	expect_json_string("plain", "\"plain\"");
	expect_json_string("a\"b\\c", "\"a\\\"b\\\\c\"");
	expect_json_string("l1\nl2\tx\r", "\"l1\\nl2\\tx\\r\"");
	expect_json_string("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* é (2 bytes) and U+1F600 (4 bytes) are valid and pass through */
	expect_json_string("caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	/*
	 * valid, but escaped: an 8-bit CSI (U+009B) would act on a terminal that
	 * shows the file, RLO (U+202E) and U+2028 rearrange what follows them
	 */
	expect_json_string("a\xc2\x9b[2J", "\"a\\u009b[2J\"");
	expect_json_string("f\xe2\x80\xaex\xe2\x80\xa8", "\"f\\u202ex\\u2028\"");
	/* U+00A0, the first character after the C1 controls, passes */
	expect_json_string("\xc2\xa0", "\"\xc2\xa0\"");
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	/* a lone continuation byte and a lone 0xff */
	expect_json_string("a\x80z\xff", "\"a\\ufffdz\\ufffd\"");
	/* overlong '/' (c0 af): both bytes are replaced */
	expect_json_string("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	/* a truncated 3-byte sequence at the end of the string */
	expect_json_string("x\xe2\x82", "\"x\\ufffd\\ufffd\"");
	/* a UTF-16 surrogate encoded in UTF-8 (ed a0 80) is not valid UTF-8 */
	expect_json_string("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
}

static void test_non_finite_and_nesting_errors(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct cp_json j;

	(void)state;
	cp_json_init(&j, f);
	cp_json_object(&j, NULL);
	cp_json_double(&j, "nan", NAN, 2);
	cp_json_double(&j, "inf", INFINITY, 2);
	/* the object is never closed */
	assert_int_equal(cp_json_finish(&j), -1);
	fclose(f);
	assert_non_null(strstr(buf, "\"nan\": null,\n  \"inf\": null"));
	free(buf);

	f = open_memstream(&buf, &len);
	cp_json_init(&j, f);
	cp_json_end(&j);	/* closes nothing */
	assert_int_equal(cp_json_finish(&j), -1);
	fclose(f);
	free(buf);

	f = open_memstream(&buf, &len);
	cp_json_init(&j, f);
	for (int i = 0; i < CP_JSON_DEPTH + 1; i++)
		cp_json_array(&j, NULL);
	for (int i = 0; i < CP_JSON_DEPTH + 1; i++)
		cp_json_end(&j);
	assert_int_equal(cp_json_finish(&j), -1);
	fclose(f);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_document_layout),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_non_finite_and_nesting_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
