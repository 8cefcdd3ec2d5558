/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text into an HTML or SVG document. Every string a target chose (process,
 * file, function, object and path names: docs/security.md) goes through
 * cp_html_esc(), as element text and as attribute value alike: & < > " '
 * become entities, so no name can close an element, open one or end an
 * attribute, and what the text report replaces becomes '?' here too
 * (cp_printable_char(): control bytes, the C1 controls, the bidirectional
 * controls that would draw the page's own numbers backwards, the line
 * separators, bytes that are not well-formed UTF-8). Pure.
 */
#ifndef CP_HTML_OUT_H
#define CP_HTML_OUT_H

#include <stdbool.h>
#include <stdio.h>

/* Writes @s escaped ("" for NULL). */
void cp_html_esc(FILE *f, const char *s);

/* As cp_html_esc(), newlines kept: a <pre> of several lines. */
void cp_html_esc_lines(FILE *f, const char *s);

/* printf into a bounded buffer (cut at 1 KiB), then cp_html_esc() it. */
void cp_html_escf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* CP_HTML_OUT_H */
