/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Prometheus text exposition format (version 0.0.4), exactly: each
 * family's "# HELP" and "# TYPE" once, before its samples; label values
 * escaped (backslash, double quote, newline) and made valid UTF-8 (each
 * byte of an invalid sequence becomes U+FFFD), as process names are chosen
 * by whoever runs the process; names checked against the format's grammar.
 * Pure: writes to a FILE, knows nothing of what the metrics mean.
 */
#ifndef CP_PROM_WRITER_H
#define CP_PROM_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CP_PROM_MAX_FAMILIES 64 /* families per file */
#define CP_PROM_NAME_LEN     96

enum cp_prom_type {
	CP_PROM_GAUGE,
	CP_PROM_COUNTER, /* names end in _total */
};

struct cp_prom_label {
	const char *name;
	const char *value;
};

/* One file being written; fields are the writer's. */
struct cp_prom_writer {
	FILE *f;
	int err; /* the first error: -EEXIST, -EINVAL, -EIO */
	unsigned int nr_families;
	char families[CP_PROM_MAX_FAMILIES][CP_PROM_NAME_LEN];
};

void cp_prom_writer_init(struct cp_prom_writer *w, FILE *f);

/*
 * Starts family @name: its HELP (@help, escaped) and TYPE lines. A family
 * already written, a name outside [a-zA-Z_:][a-zA-Z0-9_:]* or a counter
 * whose name does not end in _total is refused (and remembered in w->err).
 */
int cp_prom_family(struct cp_prom_writer *w, const char *name, enum cp_prom_type type,
		   const char *help);

/*
 * One sample of the family started last: name{l1="v1",...} value. Label
 * names must match [a-zA-Z_][a-zA-Z0-9_]*; NULL values are written empty.
 */
int cp_prom_sample(struct cp_prom_writer *w, const struct cp_prom_label *labels, size_t nr,
		   double value);

/* 0, or the first error of the writer (and -EIO when the FILE failed). */
int cp_prom_writer_finish(struct cp_prom_writer *w);

/*
 * Pure: @in as a label value's content (escaped, valid UTF-8) into @out
 * (NUL-terminated, truncated at a character boundary): '\\', '"' and the
 * newline escaped, U+FFFD for each character the text report would
 * replace (a control byte, a bidirectional control, a line separator, a
 * byte that is not UTF-8: printable.h), so no tenant's name acts on a
 * terminal that shows the file. Returns the length the whole text needs,
 * like snprintf.
 */
size_t cp_prom_escape_label(const char *in, char *out, size_t sz);

/*
 * Pure: @in made a bounded label text into @out (@max + 1 bytes): what
 * cp_prom_escape_label() replaces by U+FFFD replaced; when that is longer
 * than @max bytes (@max >= 3), cut at a character boundary and ended with
 * CP_PROM_CUT ("\u2026", 3 bytes) so that the whole is at most @max bytes.
 * Two texts that differ give two different results unless one was cut or
 * held replaced characters: callers that must not repeat a series compare
 * results.
 * Returns true when @in was cut.
 */
#define CP_PROM_CUT "\xe2\x80\xa6" /* U+2026 HORIZONTAL ELLIPSIS */
bool cp_prom_label_bound(const char *in, char *out, size_t max);

/* Pure: @v as the format writes it: "NaN", "+Inf", integers without exponent, else %.15g. */
void cp_prom_format_value(double v, char *buf, size_t sz);

#endif /* CP_PROM_WRITER_H */
