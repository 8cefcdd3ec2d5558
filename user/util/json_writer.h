/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A streaming JSON writer: objects and arrays nest up to CP_JSON_DEPTH, commas
 * and indentation are placed by the writer, strings are escaped (control bytes,
 * quotes, backslashes; bytes that are not valid UTF-8 become U+FFFD, so a
 * hostile process name cannot break the document; the C1, bidirectional
 * and line-separator characters are written as \u escapes, so none acts on
 * a terminal or viewer showing the file). Pure: writes to a FILE.
 */
#ifndef CP_JSON_WRITER_H
#define CP_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define CP_JSON_DEPTH 16

struct cp_json {
	FILE *f;
	int depth;
	bool first[CP_JSON_DEPTH];  /* no member written yet at this depth */
	char closer[CP_JSON_DEPTH]; /* '}' or ']' */
	bool after_key;		    /* a key was written; its value comes next */
	bool error;		    /* nesting overflow or mismatch */
};

void cp_json_init(struct cp_json *j, FILE *f);
/* Starts an object or array; @key names it inside an object, NULL elsewhere. */
void cp_json_object(struct cp_json *j, const char *key);
void cp_json_array(struct cp_json *j, const char *key);
void cp_json_end(struct cp_json *j);				     /* closes the innermost one */
void cp_json_str(struct cp_json *j, const char *key, const char *s); /* NULL: null */
void cp_json_u64(struct cp_json *j, const char *key, __u64 v);
void cp_json_i64(struct cp_json *j, const char *key, long long v);
void cp_json_double(struct cp_json *j, const char *key, double v, int decimals);
void cp_json_bool(struct cp_json *j, const char *key, bool v);
void cp_json_null(struct cp_json *j, const char *key);
/* "0x..." string, the usual way to show addresses. */
void cp_json_hex(struct cp_json *j, const char *key, __u64 v);
/* Ends the document with a newline; 0, or -1 when nesting was wrong. */
int cp_json_finish(struct cp_json *j);

/* Writes @s as a JSON string literal, quotes included. */
void cp_json_write_string(FILE *f, const char *s);

#endif /* CP_JSON_WRITER_H */
