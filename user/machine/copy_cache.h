/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The bookkeeping of the sealed copies of targets' files kept for reuse
 * (machine/target_file.c): one copy per file content, whichever process maps
 * the file, so the compiler and the libraries a build starts a thousand
 * times are copied once. A file's content is known by what fstat() says of
 * the very descriptor copied: device, inode, size, mtime and ctime (a write
 * moves the ctime, and no tenant can set it back); a changed file has
 * another key, and gets a copy of its own.
 *
 * Bounded by entries and by bytes, the least recently used evicted first;
 * hits, misses and evictions counted. Pure: the caller holds what the
 * handles stand for (target_file.c: descriptors it opens and closes;
 * objects/allocator.c: the functions read from a file, by index).
 */
#ifndef CP_COPY_CACHE_H
#define CP_COPY_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Copies kept at most. */
#define CP_COPY_CACHE_ENTRIES 64
/* Bytes kept at most with no --max-memory; with one, half of it (target_file.h). */
#define CP_COPY_CACHE_BYTES (128ull << 20)

/* What identifies a file's content: fstat() of the descriptor copied. */
struct cp_copy_key {
	__u64 dev;	/* st_dev */
	__u64 ino;	/* st_ino; 0: no key (not kept) */
	__u64 size;	/* st_size */
	__u64 mtime_ns; /* st_mtim */
	__u64 ctime_ns; /* st_ctim */
	__u32 no_code;	/* a copy with the code sections left holes (cp_tf_want.no_code) */
	__u32 __pad;
};

struct cp_copy_entry {
	struct cp_copy_key key;
	int handle;	/* the caller's: a sealed copy's descriptor, an index; -1: a free slot */
	__u64 bytes;	/* what it holds (its data pages) */
	__u64 last_use; /* the cache's clock at its last use */
};

struct cp_copy_stats {
	__u64 hits;	 /* copies reused */
	__u64 misses;	 /* looked for, not kept */
	__u64 made;	 /* copies made (the caller's count: a miss may be refused) */
	__u64 evictions; /* copies let go to make room (or on --max-memory shrinks) */
	__u64 held;	 /* copies kept now */
	__u64 held_bytes;
};

struct cp_copy_cache {
	struct cp_copy_entry e[CP_COPY_CACHE_ENTRIES];
	size_t max_entries; /* <= CP_COPY_CACHE_ENTRIES */
	__u64 max_bytes;
	__u64 clock;
	struct cp_copy_stats stats;
};

/* An empty cache of at most @max_entries copies (clamped) and @max_bytes. */
void cp_copy_cache_init(struct cp_copy_cache *c, size_t max_entries, __u64 max_bytes);

bool cp_copy_key_equal(const struct cp_copy_key *a, const struct cp_copy_key *b);

/*
 * The handle kept for @key (made the most recently used, counted a hit), or
 * -1 (counted a miss: the caller copies). A key with no inode always misses.
 * A whole copy serves a key that asks for no code too (not the reverse).
 */
int cp_copy_cache_find(struct cp_copy_cache *c, const struct cp_copy_key *key);

/*
 * cp_copy_cache_find() for a caller that makes no copy when none is kept
 * (a file that waits for its parse worker): a miss is not counted, so
 * misses stay the copies made plus those refused.
 */
int cp_copy_cache_probe(struct cp_copy_cache *c, const struct cp_copy_key *key);

/*
 * Whether a copy of @bytes may be kept at all (not larger than the cache),
 * and if so the slot to keep it in: a free one, after the least recently
 * used copies that leave room for it are taken out, their handles
 * written to @out_handles (@nr_out of them, at most max_entries: the caller
 * lets them go, each counted an eviction). Returns the slot's index, or -1 (nothing taken out).
 */
int cp_copy_cache_make_room(struct cp_copy_cache *c, __u64 bytes, int *out_handles, size_t *nr_out);

/* Keeps @handle, the copy of @key holding @bytes, in slot @slot (cp_copy_cache_make_room()). */
void cp_copy_cache_put(struct cp_copy_cache *c, int slot, const struct cp_copy_key *key, int handle,
		       __u64 bytes);

/* Takes every copy out (each an eviction); their handles into @out_handles. Returns how many. */
size_t cp_copy_cache_drain(struct cp_copy_cache *c, int *out_handles);

#endif /* CP_COPY_CACHE_H */
