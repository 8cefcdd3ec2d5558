/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * UTF-8 as the writers of a tenant's names read it (printable.h, the JSON
 * writer, Prometheus labels): one decoder, so a character is well-formed
 * or not, and rearranges the text or not, the same way in every output.
 * Pure.
 */
#ifndef CP_UTF8_H
#define CP_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * The length (1..4) of the well-formed UTF-8 character at @s, its code
 * point in *@cp; 0 when the byte there begins none: a stray continuation
 * byte, an overlong form, a UTF-16 surrogate, past U+10FFFF, or a sequence
 * cut short (by the string's NUL too). Ranges from the Unicode standard's
 * table 3-7 (well-formed byte sequences).
 */
size_t cp_utf8_char(const char *s, __u32 *cp);

/*
 * Whether @cp changes the layout of the text around it rather than
 * showing: the bidirectional controls (U+061C, U+200E/F, U+202A..U+202E,
 * U+2066..U+2069), which draw a report's own numbers after a name
 * backwards, and the line and paragraph separators (U+2028/9), which end a
 * line for a reader that splits on them.
 */
bool cp_utf8_layout_control(__u32 cp);

#endif /* CP_UTF8_H */
