/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * glibc malloc's own chunk headers, read from a target's memory: which heap
 * object holds an address that no allocation probe saw (allocated before
 * profiling began). Knowledge that costs the target nothing: its memory is
 * read, it is never stopped. Pure: the memory comes through a read callback
 * (process_vm_readv in a live run, a synthetic image in the tests), and
 * every decision is here.
 *
 * The layout (glibc malloc/malloc.c, x86-64). A chunk starts with prev_size
 * (8 bytes: the previous chunk's last bytes while that one is in use) and
 * size (8 bytes; low bits PREV_INUSE 1, IS_MMAPPED 2, NON_MAIN_ARENA 4);
 * malloc returns chunk + 16. An allocated chunk's user also owns the next
 * chunk's prev_size, so malloc_usable_size() is size - 8 (size - 16 for an
 * mmapped chunk, which has no next). Chunks lie back to back:
 *   - the main arena, [heap]: from the mapping's start (the kernel's
 *     start_brk is page-aligned, so glibc's first chunk is there) to the
 *     top chunk, which ends at the break, in the mapping's last page;
 *   - a non-main arena's heap: a 64 MiB-aligned anonymous mapping that
 *     begins with heap_info {ar_ptr, prev, size, mprotect_size[, pagesize]}
 *     (32 bytes before glibc 2.35, 48 since). The arena's first heap holds
 *     its malloc_state (2200 bytes since glibc 2.27) after heap_info, so
 *     ar_ptr % 64 MiB is the header's size. Chunks run to heap + size, the
 *     top chunk last; an older heap of the arena ends in a 16-byte fencepost;
 *   - a large chunk (IS_MMAPPED) is a mapping of its own with its header at
 *     the start (neighbours may show as one mapping: they are walked too;
 *     memalign's chunks, which start further in, are not found).
 * A chunk is in use when the next one has PREV_INUSE; the top chunk and the
 * free chunks in bins are no objects (chunks in tcache and fastbins keep
 * looking in use: glibc leaves them so).
 *
 * Bounded. A lookup visits at most max_steps chunks and reads at most
 * max_read_bytes, in reads of at most batch_bytes; all lookups of a second
 * read at most bytes_per_s (the profiler's time: -a meets many heaps). Per (pid, mapping) a heap
 * keeps its first chunk, a checkpoint every mark_every chunks (at most
 * max_marks; when full every other one goes and the spacing doubles) and the
 * farthest chunk reached, so a later lookup starts near its address and a
 * heap larger than one lookup's caps is covered by the next ones. At most
 * max_heaps heaps are kept; the least recently used one makes room.
 *
 * Careful. Every size is checked: a multiple of 16, at least 32, inside the
 * heap, its flags those of the heap's kind. Anything odd gives up on the
 * heap (CP_CHUNK_ODD, asked again after CP_CHUNK_RETRY_NS) rather than
 * guess. The target runs on while it is read: a walk that fails from a
 * checkpoint (the heap changed under it) starts once more from the first
 * chunk.
 */
#ifndef CP_GLIBC_CHUNKS_H
#define CP_GLIBC_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#define CP_GLIBC_HDR_BYTES	   16
#define CP_GLIBC_MIN_CHUNK	   32
#define CP_GLIBC_ALIGN		   16
#define CP_GLIBC_PREV_INUSE	   0x1ull
#define CP_GLIBC_IS_MMAPPED	   0x2ull
#define CP_GLIBC_NON_MAIN_ARENA	   0x4ull
#define CP_GLIBC_FLAGS		   0x7ull
#define CP_GLIBC_HEAP_MAX	   (64ull << 20) /* HEAP_MAX_SIZE: 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#define CP_GLIBC_ARENA_STATE_BYTES 2200		 /* sizeof(struct malloc_state), glibc >= 2.27 */
#define CP_GLIBC_PAGE		   4096ull

/* Defaults of struct cp_chunk_limits. */
#define CP_CHUNK_MAX_STEPS	65536
#define CP_CHUNK_MAX_READ_BYTES (8u << 20)
#define CP_CHUNK_BATCH_BYTES	(64u << 10)
#define CP_CHUNK_MARK_EVERY	64
#define CP_CHUNK_MAX_MARKS	8192
#define CP_CHUNK_MAX_HEAPS	128
#define CP_CHUNK_RETRY_NS	1000000000ull /* a heap given up on is walked again after 1 s */
#define CP_CHUNK_BYTES_PER_S	(32u << 20)   /* read per second, over all lookups */

/* Reads @len bytes of the target at @addr into @buf: bytes read, or a negative errno. */
typedef ssize_t (*cp_chunk_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

/* The caps; a field left 0 takes its default above. */
struct cp_chunk_limits {
	__u32 max_steps;      /* chunks visited per lookup */
	__u32 max_read_bytes; /* bytes read per lookup */
	__u32 batch_bytes;    /* bytes per read, at least 16 */
	__u32 mark_every;     /* chunks between checkpoints, at first */
	__u32 max_marks;      /* checkpoints per heap, at least 2 */
	__u32 max_heaps;      /* heaps kept, over all processes */
	__u32 bytes_per_s;    /* bytes read per second of now_ns, over all lookups */
};

/* What kind of mapping holds the address, as /proc/PID/maps says. */
enum cp_chunk_map {
	CP_CHUNK_MAP_BRK = 0, /* [heap]: the main arena */
	CP_CHUNK_MAP_ANON,    /* anonymous: a non-main arena's heap, or mmapped chunks */
};

enum cp_chunk_heap {
	CP_CHUNK_HEAP_MAIN = 0, /* the main arena's [heap] */
	CP_CHUNK_HEAP_ARENA,	/* a non-main arena's heap */
	CP_CHUNK_HEAP_MMAPPED,	/* chunks mmapped one by one */
};

enum cp_chunk_verdict {
	CP_CHUNK_IN_USE = 0, /* an allocated chunk holds the address: *out */
	CP_CHUNK_FREE,	     /* a free chunk, the top chunk, or past the heap's end: no object */
	CP_CHUNK_META,	     /* the allocator's own bytes: a header, heap_info, malloc_state */
	CP_CHUNK_ODD,	     /* not a heap this walk understands: gave up */
	CP_CHUNK_LIMIT,	     /* beyond this lookup's caps (the next one goes further), or
			      * the second's bytes were read */
	CP_CHUNK_UNREADABLE, /* the memory could not be read (the process is gone) */
};

/* The chunk holding an address. */
struct cp_chunk {
	__u64 chunk;  /* its header */
	__u64 size;   /* chunk size, flags cleared */
	__u64 user;   /* what malloc returned: chunk + 16 */
	__u64 usable; /* malloc_usable_size(user): size - 8, or size - 16 if mmapped */
	__u8 heap;    /* enum cp_chunk_heap */
};

struct cp_glibc_chunks_stats {
	__u64 lookups;
	__u64 found;	  /* ... answered CP_CHUNK_IN_USE */
	__u64 gave_up;	  /* ... CP_CHUNK_ODD */
	__u64 limited;	  /* ... CP_CHUNK_LIMIT */
	__u64 throttled;  /* ... of them not walked: the second's bytes were read */
	__u64 restarts;	  /* walks that failed from a checkpoint and started over */
	__u64 steps;	  /* chunk headers visited */
	__u64 reads;	  /* read callbacks */
	__u64 bytes_read; /* bytes they returned */
	__u64 heaps;	  /* heaps kept now */
	__u64 evicted;	  /* heaps dropped at max_heaps */
};

struct cp_glibc_chunks;

/* A cache of heaps with the caps of @lim (NULL: the defaults). NULL: out of memory. */
struct cp_glibc_chunks *cp_glibc_chunks__new(const struct cp_chunk_limits *lim);
void cp_glibc_chunks__free(struct cp_glibc_chunks *c);

/*
 * The glibc chunk holding @addr of process @pid, in its mapping [@map_start,
 * @map_end) of kind @map, read through @read(@ctx, ...) at @now_ns (any
 * monotonic clock: it times the retry of a heap given up on). Fills *@out
 * for CP_CHUNK_IN_USE. An address of a chunk's user bytes is in it; the
 * chunk's size field is CP_CHUNK_META.
 */
enum cp_chunk_verdict cp_glibc_chunks__find(struct cp_glibc_chunks *c, pid_t pid, __u64 map_start,
					    __u64 map_end, enum cp_chunk_map map, __u64 addr,
					    __u64 now_ns, cp_chunk_read_fn read, void *ctx,
					    struct cp_chunk *out);

/* Drops what is kept of @pid's heaps (exec, exit, new maps). */
void cp_glibc_chunks__forget(struct cp_glibc_chunks *c, pid_t pid);

void cp_glibc_chunks__stats(const struct cp_glibc_chunks *c, struct cp_glibc_chunks_stats *out);

/* Bytes held (heaps, checkpoints, the read buffer). */
size_t cp_glibc_chunks__mem_bytes(const struct cp_glibc_chunks *c);

/* "in use", "free", "allocator metadata", ... */
const char *cp_chunk_verdict_name(enum cp_chunk_verdict v);

#endif /* CP_GLIBC_CHUNKS_H */
