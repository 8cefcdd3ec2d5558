/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Strict number parsing shared by options, sysfs and /proc readers. */
#ifndef CP_PARSE_H
#define CP_PARSE_H

#include <linux/types.h>

/*
 * Parses a whole decimal number in [min, max] from @s: no sign, no spaces,
 * no trailing characters. Returns 0, -EINVAL (not a number) or -ERANGE.
 */
int cp_parse_u64(const char *s, __u64 min, __u64 max, __u64 *out);

#endif /* CP_PARSE_H */
