/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Strings a target chooses (comm, module, file, symbol, object and cgroup
 * names), made safe to print on a terminal or in a line-oriented text file.
 * A tenant names its own binaries, libraries, symbols and cgroups: a raw
 * ESC, CSI or newline in one of them would retitle or clear the reader's
 * terminal, or forge report and log lines. Pure, no allocation.
 */
#ifndef CP_PRINTABLE_H
#define CP_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Copies @in into @buf (@sz bytes, NUL-terminated, cut to fit) with every
 * byte a terminal could act on replaced by '?': the C0 controls (newline,
 * tab and ESC included), DEL, the C1 controls (U+0080..U+009F, 8-bit CSI),
 * and bytes that are not well-formed UTF-8 (stray, overlong or surrogate
 * sequences). The characters that rearrange the text around them, the
 * bidirectional controls and the line and paragraph separators U+2028/9,
 * are replaced whole by one '?'. Other UTF-8 characters are kept whole; a
 * character that does not fit is dropped, never cut. Returns @buf ("" for
 * a NULL @in), so it can stand as a printf argument.
 */
const char *cp_printable(const char *in, char *buf, size_t sz);

/*
 * The character at @s (not at its NUL), as cp_printable() sees it: its
 * length in bytes (1 for a byte that begins no well-formed character), and
 * in *@keep whether it is printed as it is (else one '?' stands for it).
 * For writers that escape some printable characters too (HTML).
 */
size_t cp_printable_char(const char *s, bool *keep);

#endif /* CP_PRINTABLE_H */
