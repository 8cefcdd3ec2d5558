// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Target-chosen strings made printable (see printable.h). */
#include <string.h>

#include "util/printable.h"
#include "util/utf8.h"

/*
 * The length of the character at @s (1 for a byte that begins no
 * well-formed one), and in *@keep whether it is printed: not a control
 * (C0, DEL, C1), nor one that rearranges the text around it.
 */
static size_t char_len(const unsigned char *s, bool *keep)
{
	__u32 cp;
	size_t len = cp_utf8_char((const char *)s, &cp);

	*keep = len && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f) &&
		!cp_utf8_layout_control(cp);
	return len ? len : 1;
}

size_t cp_printable_char(const char *s, bool *keep)
{
	return char_len((const unsigned char *)s, keep);
}

const char *cp_printable(const char *in, char *buf, size_t sz)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, n;
	bool keep;

	if (!sz)
		return "";
	while (s && *s && o + 1 < sz) {
		n = char_len(s, &keep);
		if (!keep) {
			buf[o++] = '?';
			s += n;
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
