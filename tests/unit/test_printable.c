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
#include "util/utf8.h"

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
		{"x\302\233y", "x?y"},
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
		/*
		 * one '?' for a whole character that rearranges the text after it: RLO
		 * (U+202E) would draw "(138 samples)" as "(selpmas 831)", LRI..PDI
		 * (U+2066..9), LRM/RLM (U+200E/F), ALM (U+061C), and the line and
		 * paragraph separators (U+2028/9) that end a line in some readers
		 */
		{"f\342\200\256x", "f?x"},
		{"\342\201\246\342\201\251", "??"},
		{"\342\200\216\342\200\217\330\234", "???"},
		{"a\342\200\250b\342\200\251c", "a?b?c"},
		/* their neighbours stay: U+2027, U+202F (a space), U+2065, U+206A, U+061B */
		{"\342\200\247\342\200\257", "\342\200\247\342\200\257"},
		{"\342\201\245\342\201\252\330\233", "\342\201\245\342\201\252\330\233"},
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

/* The decoder every writer of names shares: lengths and code points, and where it says no. */
static void test_utf8_char(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		__u32 cp;
	} cases[] = {
		{"a", 1, 'a'},
		{"\303\251", 2, 0xe9},
		{"\357\277\275", 3, 0xfffd},
		{"\364\217\277\277", 4, 0x10ffff},
		{"\342\200\256", 3, 0x202e},
		/* past U+10FFFF, overlong (c1 bf, e0 80 af), a surrogate, a lone continuation */
		{"\365\200\200\200", 0, 0},
		{"\301\277", 0, 0},
		{"\340\200\257", 0, 0},
		{"\355\240\200", 0, 0},
		{"\200", 0, 0},
		/* cut short by the NUL, and by an ASCII byte */
		{"\342\200", 0, 0},
		{"\303(", 0, 0},
	};
	__u32 cp;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		size_t len = cp_utf8_char(cases[i].in, &cp);

		assert_int_equal(len, cases[i].len);
		if (len)
			assert_int_equal(cp, cases[i].cp);
	}
	assert_true(cp_utf8_layout_control(0x202e));
	assert_true(cp_utf8_layout_control(0x2028));
	assert_false(cp_utf8_layout_control(0x202f));
	assert_false(cp_utf8_layout_control('a'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_utf8_char),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
