/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Miss store (paper §3.4): the forwarded misses of every process by L1 set
 * and by cache line. Per line it keeps, for up to CP_LINE_MAX_THREADS
 * threads, which bytes each one read and which it wrote (LASER's byte
 * model, papers/laser-hpca16.txt §4.3), so sharing is decided by whether
 * the bytes different threads touch overlap. Pure and bounded: at the cap
 * the line with the fewest misses among a few probed is evicted, counted.
 *
 * Sources without hit/miss information (soft) sample every access, so a
 * line that one thread wrote at start-up and another read much later
 * would look shared. For them each line also keeps the bytes every thread
 * touched in the current epoch (CP_SHARE_EPOCH_NS of sample time) and
 * counts the samples that met another thread's bytes of the same epoch
 * with a write involved: cp_line_sharing_concurrent() judges on those.
 */
#ifndef CP_MISS_STORE_H
#define CP_MISS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "machine/geometry.h"

#define CP_LINE_MAX_THREADS 4	       /* threads whose bytes a line remembers */
#define CP_MAX_LINES	    (1u << 16) /* default cap on tracked lines */
#define CP_LINE_MAX_BYTES   64	       /* the byte masks cover 64-byte lines */
#define CP_LINE_MAX_IPS	    4	       /* instructions whose misses a line remembers */
/*
 * Sharing epoch of the soft source: two threads share a line when they
 * touch it within the same 100 ms of sample time. Long enough for two
 * threads time-sliced on a loaded CPU to meet (the scheduler's slices are
 * a few ms), short against start-up writes read later by workers.
 */
#define CP_SHARE_EPOCH_NS	100000000ull
#define CP_SHARE_MIN_CONCURRENT 4 /* concurrent samples before a soft line is shared */

/*
 * Line spaces: a process's addresses (its pid, below 2^22) or, from
 * CP_SPACE_FILE_FIRST on, a shared file's offsets (cp_mem_access.space).
 */
#define CP_SPACE_FILE_FIRST 0x80000000u

static inline bool cp_space_is_file(__u32 space)
{
	return space >= CP_SPACE_FILE_FIRST;
}

/* One thread's bytes of a line: bit i = byte i of the line. */
struct cp_line_thread {
	__u32 tid;
	__u32 accesses;
	__u32 hitm_reads; /* loads that hit the line modified in another core */
	__u32 pid;	  /* its process (a shared mapping's lines mix processes) */
	__u64 read_mask;
	__u64 write_mask;
	__u64 epoch_read;		    /* ... bytes read in the line's current epoch */
	__u64 epoch_write;		    /* ... and written */
	__u32 ip_accesses[CP_LINE_MAX_IPS]; /* ... of them by the line's ips[i] */
};

/* An instruction that missed on a line. */
struct cp_line_ip {
	__u64 ip;
	__u64 mask;   /* the bytes of the line it touched */
	__u32 misses; /* 32 bits as the threads' counts; saturates */
	__u32 tgid;   /* its process: @ip is an address there */
};

struct cp_line {
	__u32 tgid;	    /* its line space: a process, or a shared file */
	__u32 nr_threads;   /* entries used in thr[] */
	__u64 line;	    /* address / line size */
	__u64 misses;	    /* forwarded samples on the line */
	__u64 stores;	    /* ... of them stores */
	__u64 hitm;	    /* ... of them that hit a line modified elsewhere */
	__u64 weight_sum;   /* ... their sample weights (load latency, cycles) */
	__u32 more_threads; /* accesses by threads beyond CP_LINE_MAX_THREADS */
	__u32 more_ips;	    /* misses by instructions beyond CP_LINE_MAX_IPS */
	__u32 epoch;	    /* sample time / CP_SHARE_EPOCH_NS of the epoch masks */
	/* samples that met another thread's bytes of the same epoch, a write involved: */
	__u32 concurrent_true;	/* ... on a byte the other wrote or this one wrote */
	__u32 concurrent_false; /* ... on disjoint bytes only */
	struct cp_line_thread thr[CP_LINE_MAX_THREADS];
	struct cp_line_ip ips[CP_LINE_MAX_IPS];
};

/* The process of @l's instruction @i: its own (a shared file's line mixes them). */
static inline __u32 cp_line_ip_tgid(const struct cp_line *l, __u32 i)
{
	return l->ips[i].tgid ? l->ips[i].tgid : l->tgid;
}

/* One sampled access as the miss store takes it. */
struct cp_mem_access {
	__u32 tgid;
	__u32 tid;
	/*
	 * The line space @addr is in, 0: @tgid's addresses. An access to a
	 * shared file mapping is given in the file's space, @addr its offset
	 * in the file (profile/shared_maps.h), so that the accesses of every
	 * process mapping it meet on one line, compared as threads' are.
	 */
	__u32 space;
	__u64 ip; /* the instruction, 0 if unknown */
	__u64 addr;
	__u64 weight;  /* load latency in cycles, 0 if unknown */
	__u32 size;    /* bytes accessed; 0: unknown, taken as 1 */
	__u64 time_ns; /* sample time (the epoch); 0: unknown, one epoch */
	bool store;
	bool hitm;
};

enum cp_sharing {
	CP_SHARING_NONE = 0, /* one thread, or nobody writes */
	CP_SHARING_TRUE,     /* threads touch the same bytes, one of them writing */
	CP_SHARING_FALSE,    /* threads touch disjoint bytes, one of them writing */
};

struct cp_miss_store_stats {
	__u64 added;
	__u64 lines;   /* tracked now */
	__u64 evicted; /* lines dropped at the cap */
};

struct cp_miss_store;

/*
 * A store mapping addresses onto @l1 (its line size, at most
 * CP_LINE_MAX_BYTES, and its sets) holding at most @max_lines lines
 * (0: CP_MAX_LINES). NULL on allocation failure or an unusable geometry.
 */
struct cp_miss_store *cp_miss_store__new(const struct cp_cache_level *l1, size_t max_lines);
void cp_miss_store__free(struct cp_miss_store *s);

/*
 * Hints that @tgid's line of @addr comes next: its home slot is fetched
 * into the cache meanwhile (a replay looks a few samples ahead). No effect
 * on the content.
 */
void cp_miss_store__prefetch(const struct cp_miss_store *s, __u32 tgid, __u64 addr);

/* Records one forwarded miss. Returns 0, or -ENOMEM (the line is not kept). */
int cp_miss_store__add(struct cp_miss_store *s, const struct cp_mem_access *a);

/* Misses that landed on L1 set @set (0 for a set out of range). */
__u64 cp_miss_store__set_misses(const struct cp_miss_store *s, __u32 set);
__u32 cp_miss_store__nr_sets(const struct cp_miss_store *s);
__u64 cp_miss_store__total(const struct cp_miss_store *s);

/* The line of (@tgid, @addr), or NULL. */
const struct cp_line *cp_miss_store__find(const struct cp_miss_store *s, __u32 tgid, __u64 addr);

/* Up to @max lines, most misses first (then lowest line). Returns how many. */
size_t cp_miss_store__top(const struct cp_miss_store *s, const struct cp_line **out, size_t max);

void cp_miss_store__stats(const struct cp_miss_store *s, struct cp_miss_store_stats *out);

/*
 * Adds everything @src holds to @dst (same line size and sets, else
 * -EINVAL): set and line misses, threads' bytes, instructions, and the
 * concurrent samples each store counted within its epochs (a window of
 * rolling epochs judges soft sharing as the whole run does). Past @dst's
 * cap its coldest lines are evicted as by cp_miss_store__add(). Returns 0.
 */
int cp_miss_store__merge(struct cp_miss_store *dst, const struct cp_miss_store *src);

/* Empties the store (counters other than lines are kept). */
void cp_miss_store__clear(struct cp_miss_store *s);

/*
 * Pure: the sharing on @line. Several threads and at least one write:
 * true sharing when a byte one thread wrote was read or written by another,
 * else false sharing. No sampled write, but several threads whose loads hit
 * the line modified in another core (HITM: someone writes it; perf c2c's
 * reading): true sharing when their loads overlap, else false sharing.
 * Threads past CP_LINE_MAX_THREADS are not judged.
 */
enum cp_sharing cp_line_sharing(const struct cp_line *line);

/*
 * Pure: the sharing on @line as seen within epochs (sources without
 * hit/miss information): none below CP_SHARE_MIN_CONCURRENT concurrent
 * samples; true sharing when some concurrent sample overlapped another
 * thread's bytes with a write involved, else false sharing.
 */
enum cp_sharing cp_line_sharing_concurrent(const struct cp_line *line);

/*
 * A truly shared line's two parts. CachePerf's rule calls the whole line
 * true sharing as soon as one byte one thread writes is touched by another,
 * but the bytes each thread has to itself (its own counter beside a total
 * they all add to) miss on the same writes, and that part padding fixes.
 * The shared part is the bytes several threads touched (a written one among
 * them: sampled writes are rare, so bytes several threads only read may be
 * written too), the rest the bytes one thread alone touched. An instruction
 * belongs to the rest when it touched only such bytes; samples of
 * instructions past CP_LINE_MAX_IPS count in the shared part.
 */
struct cp_line_parts {
	__u64 shared;	     /* bytes several threads touched */
	__u64 rest;	     /* bytes one thread alone touched */
	__u64 shared_misses; /* samples in the shared part */
	__u64 rest_misses;   /* samples of instructions touching only rest bytes */
	__u32 shared_accesses[CP_LINE_MAX_THREADS]; /* thr[i]'s samples in each part */
	__u32 rest_accesses[CP_LINE_MAX_THREADS];
};

/*
 * Pure: true when @line (shared truly: cp_line_sharing() or, with @soft,
 * cp_line_sharing_concurrent()) also has a false-sharing part, its parts
 * in @out: a written byte in each part, at least CP_SHARE_MIN_CONCURRENT
 * samples on the rest, no thread past CP_LINE_MAX_THREADS (which may touch
 * the rest), and with @soft as many concurrent samples on disjoint bytes.
 * Soft mode's byte masks span the run, not an epoch: a byte another thread
 * touched once (an initialisation) is shared, and the split is then not
 * made.
 */
bool cp_line_parts(const struct cp_line *line, bool soft, struct cp_line_parts *out);

/* "none", "true sharing", "false sharing". */
const char *cp_sharing_name(enum cp_sharing s);

#endif /* CP_MISS_STORE_H */
