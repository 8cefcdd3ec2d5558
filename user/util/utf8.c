// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* UTF-8 decoding for the writers of names (see utf8.h). */
#include "util/utf8.h"

size_t cp_utf8_char(const char *str, __u32 *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	*cp = c;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, *cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, *cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, *cp = c & 0x07;
	else
		return 0; /* a continuation byte, an overlong lead (c0, c1), past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	return len;
}

bool cp_utf8_layout_control(__u32 cp)
{
	return cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}
