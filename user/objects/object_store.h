/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Object store (paper §3.4, Fig. 4): the live heap objects of one process by
 * address range, so any sampled address finds the object holding it.
 *
 * Three mutually exclusive levels, searched in this order because small
 * objects vastly outnumber large ones:
 *   page table  - objects inside one 4 KiB page: a hash of page numbers to
 *                 small arrays sorted by start;
 *   chunk table - objects crossing a page boundary inside one 1 MiB chunk:
 *                 a hash of chunk numbers to sorted arrays;
 *   huge tree   - everything else, in a balanced tree (treap) by start.
 * The paper indexes its tables with shadow memory; a 47-bit address space
 * makes hashes the practical equivalent. Lookup is one hash probe plus a
 * binary search per level, O(log n) overall.
 *
 * Live objects never overlap: an insert over a live range means we missed a
 * free (ring buffer loss, an allocator path we do not probe), so the stale
 * objects are replaced and counted. The store holds at most max_objects;
 * beyond that the OLDEST objects (first inserted) are evicted and counted,
 * because a long-lived object missed by the profile costs less than refusing
 * every new allocation once full.
 */
#ifndef CP_OBJECT_STORE_H
#define CP_OBJECT_STORE_H

#include <stddef.h>
#include <linux/types.h>

#define CP_MAX_OBJECTS	   (1u << 20) /* default cap per process */
#define CP_OBJ_PAGE_SHIFT  12	      /* page table granule: 4 KiB */
#define CP_OBJ_CHUNK_SHIFT 20	      /* chunk table granule: 1 MiB */

/* What an address belongs to, as far as the profiler can tell. */
enum cp_obj_kind {
	CP_OBJ_UNKNOWN = 0, /* not attributable (e.g. allocated before attach) */
	CP_OBJ_HEAP,	    /* a malloc-family allocation we saw */
	CP_OBJ_MAPPING,	    /* an mmap region, or a file-backed mapping */
	CP_OBJ_GLOBAL,	    /* a global or static variable (ELF STT_OBJECT) */
	CP_OBJ_TLS,	    /* a thread-local variable (ELF STT_TLS) */
	CP_OBJ_STACK,	    /* a thread's stack */
	CP_OBJ_KIND_NR,
};

/* cp_object.flags */
/* lived through a back-off of the allocation probes (objects/objects.h sets it
 * when resolving): it may have been freed unseen and its memory reused */
#define CP_OBJ_F_GUARD_BACKOFF (1u << 0)
#define CP_OBJ_F_REALLOC       (1u << 1) /* the result of a realloc */
/* no allocation probe saw it: found in the allocator's chunk headers
 * (objects/glibc_chunks.h); no call site, no thread, size malloc_usable_size() */
#define CP_OBJ_F_CHUNK (1u << 2)

/* One live object. Plain C: filled by whoever decodes the allocation events. */
struct cp_object {
	__u64 start;	/* first byte */
	__u64 size;	/* bytes requested; 0 is stored as occupying 1 byte */
	__u64 callsite; /* key in the call-site table (callsites.h), 0 if unknown */
	__u64 alloc_ns; /* allocation time, event clock */
	__u32 tid;	/* allocating thread */
	__u8 kind;	/* enum cp_obj_kind */
	__u8 __pad;
	__u16 flags; /* CP_OBJ_F_* */
};

struct cp_object_store_stats {
	__u64 live;	     /* objects held now */
	__u64 inserted;	     /* successful inserts */
	__u64 removed;	     /* objects removed by a free (or realloc's free half) */
	__u64 evicted;	     /* oldest objects dropped to stay under the cap */
	__u64 replaced;	     /* stale objects a new insert overlapped: missed frees */
	__u64 lookup_hits;   /* cp_object_store__find() found an object */
	__u64 lookup_misses; /* ... found none */
	__u64 unknown_frees; /* frees of an address that starts no live object */
	__u64 nomem;	     /* inserts lost for lack of memory */
};

struct cp_object_store;

/* A name for @kind ("heap", "global", ...); "?" when out of range. */
const char *cp_object_kind_name(enum cp_obj_kind kind);

/*
 * An empty store holding at most @max_objects (0 means CP_MAX_OBJECTS; at
 * most UINT32_MAX - 1). NULL on allocation failure.
 */
struct cp_object_store *cp_object_store__new(size_t max_objects);
void cp_object_store__free(struct cp_object_store *s);

/*
 * Inserts a copy of @obj. Live objects overlapping it are removed first
 * (stats.replaced); if the store is then full the oldest object is evicted
 * (stats.evicted). Returns 0, -EINVAL if the range wraps past 2^64, or
 * -ENOMEM (stats.nomem; the store is unchanged apart from replaced objects).
 */
int cp_object_store__add(struct cp_object_store *s, const struct cp_object *obj);

/*
 * Removes the object starting exactly at @start (a free), copying it to @out
 * if @out is not NULL. Returns 0, or -ENOENT (stats.unknown_frees) when no
 * live object starts there: allocated before attach, evicted, or a free of an
 * interior pointer.
 */
int cp_object_store__remove(struct cp_object_store *s, __u64 start, struct cp_object *out);

/*
 * A realloc: removes the object at @old_start (none when 0; an unknown one is
 * counted as an unknown free) and inserts @obj unless obj->start is 0 (the
 * realloc failed or freed). Returns what cp_object_store__add() returns, or 0.
 */
int cp_object_store__realloc(struct cp_object_store *s, __u64 old_start,
			     const struct cp_object *obj);

/*
 * Hints that @addr is looked up a few records later (a replay reads ahead),
 * in CP_OBJ_HINT_STAGES stages as it comes closer, each reading what the
 * one before fetched: 0 fetches the page's last object found, or the
 * page's and the chunk's buckets; 1 the sorted arrays' first lines (their
 * length); 2 their entries; 3 finds the object, fetches its node and
 * remembers it as its page's last, where the lookup then finds it. No
 * lookup answers differently for it, and nothing is counted.
 */
#define CP_OBJ_HINT_STAGES 4
void cp_object_store__hint(struct cp_object_store *s, __u64 addr, int stage);

/*
 * The live object whose range holds @addr, or NULL; counted as a lookup hit
 * or miss. The pointer is valid until the next insert or remove.
 */
const struct cp_object *cp_object_store__find(struct cp_object_store *s, __u64 addr);

/* Removes every object; counters other than live are kept. */
void cp_object_store__clear(struct cp_object_store *s);

size_t cp_object_store__count(const struct cp_object_store *s);
void cp_object_store__stats(const struct cp_object_store *s, struct cp_object_store_stats *out);

/* Bytes the store has allocated for its own structures (malloc overhead excluded). */
size_t cp_object_store__mem_bytes(const struct cp_object_store *s);

#endif /* CP_OBJECT_STORE_H */
