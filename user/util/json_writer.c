// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Streaming JSON writer (see json_writer.h). */
#include <math.h>
#include <string.h>

#include "util/json_writer.h"
#include "util/utf8.h"

void cp_json_init(struct cp_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->depth = -1;
}

/*
 * Characters written as \u escapes though JSON allows them raw: the C1
 * controls (an 8-bit CSI to a terminal that `cat`s the file), the
 * bidirectional controls and the line separators (printable.h). The value
 * stays the same; its bytes can no longer act.
 */
static bool escaped_anyway(__u32 cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp_utf8_layout_control(cp);
}

void cp_json_write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		__u32 cp;
		size_t n = cp_utf8_char((const char *)s, &cp);

		if (!n) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		if (n > 1 && escaped_anyway(cp)) {
			fprintf(f, "\\u%04x", cp);
			s += n;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f)
				fprintf(f, "\\u%04x", *s);
			else
				fputc(*s, f);
		}
		s++;
	}
	fputc('"', f);
}

/* Comma, newline and indentation before a member, then its key if any. */
static void begin_value(struct cp_json *j, const char *key)
{
	if (j->depth >= 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		j->first[j->depth] = false;
		fprintf(j->f, "\n%*s", 2 * (j->depth + 1), "");
	}
	if (key) {
		cp_json_write_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_nested(struct cp_json *j, const char *key, char c)
{
	begin_value(j, key);
	fputc(c, j->f);
	if (j->depth + 1 >= CP_JSON_DEPTH) {
		j->error = true;
		return;
	}
	j->depth++;
	j->first[j->depth] = true;
	j->closer[j->depth] = c == '{' ? '}' : ']';
}

void cp_json_object(struct cp_json *j, const char *key)
{
	open_nested(j, key, '{');
}
void cp_json_array(struct cp_json *j, const char *key)
{
	open_nested(j, key, '[');
}

void cp_json_end(struct cp_json *j)
{
	if (j->depth < 0) {
		j->error = true;
		return;
	}
	if (!j->first[j->depth])
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(j->closer[j->depth], j->f);
	j->depth--;
}

void cp_json_str(struct cp_json *j, const char *key, const char *s)
{
	begin_value(j, key);
	if (s)
		cp_json_write_string(j->f, s);
	else
		fputs("null", j->f);
}

void cp_json_u64(struct cp_json *j, const char *key, __u64 v)
{
	begin_value(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void cp_json_i64(struct cp_json *j, const char *key, long long v)
{
	begin_value(j, key);
	fprintf(j->f, "%lld", v);
}

void cp_json_double(struct cp_json *j, const char *key, double v, int decimals)
{
	begin_value(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		fputs("null", j->f); /* JSON has no NaN or infinity */
}

void cp_json_bool(struct cp_json *j, const char *key, bool v)
{
	begin_value(j, key);
	fputs(v ? "true" : "false", j->f);
}

void cp_json_null(struct cp_json *j, const char *key)
{
	begin_value(j, key);
	fputs("null", j->f);
}

void cp_json_hex(struct cp_json *j, const char *key, __u64 v)
{
	begin_value(j, key);
	fprintf(j->f, "\"0x%llx\"", (unsigned long long)v);
}

int cp_json_finish(struct cp_json *j)
{
	fputc('\n', j->f);
	return j->error || j->depth != -1 ? -1 : 0;
}
