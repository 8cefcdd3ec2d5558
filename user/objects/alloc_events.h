/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Object events (cacheperf/alloc.h) into the per-process object store: the
 * drain's record callback hands each CP_REC_OBJECT record here. Pure apart
 * from what cp_objects does on a process's first event (its maps snapshot).
 */
#ifndef CP_ALLOC_EVENTS_H
#define CP_ALLOC_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "cacheperf/alloc.h"
#include "objects/objects.h"

/*
 * Applies one record of @size bytes: an allocation or mapping becomes a
 * heap or mapping object with its call site (caller, stack id) interned in
 * the process's table, a free or unmap removes the object, a realloc or
 * mremap moves it. Returns 0 or what the store returns (-ENOENT: a free of
 * an object not seen, e.g. evicted), -EINVAL for a record that is not a
 * well-formed object event.
 */
int cp_alloc_event_apply(struct cp_objects *o, const void *data, size_t size);

/*
 * Whether @ev makes an object with a call site (an allocation, mapping,
 * realloc or mremap of a process, not one from the chunk headers): its
 * *@caller and *@stack_id (CP_NO_STACK: none), as cp_alloc_event_apply()
 * interns them.
 */
bool cp_alloc_event_site(const struct cp_object_event *ev, __u64 *caller, __s64 *stack_id);

/* "alloc", "free", ...; "?" for anything else. */
const char *cp_obj_event_kind_name(unsigned int kind);

#endif /* CP_ALLOC_EVENTS_H */
