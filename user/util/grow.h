/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Growing arrays: one doubling policy instead of a realloc dance per caller. */
#ifndef CP_GROW_H
#define CP_GROW_H

#include <stddef.h>

/*
 * Makes room for one more element in *@v (*@cap elements of @elem bytes,
 * @n used): doubles the capacity (at least @min) when full. Returns 0, or
 * -ENOMEM with *@v and *@cap unchanged.
 */
int cp_grow(void **v, size_t *cap, size_t n, size_t elem, size_t min);

#endif /* CP_GROW_H */
