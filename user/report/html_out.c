// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Escaped text in HTML and SVG (see html_out.h). */
#include <stdarg.h>

#include "report/html_out.h"
#include "util/printable.h"

#define CP_HTML_ESCF_MAX 1024

static void esc(FILE *f, const char *s, bool lines)
{
	size_t n;
	bool keep;

	if (!s)
		return;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x80) {
			/* as the text report prints it: a bidirectional control, a C1
			 * control or a stray byte is one '?' */
			n = cp_printable_char(s, &keep);
			if (keep)
				fwrite(s, 1, n, f);
			else
				fputc('?', f);
			s += n - 1;
		} else if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\'')
			fputs("&#39;", f);
		else if ((c < 0x20 && !(lines && c == '\n')) || c == 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
}

void cp_html_esc(FILE *f, const char *s)
{
	esc(f, s, false);
}

void cp_html_esc_lines(FILE *f, const char *s)
{
	esc(f, s, true);
}

void cp_html_escf(FILE *f, const char *fmt, ...)
{
	char buf[CP_HTML_ESCF_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	esc(f, buf, false);
}
