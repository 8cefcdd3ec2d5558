// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include "util/top_n.h"

size_t cp_top_n(const void *slots, const bool *used, size_t nr_slots, size_t elem_size,
		size_t count, int (*cmp)(const void *, const void *), const void **out, size_t max)
{
	const void **all;
	size_t n = 0;

	if (!count || !max)
		return 0;
	all = malloc(count * sizeof(*all));
	if (!all)
		return 0;
	for (size_t i = 0; i < nr_slots && n < count; i++)
		if (used[i])
			all[n++] = (const char *)slots + i * elem_size;
	qsort(all, n, sizeof(*all), cmp);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*all));
	free(all);
	return n;
}
