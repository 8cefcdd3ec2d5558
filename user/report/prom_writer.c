// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus text format (see prom_writer.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/prom_writer.h"
#include "util/printable.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void cp_prom_writer_init(struct cp_prom_writer *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

static int set_err(struct cp_prom_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return err;
}

static bool name_ok(const char *s, bool colon)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || (colon && c == ':')))
			return false;
	}
	return true;
}

/*
 * The character at @s in a label value: its length (1 for a byte that
 * begins no well-formed character), and in *@keep whether it stays, else
 * U+FFFD stands for it: what the text report replaces (cp_printable_char():
 * controls, bidirectional controls, line separators, bytes that are not
 * UTF-8), but the newline, which the format escapes.
 */
static size_t label_char(const char *s, bool *keep)
{
	size_t n = cp_printable_char(s, keep);

	if (*s == '\n')
		*keep = true;
	return n;
}

size_t cp_prom_escape_label(const char *in, char *out, size_t sz)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t len = 0, fits = sz ? sz - 1 : 0;

	while (*s) {
		const char *piece;
		bool keep;
		size_t n = label_char((const char *)s, &keep), step = n;
		char esc[2];

		if (*s == '\\' || *s == '"' || *s == '\n') {
			esc[0] = '\\';
			esc[1] = *s == '\n' ? 'n' : (char)*s;
			piece = esc;
			n = 2;
		} else if (keep) {
			piece = (const char *)s;
		} else {
			piece = replacement;
			n = 3;
		}
		if (len + n <= fits)
			memcpy(out + len, piece, n);
		else
			fits = len; /* nothing after a piece that did not fit */
		len += n;
		s += step;
	}
	if (sz)
		out[len < fits ? len : fits] = '\0';
	return len;
}

bool cp_prom_label_bound(const char *in, char *out, size_t max)
{
	const size_t cut_len = sizeof(CP_PROM_CUT) - 1;
	const unsigned char *s = (const unsigned char *)in;
	size_t len = 0, keep = 0; /* keep: what fits before the marker */

	while (*s) {
		bool kept;
		size_t n = label_char((const char *)s, &kept),
		       piece = kept ? n : sizeof(replacement) - 1;

		if (len + piece > max)
			break;
		memcpy(out + len, kept ? (const char *)s : replacement, piece);
		len += piece;
		if (len + cut_len <= max)
			keep = len;
		s += n;
	}
	if (!*s) {
		out[len] = '\0';
		return false;
	}
	memcpy(out + keep, CP_PROM_CUT, cut_len);
	out[keep + cut_len] = '\0';
	return true;
}

void cp_prom_format_value(double v, char *buf, size_t sz)
{
	if (isnan(v))
		snprintf(buf, sz, "NaN");
	else if (isinf(v))
		snprintf(buf, sz, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0) /* 2^53: exact */
		snprintf(buf, sz, "%.0f", v == 0 ? 0.0 : v);
	else
		snprintf(buf, sz, "%.15g", v);
}

/* HELP text: backslash and newline escaped (the format's rule for docstrings). */
static void put_help(FILE *f, const char *help)
{
	for (const char *s = help; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

int cp_prom_family(struct cp_prom_writer *w, const char *name, enum cp_prom_type type,
		   const char *help)
{
	size_t len = strlen(name);

	if (!name_ok(name, true) || len >= CP_PROM_NAME_LEN ||
	    (type == CP_PROM_COUNTER && (len < 6 || strcmp(name + len - 6, "_total"))))
		return set_err(w, -EINVAL);
	for (unsigned int i = 0; i < w->nr_families; i++)
		if (!strcmp(w->families[i], name))
			return set_err(w, -EEXIST);
	if (w->nr_families == CP_PROM_MAX_FAMILIES)
		return set_err(w, -ENOSPC);
	memcpy(w->families[w->nr_families++], name, len + 1);
	fprintf(w->f, "# HELP %s ", name);
	put_help(w->f, help);
	if (type == CP_PROM_COUNTER)
		fprintf(w->f, "\n# TYPE %s counter\n", name);
	else
		fprintf(w->f, "\n# TYPE %s gauge\n", name);
	return 0;
}

int cp_prom_sample(struct cp_prom_writer *w, const struct cp_prom_label *labels, size_t nr,
		   double value)
{
	char num[40];

	if (!w->nr_families)
		return set_err(w, -EINVAL);
	for (size_t i = 0; i < nr; i++)
		if (!name_ok(labels[i].name, false) || !strncmp(labels[i].name, "__", 2))
			return set_err(w, -EINVAL);
	fputs(w->families[w->nr_families - 1], w->f);
	for (size_t i = 0; i < nr; i++) {
		const char *v = labels[i].value ? labels[i].value : "";
		size_t need = cp_prom_escape_label(v, NULL, 0) + 1;
		char small[256], *buf = need <= sizeof(small) ? small : malloc(need);

		if (!buf)
			return set_err(w, -ENOMEM);
		cp_prom_escape_label(v, buf, need);
		fprintf(w->f, "%s%s=\"%s\"", i ? "," : "{", labels[i].name, buf);
		if (buf != small)
			free(buf);
	}
	cp_prom_format_value(value, num, sizeof(num));
	fprintf(w->f, "%s %s\n", nr ? "}" : "", num);
	return 0;
}

int cp_prom_writer_finish(struct cp_prom_writer *w)
{
	if (!w->err && (fflush(w->f) || ferror(w->f)))
		w->err = -EIO;
	return w->err;
}
