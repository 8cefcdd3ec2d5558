// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Source kinds by name. */
#include <errno.h>
#include <string.h>

#include "machine/source.h"

static const char *const source_names[] = {
	[CP_SOURCE_AUTO] = "auto", [CP_SOURCE_PEBS] = "pebs",	  [CP_SOURCE_IBS] = "ibs",
	[CP_SOURCE_SOFT] = "soft", [CP_SOURCE_FAULTS] = "faults",
};

const char *cp_source_name(enum cp_source_kind kind)
{
	if ((unsigned)kind >= sizeof(source_names) / sizeof(source_names[0]))
		return "?";
	return source_names[kind];
}

int cp_source_parse(const char *name, enum cp_source_kind *out)
{
	for (size_t i = 0; i < sizeof(source_names) / sizeof(source_names[0]); i++) {
		if (strcmp(name, source_names[i]) == 0) {
			*out = (enum cp_source_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}
