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

#include <stddef.h>

/*
 * Copies @in into @buf (@sz bytes, NUL-terminated, cut to fit) with every
 * byte a terminal could act on replaced by '?': the C0 controls (newline,
 * tab and ESC included), DEL, the C1 controls (U+0080..U+009F, 8-bit CSI),
 * and bytes that are not well-formed UTF-8 (stray, overlong or surrogate
 * sequences). Other UTF-8 characters are kept whole; a character that does
 * not fit is dropped, never cut. Returns @buf ("" for a NULL @in), so it
 * can stand as a printf argument.
 */
const char *cp_printable(const char *in, char *buf, size_t sz);

#endif /* CP_PRINTABLE_H */
