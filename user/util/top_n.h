/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The N best entries of an open-addressing table, shared by the stores. */
#ifndef CP_TOP_N_H
#define CP_TOP_N_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Fills @out with pointers to at most @max of the @nr_slots entries of
 * @slots (each @elem_size bytes) whose @used flag is set, @count of them in
 * all, ordered by @cmp (which compares two pointers to entries). Returns how
 * many; 0 when out of memory.
 */
size_t cp_top_n(const void *slots, const bool *used, size_t nr_slots, size_t elem_size,
		size_t count, int (*cmp)(const void *, const void *), const void **out, size_t max);

#endif /* CP_TOP_N_H */
