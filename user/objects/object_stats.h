/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Samples per object: every forwarded sample is resolved when it arrives
 * (cp_objects__resolve(): the process and its objects may be gone by report
 * time) and counted against the object it hit. Heap objects are grouped by
 * allocation call site, as the paper's reports are ("the heap object (1056
 * bytes) allocated at ..."); globals and thread-locals by variable;
 * mappings by file or region; memory with no allocation seen by its
 * mapping. Pure and bounded: past the cap, samples are counted as dropped.
 */
#ifndef CP_OBJECT_STATS_H
#define CP_OBJECT_STATS_H

#include <stddef.h>
#include <linux/types.h>

#include "objects/objects.h"

#define CP_MAX_OBJECT_GROUPS 4096
#define CP_OBJ_GROUP_TIDS    4 /* allocating threads remembered per group */

struct cp_object_group {
	__u64 id; /* the call site, else the start: what groups objects */
	__u32 tgid;
	__u8 kind;	    /* enum cp_obj_kind */
	bool before_attach; /* no allocation seen: allocated before we attached */
	bool backoff;	    /* ... or while the allocation probes were backed off */
	__u16 flags;	    /* CP_OBJ_F_* seen on its objects */
	__u64 callsite;	    /* heap/mapping: call-site id in the process, else 0 */
	__u64 caller;	    /* heap/mapping: the allocator's caller, 0 if unknown */
	__u64 start;	    /* globals, mappings: the start; heap: first object seen */
	__u64 size;	    /* bytes of the (last) object */
	__u64 objects;	    /* distinct starts seen (heap groups) */
	__u64 samples;
	__u64 misses;
	__u64 doubtful;		       /* samples in objects that may be stale (a back-off) */
	__u32 tids[CP_OBJ_GROUP_TIDS]; /* allocating threads */
	__u32 nr_tids;
	char name[CP_RESOLVED_NAME_LEN];
	char path[CP_RESOLVED_PATH_LEN];
};

struct cp_object_stats;

/* A table of at most @max groups (0: CP_MAX_OBJECT_GROUPS); NULL on failure. */
struct cp_object_stats *cp_object_stats__new(size_t max);
void cp_object_stats__free(struct cp_object_stats *s);

/*
 * Counts one sample of process @tgid that resolved to @r (@caller: the
 * call site's caller address, 0 if none), a miss when @miss. Returns 0 or
 * -ENOSPC (counted in cp_object_stats__dropped()).
 */
int cp_object_stats__add(struct cp_object_stats *s, __u32 tgid, const struct cp_resolved *r,
			 __u64 caller, bool miss);

/* Up to @max groups, most misses first, then most samples. Returns how many. */
size_t cp_object_stats__top(const struct cp_object_stats *s, const struct cp_object_group **out,
			    size_t max);

size_t cp_object_stats__count(const struct cp_object_stats *s);
__u64 cp_object_stats__dropped(const struct cp_object_stats *s);

#endif /* CP_OBJECT_STATS_H */
