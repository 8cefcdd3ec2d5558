// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Walks of glibc's chunk headers (glibc_chunks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objects/glibc_chunks.h"
#include "util/grow.h"

/* mmapped chunks are read one header at a time: fewer steps for them */
#define CP_CHUNK_MMAP_STEPS 256

struct heap {
	bool used;
	bool odd;  /* given up on at odd_ns */
	__u8 kind; /* enum cp_chunk_heap */
	pid_t pid;
	__u64 odd_ns;
	__u64 start;	 /* the mapping: what names the heap */
	__u64 end;	 /* ... its end, as the last lookup gave it */
	__u64 first;	 /* the first chunk (main, arena) */
	__u64 top_end;	 /* arena: heap + heap_info.size, read at each lookup */
	__u64 *marks;	 /* chunk starts, ascending; marks[0] = first */
	size_t nr_marks; /* used */
	size_t cap_marks;
	__u32 every;	/* chunks between checkpoints now */
	__u32 since;	/* chunks past the last checkpoint, up to the frontier */
	__u64 frontier; /* the farthest chunk validated */
	__u64 last_use;
};

struct cp_glibc_chunks {
	struct cp_chunk_limits lim;
	struct heap *heaps;
	__u64 tick;
	__u64 second;	    /* now_ns / 1 s of the bytes below */
	__u64 second_bytes; /* read in that second */
	__u8 *buf;
	struct cp_glibc_chunks_stats st;
};

/* One lookup's reads: a window of the target's memory, and what it cost. */
struct reader {
	cp_chunk_read_fn fn;
	void *ctx;
	__u8 *buf;
	size_t cap;
	__u64 base; /* the window: [base, base + len) */
	size_t len;
	__u64 bytes; /* read in this lookup */
	__u64 max_bytes;
	struct cp_glibc_chunks_stats *st;
};

const char *cp_chunk_verdict_name(enum cp_chunk_verdict v)
{
	switch (v) {
	case CP_CHUNK_IN_USE:
		return "in use";
	case CP_CHUNK_FREE:
		return "free";
	case CP_CHUNK_META:
		return "allocator metadata";
	case CP_CHUNK_ODD:
		return "not understood";
	case CP_CHUNK_LIMIT:
		return "beyond the walk's caps";
	case CP_CHUNK_UNREADABLE:
		return "unreadable";
	default:
		return "?";
	}
}

struct cp_glibc_chunks *cp_glibc_chunks__new(const struct cp_chunk_limits *lim)
{
	struct cp_glibc_chunks *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (lim)
		c->lim = *lim;
	if (!c->lim.max_steps)
		c->lim.max_steps = CP_CHUNK_MAX_STEPS;
	if (!c->lim.max_read_bytes)
		c->lim.max_read_bytes = CP_CHUNK_MAX_READ_BYTES;
	if (c->lim.batch_bytes < CP_GLIBC_HDR_BYTES)
		c->lim.batch_bytes = CP_CHUNK_BATCH_BYTES;
	if (!c->lim.mark_every)
		c->lim.mark_every = CP_CHUNK_MARK_EVERY;
	if (c->lim.max_marks < 2)
		c->lim.max_marks = CP_CHUNK_MAX_MARKS;
	if (!c->lim.max_heaps)
		c->lim.max_heaps = CP_CHUNK_MAX_HEAPS;
	if (!c->lim.bytes_per_s)
		c->lim.bytes_per_s = CP_CHUNK_BYTES_PER_S;
	c->heaps = calloc(c->lim.max_heaps, sizeof(*c->heaps));
	/* heap_info and the arena's header are read whole: never a smaller buffer */
	c->buf = malloc(c->lim.batch_bytes < 64 ? 64 : c->lim.batch_bytes);
	if (!c->heaps || !c->buf) {
		cp_glibc_chunks__free(c);
		return NULL;
	}
	return c;
}

static void heap_drop(struct cp_glibc_chunks *c, struct heap *h)
{
	free(h->marks);
	memset(h, 0, sizeof(*h));
	c->st.heaps--;
}

void cp_glibc_chunks__free(struct cp_glibc_chunks *c)
{
	if (!c)
		return;
	for (__u32 i = 0; c->heaps && i < c->lim.max_heaps; i++)
		free(c->heaps[i].marks);
	free(c->heaps);
	free(c->buf);
	free(c);
}

void cp_glibc_chunks__forget(struct cp_glibc_chunks *c, pid_t pid)
{
	for (__u32 i = 0; i < c->lim.max_heaps; i++)
		if (c->heaps[i].used && c->heaps[i].pid == pid)
			heap_drop(c, &c->heaps[i]);
}

void cp_glibc_chunks__stats(const struct cp_glibc_chunks *c, struct cp_glibc_chunks_stats *out)
{
	*out = c->st;
}

size_t cp_glibc_chunks__mem_bytes(const struct cp_glibc_chunks *c)
{
	size_t n = sizeof(*c) + c->lim.max_heaps * sizeof(*c->heaps) + c->lim.batch_bytes;

	for (__u32 i = 0; i < c->lim.max_heaps; i++)
		n += c->heaps[i].cap_marks * sizeof(*c->heaps[i].marks);
	return n;
}

/*
 * @n (<= 64) bytes of the target at @addr into @out, from the window or
 * from a new read of up to @want bytes that stops before @limit. 0, or
 * -E2BIG (the lookup's byte cap), -ERANGE (past @limit), -EIO.
 */
static int get(struct reader *r, __u64 addr, __u64 limit, size_t want, void *out, size_t n)
{
	size_t len = want < r->cap ? want : r->cap;
	ssize_t got;

	if (addr >= r->base && addr - r->base + n <= r->len) {
		memcpy(out, r->buf + (addr - r->base), n);
		return 0;
	}
	if (addr >= limit || limit - addr < n)
		return -ERANGE;
	if (len > limit - addr)
		len = (size_t)(limit - addr);
	if (len < n)
		len = n;
	if (r->bytes + n > r->max_bytes)
		return -E2BIG;
	if (r->bytes + len > r->max_bytes)
		len = (size_t)(r->max_bytes - r->bytes);
	r->len = 0;
	r->st->reads++;
	got = r->fn(r->ctx, addr, r->buf, len);
	if (got < (ssize_t)n)
		return -EIO;
	r->bytes += (__u64)got;
	r->st->bytes_read += (__u64)got;
	r->base = addr;
	r->len = (size_t)got;
	memcpy(out, r->buf, n);
	return 0;
}

static enum cp_chunk_verdict read_verdict(int err)
{
	if (err == -E2BIG)
		return CP_CHUNK_LIMIT;
	return err == -ERANGE ? CP_CHUNK_FREE : CP_CHUNK_UNREADABLE;
}

/* Bytes worth reading for the next header: a window after small chunks, a page after big ones. */
static size_t want_after(const struct cp_glibc_chunks *c, __u64 last_size)
{
	return last_size >= CP_GLIBC_PAGE ? CP_GLIBC_PAGE : c->lim.batch_bytes;
}

/* Where chunks of @h end: the arena's heap_info.size, else the mapping. */
static __u64 heap_limit(const struct heap *h)
{
	return h->kind == CP_CHUNK_HEAP_ARENA ? h->top_end : h->end;
}

/* A size field that can be a chunk of @h's kind (its place aside). */
static bool sane(const struct heap *h, __u64 size, __u64 bits)
{
	if (size < CP_GLIBC_MIN_CHUNK || size % CP_GLIBC_ALIGN || (bits & CP_GLIBC_IS_MMAPPED))
		return false;
	/* the main arena's chunks never carry NON_MAIN_ARENA; an arena's free ones may lack it */
	return h->kind != CP_CHUNK_HEAP_MAIN || !(bits & CP_GLIBC_NON_MAIN_ARENA);
}

/* An arena heap's fencepost: the 16-byte chunk that ends an older heap. */
static bool fencepost(const struct heap *h, __u64 size)
{
	return h->kind == CP_CHUNK_HEAP_ARENA && size == CP_GLIBC_HDR_BYTES;
}

static void reset_marks(const struct cp_glibc_chunks *c, struct heap *h)
{
	h->nr_marks = 1;
	h->marks[0] = h->first;
	h->frontier = h->first;
	h->since = 0;
	h->every = c->lim.mark_every;
}

/* The walk validated the chunk at @pos: move the frontier, maybe set a checkpoint. */
static void progress(const struct cp_glibc_chunks *c, struct heap *h, __u64 pos)
{
	if (pos <= h->frontier)
		return;
	h->frontier = pos;
	if (++h->since < h->every)
		return;
	h->since = 0;
	if (h->nr_marks >= c->lim.max_marks) {
		/* full: keep every other checkpoint, twice as far apart from now on */
		size_t n = 0;

		for (size_t i = 0; i < h->nr_marks; i += 2)
			h->marks[n++] = h->marks[i];
		h->nr_marks = n;
		h->every *= 2;
	}
	if (h->nr_marks == h->cap_marks &&
	    cp_grow((void **)&h->marks, &h->cap_marks, h->nr_marks, sizeof(*h->marks), 64))
		return;
	h->marks[h->nr_marks++] = pos;
}

/* The latest known chunk start at or before @addr - 8 (the previous chunk owns 8 bytes more). */
static __u64 start_for(const struct heap *h, __u64 addr)
{
	size_t lo = 0, hi = h->nr_marks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->marks[mid] + 8 <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (h->frontier > h->marks[lo] && h->frontier + 8 <= addr)
		return h->frontier;
	return h->marks[lo];
}

static void fill(struct cp_chunk *out, const struct heap *h, __u64 pos, __u64 size)
{
	out->chunk = pos;
	out->size = size;
	out->user = pos + CP_GLIBC_HDR_BYTES;
	out->usable = h->kind == CP_CHUNK_HEAP_MMAPPED ? size - CP_GLIBC_HDR_BYTES : size - 8;
	out->heap = h->kind;
}

/*
 * The chunk at @pos (@size) holds @addr in its user bytes: whether it is in
 * use, which the next chunk's PREV_INUSE says, unless it is the top chunk.
 */
static enum cp_chunk_verdict settle(struct cp_glibc_chunks *c, const struct heap *h,
				    struct reader *r, __u64 pos, __u64 size, struct cp_chunk *out)
{
	__u64 next = pos + size, w[2] = {0, 0}, nsize;
	bool top;
	int err;

	if (h->kind == CP_CHUNK_HEAP_ARENA)
		top = next == h->top_end;
	else
		top = next + CP_GLIBC_HDR_BYTES > h->end;
	if (!top) {
		err = get(r, next, h->end, c->lim.batch_bytes, w, sizeof(w));
		if (err)
			return read_verdict(err);
		c->st.steps++;
		nsize = w[1] & ~CP_GLIBC_FLAGS;
		if (!sane(h, nsize, w[1] & CP_GLIBC_FLAGS) && !fencepost(h, nsize)) {
			/* past the main heap's top: the rest of the break's page */
			if (h->kind != CP_CHUNK_HEAP_MAIN || next < h->end - CP_GLIBC_PAGE)
				return CP_CHUNK_ODD;
			top = true;
		}
	}
	if (top || !(w[1] & CP_GLIBC_PREV_INUSE))
		return CP_CHUNK_FREE;
	fill(out, h, pos, size);
	return CP_CHUNK_IN_USE;
}

/* From the chunk at @pos (known good) to the one holding @addr (>= pos + 8). */
static enum cp_chunk_verdict walk(struct cp_glibc_chunks *c, struct heap *h, struct reader *r,
				  __u64 pos, __u64 addr, struct cp_chunk *out)
{
	__u64 limit = heap_limit(h), last = 0, w[2], size, bits;
	int err;

	for (__u32 steps = 0;; steps++) {
		if (steps >= c->lim.max_steps)
			return CP_CHUNK_LIMIT;
		/* the last chunk ended: what follows is no chunk of this heap */
		if (pos >= limit || limit - pos < CP_GLIBC_HDR_BYTES)
			return CP_CHUNK_FREE;
		err = get(r, pos, h->end, want_after(c, last), w, sizeof(w));
		if (err)
			return read_verdict(err);
		c->st.steps++;
		size = w[1] & ~CP_GLIBC_FLAGS;
		bits = w[1] & CP_GLIBC_FLAGS;
		/* addr >= pos + 8: in the fencepost or past the older heap's end */
		if (fencepost(h, size))
			return CP_CHUNK_META;
		if (!sane(h, size, bits)) {
			/* after the main heap's top: the break's page, zeros or stale bytes */
			if (h->kind == CP_CHUNK_HEAP_MAIN && pos > h->first &&
			    pos >= h->end - CP_GLIBC_PAGE)
				return CP_CHUNK_FREE;
			return CP_CHUNK_ODD;
		}
		if (size > limit - pos)
			/* the main heap grew past the maps we were given: ask again later */
			return h->kind == CP_CHUNK_HEAP_MAIN ? CP_CHUNK_LIMIT : CP_CHUNK_ODD;
		progress(c, h, pos);
		if (addr < pos + size + 8) {
			if (addr < pos + CP_GLIBC_HDR_BYTES)
				return CP_CHUNK_META;
			return settle(c, h, r, pos, size, out);
		}
		last = size;
		pos += size;
	}
}

/*
 * An anonymous mapping of mmapped chunks: walked from its start, one
 * header per chunk (each is at least a page). Only what glibc's mmap path
 * writes passes: prev_size 0 and flags exactly IS_MMAPPED. No chunk at the
 * start: CP_CHUNK_ODD (the mapping is no such thing); an address after the
 * last chunk found (a neighbour merged into the mapping): CP_CHUNK_FREE.
 */
static enum cp_chunk_verdict walk_mmapped(struct cp_glibc_chunks *c, struct heap *h,
					  struct reader *r, __u64 addr, struct cp_chunk *out)
{
	__u64 pos = h->start, w[2], size;
	int err;

	for (__u32 steps = 0; steps < CP_CHUNK_MMAP_STEPS && steps < c->lim.max_steps; steps++) {
		if (h->end - pos < CP_GLIBC_HDR_BYTES)
			return CP_CHUNK_FREE;
		err = get(r, pos, h->end, CP_GLIBC_HDR_BYTES, w, sizeof(w));
		if (err)
			return read_verdict(err);
		c->st.steps++;
		size = w[1] & ~CP_GLIBC_FLAGS;
		if (w[0] || (w[1] & CP_GLIBC_FLAGS) != CP_GLIBC_IS_MMAPPED ||
		    size < CP_GLIBC_PAGE || size % CP_GLIBC_PAGE || size > h->end - pos)
			return pos == h->start ? CP_CHUNK_ODD : CP_CHUNK_FREE;
		if (addr < pos + size) {
			if (addr < pos + CP_GLIBC_HDR_BYTES)
				return CP_CHUNK_META;
			fill(out, h, pos, size);
			return CP_CHUNK_IN_USE;
		}
		pos += size;
	}
	return CP_CHUNK_LIMIT;
}

/* The first chunk after an arena's malloc_state at @p, as _int_new_arena aligns it. */
static __u64 after_arena_state(__u64 p)
{
	__u64 mis = (p + CP_GLIBC_HDR_BYTES) & (CP_GLIBC_ALIGN - 1);

	return mis ? p + CP_GLIBC_ALIGN - mis : p;
}

/*
 * heap_info at the start of a 64 MiB-aligned mapping: sets @h's first chunk
 * and end. False when the words there are no heap_info.
 */
static bool arena_heap(struct heap *h, struct reader *r)
{
	__u64 w[5], hdr, size, mprot;

	if (h->start % CP_GLIBC_HEAP_MAX || get(r, h->start, h->end, 64, w, sizeof(w)))
		return false;
	hdr = w[0] % CP_GLIBC_HEAP_MAX;
	size = w[2];
	mprot = w[3];
	if ((hdr != 32 && hdr != 48) || !size || size % CP_GLIBC_PAGE || size > mprot ||
	    mprot > CP_GLIBC_HEAP_MAX || size > h->end - h->start)
		return false;
	/* glibc >= 2.35: the page size the arena was made with */
	if (hdr == 48 && (w[4] < CP_GLIBC_PAGE || (w[4] & (w[4] - 1))))
		return false;
	/* an arena's first heap holds the arena (malloc_state) after heap_info */
	h->first = w[0] - hdr == h->start
			   ? after_arena_state(h->start + hdr + CP_GLIBC_ARENA_STATE_BYTES)
			   : h->start + hdr;
	h->top_end = h->start + size;
	return h->first + CP_GLIBC_MIN_CHUNK <= h->top_end;
}

/* heap_info.size again: the arena's heap grows and shrinks. False if it is no longer sane. */
static bool arena_refresh(struct heap *h, struct reader *r)
{
	__u64 w[2];

	if (get(r, h->start + 16, h->end, 64, w, sizeof(w)))
		return false;
	if (!w[0] || w[0] % CP_GLIBC_PAGE || w[0] > h->end - h->start ||
	    h->start + w[0] < h->first + CP_GLIBC_MIN_CHUNK)
		return false;
	h->top_end = h->start + w[0];
	return true;
}

/* What kind of heap a new (or retried) mapping is. False: none we know. */
static bool identify(const struct cp_glibc_chunks *c, struct heap *h, enum cp_chunk_map map,
		     struct reader *r)
{
	if (map == CP_CHUNK_MAP_BRK) {
		h->kind = CP_CHUNK_HEAP_MAIN;
		h->first = (h->start + CP_GLIBC_ALIGN - 1) & ~(CP_GLIBC_ALIGN - 1);
	} else if (arena_heap(h, r)) {
		h->kind = CP_CHUNK_HEAP_ARENA;
	} else {
		h->kind = CP_CHUNK_HEAP_MMAPPED;
		h->first = h->start;
	}
	if (!h->marks) {
		h->cap_marks = 64;
		h->marks = malloc(h->cap_marks * sizeof(*h->marks));
		if (!h->marks) {
			h->cap_marks = 0;
			return false;
		}
	}
	reset_marks(c, h);
	return true;
}

/* The heap of (@pid, @start), made (evicting the least recently used) if new. */
static struct heap *heap_of(struct cp_glibc_chunks *c, pid_t pid, __u64 start, bool *fresh)
{
	struct heap *h = NULL, *lru = NULL;

	*fresh = false;
	for (__u32 i = 0; i < c->lim.max_heaps; i++) {
		struct heap *x = &c->heaps[i];

		if (x->used && x->pid == pid && x->start == start) {
			h = x;
			break;
		}
		if (!x->used && !h)
			h = x;
		else if (x->used && (!lru || x->last_use < lru->last_use))
			lru = x;
	}
	if (h && h->used)
		return h;
	if (!h) {
		h = lru;
		heap_drop(c, h);
		c->st.evicted++;
	}
	h->used = true;
	h->pid = pid;
	h->start = start;
	c->st.heaps++;
	*fresh = true;
	return h;
}

static enum cp_chunk_verdict lookup(struct cp_glibc_chunks *c, struct heap *h, struct reader *r,
				    __u64 addr, struct cp_chunk *out)
{
	enum cp_chunk_verdict v;
	__u64 pos;

	if (h->kind == CP_CHUNK_HEAP_MMAPPED)
		return walk_mmapped(c, h, r, addr, out);
	if (h->kind == CP_CHUNK_HEAP_ARENA && !arena_refresh(h, r))
		return CP_CHUNK_ODD;
	/* heap_info, the arena, the first chunk's header */
	if (addr < h->first + CP_GLIBC_HDR_BYTES)
		return CP_CHUNK_META;
	if (addr >= heap_limit(h))
		return CP_CHUNK_FREE;
	pos = start_for(h, addr);
	v = walk(c, h, r, pos, addr, out);
	if (v == CP_CHUNK_ODD && pos != h->first) {
		/* the heap changed under a checkpoint: once more, from the start */
		c->st.restarts++;
		reset_marks(c, h);
		v = walk(c, h, r, h->first, addr, out);
	}
	return v;
}

enum cp_chunk_verdict cp_glibc_chunks__find(struct cp_glibc_chunks *c, pid_t pid, __u64 map_start,
					    __u64 map_end, enum cp_chunk_map map, __u64 addr,
					    __u64 now_ns, cp_chunk_read_fn read, void *ctx,
					    struct cp_chunk *out)
{
	struct reader r = {
		.fn = read,
		.ctx = ctx,
		.buf = c->buf,
		.cap = c->lim.batch_bytes,
		.max_bytes = c->lim.max_read_bytes,
		.st = &c->st,
	};
	enum cp_chunk_verdict v;
	struct heap *h;
	bool fresh;

	if (r.cap < 64)
		r.cap = 64;
	c->st.lookups++;
	memset(out, 0, sizeof(*out));
	if (now_ns / 1000000000ull != c->second) {
		c->second = now_ns / 1000000000ull;
		c->second_bytes = 0;
	}
	if (c->second_bytes >= c->lim.bytes_per_s) {
		c->st.limited++;
		c->st.throttled++;
		return CP_CHUNK_LIMIT;
	}
	if (r.max_bytes > c->lim.bytes_per_s - c->second_bytes)
		r.max_bytes = c->lim.bytes_per_s - c->second_bytes;
	if (addr < map_start || addr >= map_end || map_end - map_start < CP_GLIBC_MIN_CHUNK)
		return CP_CHUNK_ODD;
	h = heap_of(c, pid, map_start, &fresh);
	h->last_use = ++c->tick;
	h->end = map_end;
	if (h->odd && now_ns - h->odd_ns >= CP_CHUNK_RETRY_NS) {
		h->odd = false;
		fresh = true;
	}
	if (h->odd) {
		v = CP_CHUNK_ODD;
	} else if (fresh && !identify(c, h, map, &r)) {
		v = CP_CHUNK_ODD;
	} else {
		v = lookup(c, h, &r, addr, out);
	}
	if (v == CP_CHUNK_ODD && !h->odd) {
		h->odd = true;
		h->odd_ns = now_ns;
	}
	c->second_bytes += r.bytes;
	c->st.found += v == CP_CHUNK_IN_USE;
	c->st.gave_up += v == CP_CHUNK_ODD;
	c->st.limited += v == CP_CHUNK_LIMIT;
	return v;
}
