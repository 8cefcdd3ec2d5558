// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The printable filter: what a tenant puts in a comm, a library, symbol,
 * file or cgroup name reaches a terminal as text, never as a control
 * sequence, and valid UTF-8 names stay whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/printable.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_table(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"libc.so.6", "libc.so.6"},
		{"", ""},
		/* OSC: retitles the terminal; CSI 2J: clears it */
		{"lib\033]0;x\007.so", "lib?]0;x?.so"},
		{"f\033[2Jg", "f?[2Jg"},
		/* a newline or carriage return would forge a report line */
		{"a\nb\rc\td", "a?b?c?d"},
		{"del\177", "del?"},
		/* 8-bit CSI, raw and as UTF-8 U+009B */
		{"x\233y", "x?y"},
		{"x\302\233y", "x??y"},
		/* UTF-8 stays: é, the arrow the report itself prints, an emoji */
		{"caf\303\251", "caf\303\251"},
		{"\342\206\220", "\342\206\220"},
		{"\360\237\230\200", "\360\237\230\200"},
		/* U+00A0 is the first character after the C1 controls */
		{"\302\240", "\302\240"},
		/* overlong ESC (C0 9B), overlong 3-byte, surrogate, past U+10FFFF, a cut sequence
		 */
		{"\300\233", "??"},
		{"\340\200\233", "???"},
		{"\355\240\200", "???"},
		{"\364\220\200\200", "????"},
		{"ab\342\206", "ab??"},
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		assert_string_equal(cp_printable(cases[i].in, buf, sizeof(buf)), cases[i].out);
}

/* Cut to the buffer, never in the middle of a character; NULL is "". */
static void test_cut(void **state)
{
	char buf[5];

	(void)state;
	assert_string_equal(cp_printable("abcdefgh", buf, sizeof(buf)), "abcd");
	assert_string_equal(cp_printable("abc\303\251", buf, sizeof(buf)), "abc");
	assert_string_equal(cp_printable("ab\303\251", buf, sizeof(buf)), "ab\303\251");
	assert_string_equal(cp_printable("\033\033\033\033\033\033", buf, sizeof(buf)), "????");
	assert_string_equal(cp_printable(NULL, buf, sizeof(buf)), "");
	assert_string_equal(cp_printable("x", buf, 1), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
