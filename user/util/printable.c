// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Target-chosen strings made printable (see printable.h). */
#include <string.h>

#include "util/printable.h"

/*
 * The length of the well-formed, printable UTF-8 character at @s (1..4), or
 * 0 when the byte there must be replaced. Ranges from the Unicode standard's
 * table 3-7 (well-formed byte sequences).
 */
static size_t char_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xc2)
		lo = 0xa0; /* U+0080..U+009F: the C1 controls */
	else if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

const char *cp_printable(const char *in, char *buf, size_t sz)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, n;

	if (!sz)
		return "";
	while (s && *s && o + 1 < sz) {
		n = char_len(s);
		if (!n) {
			buf[o++] = '?';
			s++;
			continue;
		}
		if (o + n >= sz)
			break;
		memcpy(buf + o, s, n);
		o += n;
		s += n;
	}
	buf[o] = '\0';
	return buf;
}
