/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The heap objects samples actually touched, kept per cache line from the
 * moment of the sample. The classifier asks which object an address belongs
 * to at report time; by then a program may have freed the object (a finished
 * `-- CMD` frees everything, a server recycles buffers) or reused its memory
 * for another one, and the object store, which holds live objects only,
 * would answer nothing or the wrong object. So every sampled miss and every
 * breakpoint-history address notes the object it fell in here, and the
 * classifier prefers this memory to the live store.
 *
 * Bounded: a fixed table of lines (open addressing, short probe runs), a few
 * objects per line (small objects of several threads share a line: that is
 * allocator false sharing). A full probe run overwrites its first slot and
 * counts it; a line with no room for another object drops its oldest. Pure.
 */
#ifndef CP_SEEN_OBJECTS_H
#define CP_SEEN_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_SEEN_PER_LINE      4	    /* distinct objects remembered per line */
#define CP_SEEN_LINES_DEFAULT 65536 /* the miss store's line cap */

/* A heap object as a sample saw it (struct cp_resolved, without the names). */
struct cp_seen_object {
	__u64 start;
	__u64 size;
	__u64 callsite; /* call-site id (objects/objects.h) */
	__u32 tid;	/* allocating thread */
	__u16 flags;	/* CP_OBJ_F_* */
	__u16 kind;	/* enum cp_obj_kind: heap or mapping */
};

struct cp_seen_stats {
	__u64 noted;	       /* objects noted (new to their line) */
	__u64 lines;	       /* lines held now */
	__u64 evicted_lines;   /* lines overwritten: the table was full */
	__u64 evicted_objects; /* objects pushed out of a full line */
};

struct cp_seen_objects;

/* A table of @max_lines lines (rounded up to a power of two; 0: the default). */
struct cp_seen_objects *cp_seen_objects__new(size_t max_lines);

void cp_seen_objects__free(struct cp_seen_objects *s);

/*
 * Notes that @tgid touched @addr inside @obj (which must contain it), on
 * the @line_bytes-byte line of @addr. The newest note of an object comes
 * first on its line.
 */
void cp_seen_objects__note(struct cp_seen_objects *s, __u32 tgid, __u64 addr, __u32 line_bytes,
			   const struct cp_seen_object *obj);

/* Hints that @addr of @tgid is noted next (a replay reads records ahead). */
void cp_seen_objects__prefetch(const struct cp_seen_objects *s, __u32 tgid, __u64 addr,
			       __u32 line_bytes);

/* The object noted for @tgid that contains @addr: 0, or -ENOENT. */
int cp_seen_objects__find(const struct cp_seen_objects *s, __u32 tgid, __u64 addr, __u32 line_bytes,
			  struct cp_seen_object *out);

void cp_seen_objects__stats(const struct cp_seen_objects *s, struct cp_seen_stats *out);

#endif /* CP_SEEN_OBJECTS_H */
