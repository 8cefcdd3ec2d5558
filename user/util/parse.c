// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "util/parse.h"

int cp_parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts leading blanks and a minus sign (wrapping): refuse both */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
