// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Path helpers (see path.h). */
#include <string.h>

#include "util/path.h"

const char *cp_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}
