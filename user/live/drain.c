// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Ring-buffer polling, counter-map read-and-reset, .bss counters. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "util/clock.h"

/* The kernel's "operation not supported" (include/linux/errno.h), not in libc headers. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

struct cp_drain {
	struct cacheperf *skel;
	struct ring_buffer *rb;
	struct cp_record_ops ops;
	struct cp_record_counts counts;
	bool no_lookup_and_delete;	       /* kernel < 5.14: hash maps lack it */
	__u64 deadline_ns;		       /* this poll stops handling records here */
	int handled;			       /* records of this poll */
	bool caught_up;			       /* the last poll read every ring to its end */
	void (*tick)(void *ctx, __u64 now_ns); /* between records; NULL: none */
	void *tick_ctx;
	__u64 last_ns; /* the last record's end; 0: none this poll */
	struct cp_drain_timing timing;
};

/*
 * How long record @data took, from the end of the one before it (a clock
 * read per record; the first of a poll, after its wait, reads one more).
 */
static void time_record(struct cp_drain *d, __u64 start_ns, const void *data, size_t size)
{
	__u64 end = cp_now_ns(), took = end - start_ns;
	__u32 type = 0;

	d->last_ns = end;
	d->timing.records++;
	d->timing.busy_ns += took;
	if (took <= d->timing.longest_ns)
		return;
	if (size >= sizeof(type))
		memcpy(&type, data, sizeof(type));
	d->timing.longest_ns = took;
	d->timing.longest_type = type;
}

static int cp_drain_record(void *ctx, void *data, size_t size)
{
	struct cp_drain *d = ctx;
	__u64 start = d->last_ns ? d->last_ns : cp_now_ns();
	int ret = cp_record_dispatch(&d->ops, &d->counts, data, size);

	time_record(d, start, data, size);
	if (ret)
		return ret;
	/* the record is consumed either way: a negative return only ends this poll */
	if (++d->handled % CP_DRAIN_CHECK_EVERY == 0) {
		__u64 now = cp_now_ns();

		if (d->tick) {
			d->tick(d->tick_ctx, now);
			/* the tick's work is no record's */
			d->last_ns = cp_now_ns();
		}
		if (now >= d->deadline_ns)
			return -EAGAIN;
	}
	return 0;
}

struct cp_drain *cp_drain__new(struct cacheperf *skel, const struct cp_record_ops *ops)
{
	struct cp_drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->skel = skel;
	if (ops)
		d->ops = *ops;
	/*
	 * The sample stack copies' ring (bpf/stacks.bpf.h) first, then the
	 * events: ring_buffer__consume() reads the rings in this order and a
	 * poll stops at its budget, so the ring behind would starve whenever the
	 * one before it takes the budget. Copies are few (1 walked event in
	 * --stack-every, until the stack is judged; the ring holds ~990) and
	 * must be read before the interval's sweep drops their stack ids.
	 */
	d->rb = ring_buffer__new(bpf_map__fd(skel->maps.stack_copies), cp_drain_record, d, NULL);
	if (!d->rb) {
		err = errno;
		free(d);
		errno = err;
		return NULL;
	}
	err = ring_buffer__add(d->rb, bpf_map__fd(skel->maps.events), cp_drain_record, d);
	if (err) {
		ring_buffer__free(d->rb);
		free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

void cp_drain__set_tick(struct cp_drain *d, void (*tick)(void *ctx, __u64 now_ns), void *ctx)
{
	d->tick = tick;
	d->tick_ctx = ctx;
}

void cp_drain__free(struct cp_drain *d)
{
	if (!d)
		return;
	ring_buffer__free(d->rb);
	free(d);
}

int cp_drain__poll(struct cp_drain *d, int timeout_ms)
{
	int ret;

	d->handled = 0;
	d->last_ns = 0;
	d->deadline_ns = cp_now_ns() + (__u64)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull +
			 CP_DRAIN_BUDGET_NS;
	if (timeout_ms == 0) {
		ret = ring_buffer__consume(d->rb);
	} else {
		ret = ring_buffer__poll(d->rb, timeout_ms);
		/* records wake the reader per batch (bpf/wakeup.bpf.h): read the rest */
		if (ret == 0)
			ret = ring_buffer__consume(d->rb);
	}
	d->caught_up = ret >= 0;
	return ret == -EAGAIN ? d->handled : ret;
}

int cp_drain__flush(struct cp_drain *d)
{
	__u64 end = cp_now_ns() + CP_DRAIN_FLUSH_NS;
	int ret, total = 0;

	do {
		d->handled = 0;
		d->last_ns = 0;
		d->deadline_ns = cp_now_ns() + CP_DRAIN_BUDGET_NS;
		ret = ring_buffer__consume(d->rb);
		total += d->handled;
	} while (ret == -EAGAIN && cp_now_ns() < end);
	return ret < 0 && ret != -EAGAIN ? ret : total;
}

void cp_drain__timing(const struct cp_drain *d, struct cp_drain_timing *out)
{
	*out = d->timing;
}

bool cp_drain__caught_up(const struct cp_drain *d)
{
	return d->caught_up;
}

int cp_drain__epoll_fd(const struct cp_drain *d)
{
	return ring_buffer__epoll_fd(d->rb);
}

__u64 cp_drain__malformed(const struct cp_drain *d)
{
	return d->counts.malformed;
}

__u64 cp_drain__unknown(const struct cp_drain *d)
{
	return d->counts.unknown;
}

/* Reads and deletes one entry; -ENOENT if it vanished meanwhile. */
static int cp_take(int fd, const void *key, void *val, bool *no_lookup_and_delete)
{
	if (!*no_lookup_and_delete) {
		if (!bpf_map_lookup_and_delete_elem(fd, key, val))
			return 0;
		if (errno != EINVAL && errno != ENOTSUPP && errno != EOPNOTSUPP)
			return -errno;
		*no_lookup_and_delete = true;
	}
	/* increments between the two calls are lost: acceptable on old kernels */
	if (bpf_map_lookup_elem(fd, key, val))
		return -errno;
	if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
		return -errno;
	return 0;
}

__u32 cp_map_keys_u32(int fd, __u32 *keys, __u32 cap)
{
	__u32 n = 0;

	while (n < cap && !bpf_map_get_next_key(fd, n ? &keys[n - 1] : NULL, &keys[n]))
		n++;
	return n;
}

/* Entries a batch call takes at most: a bucket holds far fewer. */
#define CP_MAP_DRAIN_BATCH 64

/*
 * cp_map_drain() in batches (BPF_MAP_LOOKUP_AND_DELETE_BATCH, 5.6): one
 * system call for up to CP_MAP_DRAIN_BATCH entries instead of two for each
 * (under -a the per-instruction counts' drain was most of the profiler's
 * 1,000 bpf() calls a second). *@taken: the entries handed to @fn. True
 * when the drain is done: the map walked to its end, or @cap taken; false
 * when the rest is to be taken one by one: a kernel or map without the
 * call, a bucket with more entries than the room left (-ENOSPC), an error.
 */
static bool drain_batch(int fd, size_t key_size, size_t val_size, size_t cap, cp_map_entry_fn fn,
			void *ctx, size_t *taken)
{
	__u8 *keys = malloc(CP_MAP_DRAIN_BATCH * key_size);
	__u8 *vals = malloc(CP_MAP_DRAIN_BATCH * val_size);
	__u8 in[CP_MAP_DRAIN_MAX_KEY], out[CP_MAP_DRAIN_MAX_KEY];
	bool first = true, done = false;

	*taken = 0;
	while (keys && vals && !done && *taken < cap) {
		__u32 count = (__u32)(cap - *taken < CP_MAP_DRAIN_BATCH ? cap - *taken
									: CP_MAP_DRAIN_BATCH);
		int err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : in, out, keys, vals,
							  &count, NULL)
				  ? -errno
				  : 0;

		/* the last batch ends the walk with -ENOENT, its entries taken all the same */
		if (err && err != -ENOENT)
			break;
		for (__u32 i = 0; i < count; i++)
			fn(ctx, keys + i * key_size, vals + i * val_size);
		*taken += count;
		done = err == -ENOENT || *taken >= cap;
		memcpy(in, out, key_size);
		first = false;
	}
	free(keys);
	free(vals);
	return done;
}

int cp_map_drain(int fd, size_t key_size, size_t val_size, size_t cap, bool *no_lookup_and_delete,
		 cp_map_entry_fn fn, void *ctx)
{
	__u8 key[CP_MAP_DRAIN_MAX_KEY], next[CP_MAP_DRAIN_MAX_KEY], val[CP_MAP_DRAIN_MAX_VALUE];
	size_t n = 0;
	bool more;
	int err;

	if (fd < 0)
		return fd;
	if (key_size > sizeof(key) || val_size > sizeof(val))
		return -EINVAL;
	if (cap == 0)
		return 0;
	/* a kernel without the combined call per entry has none in batches either */
	if (!*no_lookup_and_delete && drain_batch(fd, key_size, val_size, cap, fn, ctx, &n))
		return (int)n;
	if (bpf_map_get_next_key(fd, NULL, key))
		return errno == ENOENT || n ? (int)n : -errno;
	do {
		/* the successor first: a deleted key has none */
		more = !bpf_map_get_next_key(fd, key, next);
		err = more || errno == ENOENT ? 0 : -errno;
		if (!err) {
			err = cp_take(fd, key, val, no_lookup_and_delete);
			if (!err) {
				fn(ctx, key, val);
				n++;
			} else if (err == -ENOENT) {
				err = 0;
			}
		}
		/* what was taken is gone from the map: return it, not the error */
		if (err)
			return n ? (int)n : err;
		memcpy(key, next, key_size);
	} while (more && n < cap);
	return (int)n;
}

struct insn_out {
	struct cp_insn *out;
	size_t n;
};

static void take_insn(void *ctx, const void *key, const void *val)
{
	struct insn_out *o = ctx;

	memcpy(&o->out[o->n].key, key, sizeof(o->out[o->n].key));
	memcpy(&o->out[o->n].counts, val, sizeof(o->out[o->n].counts));
	o->n++;
}

int cp_drain__ip_counts(struct cp_drain *d, struct cp_insn *out, size_t cap)
{
	struct insn_out o = {.out = out};

	return cp_map_drain(bpf_map__fd(d->skel->maps.ip_counts), sizeof(struct cp_ip_key),
			    sizeof(struct cp_ip_counts), cap, &d->no_lookup_and_delete, take_insn,
			    &o);
}

void cp_drain__stats(const struct cp_drain *d, struct cp_stats *out)
{
	memcpy(out, &d->skel->bss->stats, sizeof(*out));
}
