/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Drain: moves what the BPF programs produced into user space, and nothing
 * else. Records of the `events` ring buffer go to caller callbacks after a
 * size and type check; the per-instruction counters are read and reset once
 * per interval; the global counters are copied out of .bss.
 */
#ifndef CP_DRAIN_H
#define CP_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include "cacheperf/abi.h"
#include "machine/agent_cost.h"
#include "profile/insn_store.h"
#include "profile/records.h"

struct cacheperf;
struct cp_drain;

/* A drain of @skel's maps (loaded) calling @ops; NULL with errno set on failure. */
struct cp_drain *cp_drain__new(struct cacheperf *skel, const struct cp_record_ops *ops);
void cp_drain__free(struct cp_drain *d);

/*
 * Time one poll may spend handling records, past its wait: libbpf's
 * ring_buffer__poll() returns only once the ring is empty, which a stream
 * of samples faster than we handle them (-a on a busy machine, before the
 * rate cap's first interval) never lets happen, and the loop's ticks, the
 * rate cap and the rolling summaries would stop with it.
 */
#define CP_DRAIN_BUDGET_NS   50000000ull
#define CP_DRAIN_CHECK_EVERY 256 /* records between looks at the clock */

/*
 * Calls @tick every CP_DRAIN_CHECK_EVERY records handled, with the time:
 * what must not wait for the end of a long poll (the allocation probes'
 * budget windows, whose records are what makes the poll long).
 */
void cp_drain__set_tick(struct cp_drain *d, void (*tick)(void *ctx, __u64 now_ns), void *ctx);

/*
 * Waits up to @timeout_ms (-1: forever, 0: not at all) for records and hands
 * every available one to the callbacks, for at most CP_DRAIN_BUDGET_NS after
 * the wait (the rest waits for the next poll). Records wake the wait only
 * per batch (CP_RINGBUF_WAKEUP_BYTES, at most once per ms per CPU,
 * bpf/wakeup.bpf.h): those that came since are read when the timeout ends,
 * so a reader of samples passes a finite timeout. Returns the records
 * consumed, or a negative errno (a callback's, or -EINTR from a signal).
 */
int cp_drain__poll(struct cp_drain *d, int timeout_ms);

/*
 * At most this long for cp_drain__flush(): the rings it empties hold a
 * bounded number of records, but targets still running (-p, -a) keep
 * adding to them.
 */
#define CP_DRAIN_FLUSH_NS 1000000000ull

/*
 * Hands every record waiting in the rings to the callbacks: polls without
 * waiting until a poll ends within its budget (every ring read to its end:
 * a poll cut short by its budget leaves the rest of its ring, and the
 * rings after it, unread), for at most CP_DRAIN_FLUSH_NS. Returns the records
 * consumed, or a negative errno as cp_drain__poll().
 */
int cp_drain__flush(struct cp_drain *d);

/*
 * The records handled so far, the time they took (each from the end of the
 * one before it in its poll, so nothing of a poll's wait) and the longest
 * one with its type: how long the drain kept the rings waiting at once.
 */
void cp_drain__timing(const struct cp_drain *d, struct cp_drain_timing *out);

/* True when the last cp_drain__poll() read every ring to its end (not cut by its budget). */
bool cp_drain__caught_up(const struct cp_drain *d);

/* A file descriptor that becomes readable when records wait, for the caller's epoll. */
int cp_drain__epoll_fd(const struct cp_drain *d);

/* Records too short, or a sample record of the wrong size: a kernel/user ABI mismatch. */
__u64 cp_drain__malformed(const struct cp_drain *d);
/* Records of a type no callback takes. */
__u64 cp_drain__unknown(const struct cp_drain *d);

/*
 * Moves up to @cap per-instruction counter entries into @out and deletes
 * them from the map, so each call returns what was counted since the
 * previous one. Entries beyond @cap stay for the next call. Returns the
 * number moved, or a negative errno.
 */
int cp_drain__ip_counts(struct cp_drain *d, struct cp_insn *out, size_t cap);

/* One entry a map drain took: @key and @val as the map holds them. */
typedef void (*cp_map_entry_fn)(void *ctx, const void *key, const void *val);

#define CP_MAP_DRAIN_MAX_KEY   64 /* bytes */
#define CP_MAP_DRAIN_MAX_VALUE 256

/*
 * The keys of hash map @fd, whose keys are __u32 (the stack maps' buckets),
 * into @keys, at most @cap: listed whole before any is deleted, because
 * get_next_key from a deleted key starts over at the first one. Keys BPF
 * adds meanwhile may be missed. Returns how many.
 */
__u32 cp_map_keys_u32(int fd, __u32 *keys, __u32 cap);

/*
 * Reads and deletes up to @cap entries of hash map @fd (keys of @key_size,
 * values of @val_size bytes, at most CP_MAP_DRAIN_MAX_*), handing each to
 * @fn; entries beyond @cap stay. Up to 64 entries a system call where the
 * kernel can (5.6), else two calls an entry. *@no_lookup_and_delete is
 * set, and used, when the kernel lacks the combined call (< 5.14). Returns
 * the number taken, or a negative errno when none was.
 */
int cp_map_drain(int fd, size_t key_size, size_t val_size, size_t cap, bool *no_lookup_and_delete,
		 cp_map_entry_fn fn, void *ctx);

/* Copies the BPF global counters (running totals since load). */
void cp_drain__stats(const struct cp_drain *d, struct cp_stats *out);

#endif /* CP_DRAIN_H */
