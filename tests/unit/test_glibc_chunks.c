// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * glibc's chunk headers, walked through a read callback: synthetic heap
 * images laid out as glibc 2.36 lays them (the main arena's [heap], a
 * non-main arena's first and later heaps, mmapped chunks), tables of
 * addresses and what each is; the caps (steps, bytes) and checkpoints; what
 * is odd (sizes, flags) and the walk that starts over when the heap changed
 * under a checkpoint. Last, this very process's heaps, as its glibc made them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/uio.h>
#include <cmocka.h>

#include "objects/glibc_chunks.h"

#define PID	 4242
#define BRK_BASE 0x555555559000ull
#define ARENA	 0x7f1c54000000ull /* 64 MiB-aligned */
#define NOW	 1000000000000ull

/* A synthetic image of the target's memory at @base, and what was read of it. */
struct image {
	__u64 base;
	__u8 *mem;
	size_t len;
	__u64 reads;
	__u64 bytes;
};

static ssize_t read_image(void *ctx, __u64 addr, void *buf, size_t len)
{
	struct image *im = ctx;

	im->reads++;
	if (addr < im->base || addr >= im->base + im->len)
		return -EFAULT;
	if (len > im->base + im->len - addr)
		len = (size_t)(im->base + im->len - addr);
	memcpy(buf, im->mem + (addr - im->base), len);
	im->bytes += len;
	return (ssize_t)len;
}

static struct image *image_new(__u64 base, size_t len)
{
	struct image *im = calloc(1, sizeof(*im));

	assert_non_null(im);
	im->base = base;
	im->len = len;
	im->mem = calloc(1, len);
	assert_non_null(im->mem);
	return im;
}

static void image_free(struct image *im)
{
	free(im->mem);
	free(im);
}

static void put64(struct image *im, __u64 addr, __u64 v)
{
	memcpy(im->mem + (addr - im->base), &v, sizeof(v));
}

/* A chunk header at @chunk: its size field (flags included); prev_size left alone. */
static void chunk(struct image *im, __u64 at, __u64 size_field)
{
	put64(im, at + 8, size_field);
}

/*
 * The main arena as a process makes it: tcache_perthread_struct, then
 * objects of 100, 40 and 24 bytes, one freed into a bin (its next chunk's
 * PREV_INUSE clear), then the top chunk up to the break in the mapping's
 * last page.
 */
#define M_TCACHE BRK_BASE
#define M_A	 (M_TCACHE + 0x290) /* malloc(100): chunk 0x70 */
#define M_FREE	 (M_A + 0x70)	    /* a freed 0x40 chunk in a bin */
#define M_B	 (M_FREE + 0x40)    /* malloc(24): chunk 0x20 is too small, 0x30 */
#define M_TOP	 (M_B + 0x30)
#define M_LEN	 0x21000ull
#define M_BRK	 (BRK_BASE + M_LEN - 0x100) /* the break, inside the last page */

static struct image *main_heap(void)
{
	struct image *im = image_new(BRK_BASE, M_LEN);

	chunk(im, M_TCACHE, 0x290 | CP_GLIBC_PREV_INUSE);
	chunk(im, M_A, 0x70 | CP_GLIBC_PREV_INUSE);
	chunk(im, M_FREE, 0x40 | CP_GLIBC_PREV_INUSE);
	put64(im, M_B, 0x40); /* prev_size of a free previous chunk */
	chunk(im, M_B, 0x30);
	chunk(im, M_TOP, (M_BRK - M_TOP) | CP_GLIBC_PREV_INUSE);
	return im;
}

struct want {
	__u64 addr;
	enum cp_chunk_verdict v;
	__u64 user, usable;
};

static void check_table(struct cp_glibc_chunks *c, struct image *im, __u64 start, __u64 end,
			enum cp_chunk_map map, const struct want *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct cp_chunk ch;
		enum cp_chunk_verdict v = cp_glibc_chunks__find(c, PID, start, end, map, t[i].addr,
								NOW, read_image, im, &ch);

		if (v != t[i].v)
			fail_msg("0x%llx: %s, want %s", (unsigned long long)t[i].addr,
				 cp_chunk_verdict_name(v), cp_chunk_verdict_name(t[i].v));
		if (v == CP_CHUNK_IN_USE) {
			assert_int_equal(ch.user, t[i].user);
			assert_int_equal(ch.usable, t[i].usable);
			assert_int_equal(ch.chunk, t[i].user - 16);
		}
	}
}

static void test_main_heap(void **state)
{
	struct image *im = main_heap();
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
	struct cp_glibc_chunks_stats st;
	const struct want t[] = {
		{ M_TCACHE + 16, CP_CHUNK_IN_USE, M_TCACHE + 16, 0x288 },
		{ M_A + 16, CP_CHUNK_IN_USE, M_A + 16, 0x68 },
		{ M_A + 16 + 99, CP_CHUNK_IN_USE, M_A + 16, 0x68 },
		/* an object owns the next chunk's prev_size: 8 bytes past its chunk */
		{ M_FREE + 7, CP_CHUNK_IN_USE, M_A + 16, 0x68 },
		{ M_FREE + 8, CP_CHUNK_META, 0, 0 },
		{ M_FREE + 16, CP_CHUNK_FREE, 0, 0 },
		{ M_B + 7, CP_CHUNK_FREE, 0, 0 }, /* the free chunk's last bytes: no one's */
		{ M_B + 16, CP_CHUNK_IN_USE, M_B + 16, 0x28 },
		{ M_TOP + 16, CP_CHUNK_FREE, 0, 0 },
		{ M_BRK + 0x20, CP_CHUNK_FREE, 0, 0 }, /* past the break */
		{ BRK_BASE + 4, CP_CHUNK_META, 0, 0 },
		{ BRK_BASE + 12, CP_CHUNK_META, 0, 0 },
		/* and again, from the checkpoints and the frontier */
		{ M_B + 40, CP_CHUNK_IN_USE, M_B + 16, 0x28 },
		{ M_A + 20, CP_CHUNK_IN_USE, M_A + 16, 0x68 },
	};

	(void)state;
	assert_non_null(c);
	check_table(c, im, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK, t, sizeof(t) / sizeof(t[0]));
	cp_glibc_chunks__stats(c, &st);
	assert_int_equal(st.lookups, sizeof(t) / sizeof(t[0]));
	assert_int_equal(st.found, 7);
	assert_int_equal(st.gave_up, 0);
	assert_int_equal(st.heaps, 1);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* The break at the mapping's very end: the top chunk has no next header to read. */
static void test_top_at_mapping_end(void **state)
{
	struct image *im = main_heap();
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
	const struct want t[] = {
		{ M_TOP + 100, CP_CHUNK_FREE, 0, 0 },
		{ M_B + 16, CP_CHUNK_IN_USE, M_B + 16, 0x28 },
	};

	(void)state;
	chunk(im, M_TOP, (BRK_BASE + M_LEN - M_TOP) | CP_GLIBC_PREV_INUSE);
	check_table(c, im, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK, t, 2);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* Sizes and flags that are no chunk of the main heap: the walk gives up, and retries later. */
static void test_odd_main_heap(void **state)
{
	static const struct {
		const char *what;
		__u64 size_field;
	} odd[] = {
		{ "not a multiple of 16", 0x78 | CP_GLIBC_PREV_INUSE },
		{ "below the minimum", 0x10 | CP_GLIBC_PREV_INUSE },
		{ "zero", 0 },
		{ "past the mapping's end", (M_LEN + 0x1000) | CP_GLIBC_PREV_INUSE },
		{ "NON_MAIN_ARENA in the main heap", 0x70 | CP_GLIBC_NON_MAIN_ARENA | 1 },
		{ "IS_MMAPPED in a heap", 0x70 | CP_GLIBC_IS_MMAPPED | 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		struct image *im = main_heap();
		struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
		enum cp_chunk_verdict v;
		struct cp_chunk ch;

		chunk(im, M_A, odd[i].size_field);
		v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK,
					  M_B + 16, NOW, read_image, im, &ch);
		/* past the end of the mapping: the heap grew since its maps were read */
		if (v != (i == 3 ? CP_CHUNK_LIMIT : CP_CHUNK_ODD))
			fail_msg("%s: %s", odd[i].what, cp_chunk_verdict_name(v));
		if (i == 3) {
			cp_glibc_chunks__free(c);
			image_free(im);
			continue;
		}
		/* given up on: not read again for a while, then walked again */
		im->reads = 0;
		v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK,
					  M_B + 16, NOW + 1000, read_image, im, &ch);
		assert_int_equal(v, CP_CHUNK_ODD);
		assert_int_equal(im->reads, 0);
		chunk(im, M_A, 0x70 | CP_GLIBC_PREV_INUSE);
		v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK,
					  M_B + 16, NOW + CP_CHUNK_RETRY_NS, read_image, im, &ch);
		assert_int_equal(v, CP_CHUNK_IN_USE);
		assert_int_equal(ch.user, M_B + 16);
		cp_glibc_chunks__free(c);
		image_free(im);
	}
}

/* A heap of @n 0x40-byte chunks from the start, the top after them. */
static struct image *many_chunks(size_t n, size_t len)
{
	struct image *im = image_new(BRK_BASE, len);
	__u64 pos = BRK_BASE;

	for (size_t i = 0; i < n; i++, pos += 0x40)
		chunk(im, pos, 0x40 | CP_GLIBC_PREV_INUSE);
	chunk(im, pos, (BRK_BASE + len - pos) | CP_GLIBC_PREV_INUSE);
	return im;
}

/* Each lookup is capped; the frontier it reached carries the next one further. */
static void test_caps_and_frontier(void **state)
{
	struct cp_chunk_limits lim = { .max_steps = 1000, .batch_bytes = 4096 };
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(&lim);
	struct image *im = many_chunks(5000, 0x60000);
	__u64 far = BRK_BASE + 4321 * 0x40 + 20;
	enum cp_chunk_verdict v;
	struct cp_chunk ch;
	int tries = 0;

	(void)state;
	do {
		v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x60000, CP_CHUNK_MAP_BRK,
					  far, NOW, read_image, im, &ch);
		tries++;
	} while (v == CP_CHUNK_LIMIT && tries < 10);
	assert_int_equal(v, CP_CHUNK_IN_USE);
	assert_int_equal(tries, 5);
	assert_int_equal(ch.user, BRK_BASE + 4321 * 0x40 + 16);
	assert_int_equal(ch.usable, 0x38);
	cp_glibc_chunks__free(c);

	/* the byte cap */
	lim = (struct cp_chunk_limits){ .max_read_bytes = 8192, .batch_bytes = 4096 };
	c = cp_glibc_chunks__new(&lim);
	im->bytes = 0;
	v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x60000, CP_CHUNK_MAP_BRK, far, NOW,
				  read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_LIMIT);
	assert_true(im->bytes <= 8192);
	cp_glibc_chunks__free(c);

	/* the bytes of a second, over all lookups: none more until the next second */
	lim = (struct cp_chunk_limits){ .bytes_per_s = 3 * 4096, .batch_bytes = 4096 };
	c = cp_glibc_chunks__new(&lim);
	im->bytes = 0;
	for (tries = 0; tries < 4; tries++) {
		v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x60000, CP_CHUNK_MAP_BRK,
					  far, NOW, read_image, im, &ch);
		assert_int_equal(v, CP_CHUNK_LIMIT);
	}
	assert_int_equal(im->bytes, 3 * 4096);
	im->reads = 0;
	v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x60000, CP_CHUNK_MAP_BRK, far,
				  NOW + CP_CHUNK_RETRY_NS, read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_LIMIT);
	assert_true(im->reads > 0);
	{
		struct cp_glibc_chunks_stats st;

		cp_glibc_chunks__stats(c, &st);
		assert_int_equal(st.throttled, 3);
	}
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* A later lookup starts at the checkpoint before its address: a few headers, not the heap. */
static void test_checkpoints(void **state)
{
	struct cp_chunk_limits lim = { .batch_bytes = 1024, .mark_every = 16, .max_marks = 8 };
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(&lim);
	struct image *im = many_chunks(4000, 0x40000);
	struct cp_glibc_chunks_stats st;
	enum cp_chunk_verdict v;
	struct cp_chunk ch;
	__u64 before;

	(void)state;
	v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x40000, CP_CHUNK_MAP_BRK,
				  BRK_BASE + 3999 * 0x40 + 16, NOW, read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_IN_USE);
	/* 8 checkpoints at most: the spacing doubled until 4000 chunks fit */
	for (__u64 i = 0; i < 4000; i += 397) {
		before = im->bytes;
		v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x40000, CP_CHUNK_MAP_BRK,
					  BRK_BASE + i * 0x40 + 30, NOW, read_image, im, &ch);
		assert_int_equal(v, CP_CHUNK_IN_USE);
		assert_int_equal(ch.user, BRK_BASE + i * 0x40 + 16);
		/* at most a spacing of 16 << 9 chunks... in practice 1024 (4000 / 8 rounded up) */
		assert_true(im->bytes - before <= 1024 * 0x40 + 2048);
	}
	cp_glibc_chunks__stats(c, &st);
	assert_true(cp_glibc_chunks__mem_bytes(c) < 64 * 1024 + 8 * 64 * 8 + 128 * 256);
	assert_int_equal(st.restarts, 0);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* Chunks merged under a checkpoint (the target freed them): the walk starts over. */
static void test_restart_when_heap_changed(void **state)
{
	struct cp_chunk_limits lim = { .batch_bytes = 256, .mark_every = 4 };
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(&lim);
	struct image *im = many_chunks(64, 0x2000);
	struct cp_glibc_chunks_stats st;
	enum cp_chunk_verdict v;
	struct cp_chunk ch;

	(void)state;
	v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x2000, CP_CHUNK_MAP_BRK,
				  BRK_BASE + 63 * 0x40 + 16, NOW, read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_IN_USE);
	/* chunks 1..20 become one in-use 20-chunk object; the old headers inside are overwritten */
	chunk(im, BRK_BASE + 0x40, (20 * 0x40) | CP_GLIBC_PREV_INUSE);
	for (int i = 2; i <= 20; i++)
		chunk(im, BRK_BASE + (__u64)i * 0x40, 0x1234567);
	v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + 0x2000, CP_CHUNK_MAP_BRK,
				  BRK_BASE + 17 * 0x40 + 24, NOW, read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_IN_USE);
	assert_int_equal(ch.user, BRK_BASE + 0x40 + 16);
	assert_int_equal(ch.usable, 20 * 0x40 - 8);
	cp_glibc_chunks__stats(c, &st);
	assert_int_equal(st.restarts, 1);
	assert_int_equal(st.gave_up, 0);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/*
 * A non-main arena's first heap (glibc 2.36): heap_info (48 bytes), the
 * arena's malloc_state, the first chunk at 0x8d0 (the thread's tcache),
 * objects with NON_MAIN_ARENA, the top chunk up to heap_info.size.
 */
#define A_SIZE	 0x21000ull
#define A_FIRST	 (ARENA + 0x8d0)
#define A_OBJ	 (A_FIRST + 0x290)
#define A_FREE	 (A_OBJ + 0x70)
#define A_OBJ2	 (A_FREE + 0x50)
#define A_TOP	 (A_OBJ2 + 0x1390)
#define A_MAPLEN 0x21000ull

static struct image *arena_heap(void)
{
	struct image *im = image_new(ARENA, A_MAPLEN);
	const __u64 f = CP_GLIBC_NON_MAIN_ARENA | CP_GLIBC_PREV_INUSE;

	put64(im, ARENA, ARENA + 48); /* ar_ptr: the arena follows heap_info */
	put64(im, ARENA + 8, 0);      /* prev */
	put64(im, ARENA + 16, A_SIZE);
	put64(im, ARENA + 24, A_SIZE); /* mprotect_size */
	put64(im, ARENA + 32, 4096);   /* pagesize */
	chunk(im, A_FIRST, 0x290 | f);
	chunk(im, A_OBJ, 0x70 | f);
	chunk(im, A_FREE, 0x50 | CP_GLIBC_PREV_INUSE); /* free: NON_MAIN_ARENA dropped */
	chunk(im, A_OBJ2, 0x1390 | CP_GLIBC_NON_MAIN_ARENA);
	chunk(im, A_TOP, (ARENA + A_SIZE - A_TOP) | CP_GLIBC_PREV_INUSE);
	return im;
}

static void test_arena_heap(void **state)
{
	struct image *im = arena_heap();
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
	const struct want t[] = {
		{ ARENA + 8, CP_CHUNK_META, 0, 0 },	   /* heap_info */
		{ ARENA + 0x100, CP_CHUNK_META, 0, 0 }, /* the arena's malloc_state */
		{ A_FIRST + 16, CP_CHUNK_IN_USE, A_FIRST + 16, 0x288 },
		{ A_OBJ + 16 + 50, CP_CHUNK_IN_USE, A_OBJ + 16, 0x68 },
		{ A_FREE + 30, CP_CHUNK_FREE, 0, 0 },
		{ A_OBJ2 + 5000, CP_CHUNK_IN_USE, A_OBJ2 + 16, 0x1388 },
		{ A_TOP + 64, CP_CHUNK_FREE, 0, 0 },
	};

	(void)state;
	check_table(c, im, ARENA, ARENA + A_MAPLEN, CP_CHUNK_MAP_ANON, t, sizeof(t) / sizeof(t[0]));
	/* glibc before 2.35: a 32-byte heap_info, so the arena and its first chunk move up */
	memset(im->mem, 0, A_MAPLEN);
	put64(im, ARENA, ARENA + 32);
	put64(im, ARENA + 16, A_SIZE);
	put64(im, ARENA + 24, A_SIZE);
	chunk(im, ARENA + 0x8c0, 0x290 | CP_GLIBC_NON_MAIN_ARENA | 1);
	chunk(im, ARENA + 0xb50, (ARENA + A_SIZE - (ARENA + 0xb50)) | 1);
	cp_glibc_chunks__forget(c, PID);
	const struct want old[] = {
		{ ARENA + 0x8c0 + 40, CP_CHUNK_IN_USE, ARENA + 0x8d0, 0x288 },
		{ ARENA + 0xb50 + 40, CP_CHUNK_FREE, 0, 0 },
	};
	check_table(c, im, ARENA, ARENA + A_MAPLEN, CP_CHUNK_MAP_ANON, old, 2);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* An arena's later heap: chunks right after heap_info, a fencepost where the heap ended. */
static void test_arena_later_heap(void **state)
{
	const __u64 base = ARENA + CP_GLIBC_HEAP_MAX, f = CP_GLIBC_NON_MAIN_ARENA | 1;
	struct image *im = image_new(base, 0x10000);
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
	const struct want t[] = {
		{ base + 48 + 16, CP_CHUNK_IN_USE, base + 64, 0x1000 - 8 },
		{ base + 0x1030 + 16 + 0x100, CP_CHUNK_IN_USE, base + 0x1030 + 16, 0x200 - 8 },
		{ base + 0x1230 + 8, CP_CHUNK_META, 0, 0 }, /* the fencepost */
		{ base + 0x8000, CP_CHUNK_FREE, 0, 0 },     /* past heap_info.size */
	};

	(void)state;
	put64(im, base, ARENA + 48); /* the arena lives in its first heap */
	put64(im, base + 8, ARENA);
	put64(im, base + 16, 0x2000);
	put64(im, base + 24, 0x10000);
	put64(im, base + 32, 4096);
	chunk(im, base + 48, 0x1000 | f);
	chunk(im, base + 0x1030, 0x200 | f);
	chunk(im, base + 0x1230, 16 | 1); /* fencepost */
	chunk(im, base + 0x1240, 0 | 1);
	check_table(c, im, base, base + 0x10000, CP_CHUNK_MAP_ANON, t, sizeof(t) / sizeof(t[0]));
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* Large chunks, each its own mapping (here two merged into one), and a mapping that is none. */
static void test_mmapped_chunks(void **state)
{
	const __u64 base = 0x7f1c5b800000ull;
	struct image *im = image_new(base, 0x80000);
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
	const struct want t[] = {
		{ base + 16, CP_CHUNK_IN_USE, base + 16, 0x4a000 - 16 },
		{ base + 0x49fff, CP_CHUNK_IN_USE, base + 16, 0x4a000 - 16 },
		{ base + 0x4a008, CP_CHUNK_META, 0, 0 },
		{ base + 0x4a010 + 1000, CP_CHUNK_IN_USE, base + 0x4a010, 0x20000 - 16 },
		{ base + 0x70000, CP_CHUNK_FREE, 0, 0 }, /* after the last chunk: someone else's memory */
	};
	enum cp_chunk_verdict v;
	struct cp_chunk ch;

	(void)state;
	chunk(im, base, 0x4a000 | CP_GLIBC_IS_MMAPPED);
	chunk(im, base + 0x4a000, 0x20000 | CP_GLIBC_IS_MMAPPED);
	check_table(c, im, base, base + 0x80000, CP_CHUNK_MAP_ANON, t, sizeof(t) / sizeof(t[0]));
	/* the program's own mmap: no chunk header at its start */
	memset(im->mem, 0xab, 64);
	cp_glibc_chunks__forget(c, PID);
	v = cp_glibc_chunks__find(c, PID, base, base + 0x80000, CP_CHUNK_MAP_ANON, base + 100, NOW,
				  read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_ODD);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* What cannot be read, and heaps beyond the cap. */
static void test_unreadable_and_eviction(void **state)
{
	struct cp_chunk_limits lim = { .max_heaps = 2 };
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(&lim);
	struct image *im = main_heap();
	struct cp_glibc_chunks_stats st;
	enum cp_chunk_verdict v;
	struct cp_chunk ch;

	(void)state;
	/* the image sits elsewhere: every read fails */
	v = cp_glibc_chunks__find(c, PID, 0x1000000, 0x1000000 + M_LEN, CP_CHUNK_MAP_BRK,
				  0x1000100, NOW, read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_UNREADABLE);
	for (pid_t p = 1; p <= 3; p++) {
		v = cp_glibc_chunks__find(c, p, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK,
					  M_A + 16, NOW, read_image, im, &ch);
		assert_int_equal(v, CP_CHUNK_IN_USE);
	}
	cp_glibc_chunks__stats(c, &st);
	assert_int_equal(st.heaps, 2);
	assert_int_equal(st.evicted, 2);
	cp_glibc_chunks__forget(c, 3);
	cp_glibc_chunks__stats(c, &st);
	assert_int_equal(st.heaps, 1);
	/* an address outside the mapping given */
	v = cp_glibc_chunks__find(c, PID, BRK_BASE, BRK_BASE + M_LEN, CP_CHUNK_MAP_BRK,
				  BRK_BASE - 8, NOW, read_image, im, &ch);
	assert_int_equal(v, CP_CHUNK_ODD);
	cp_glibc_chunks__free(c);
	image_free(im);
}

/* --- this process's own heaps, as its glibc laid them out ---------------------- */

static ssize_t read_self(void *ctx, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
}

/* The mapping of this process holding @p: its bounds and whether it is [heap]. */
static bool own_mapping(const void *p, __u64 *start, __u64 *end, bool *brk)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) != 2)
			continue;
		if ((uintptr_t)p >= s && (uintptr_t)p < e) {
			*start = s;
			*end = e;
			*brk = strstr(line, "[heap]") != NULL;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void expect_own(struct cp_glibc_chunks *c, void *p, enum cp_chunk_heap heap)
{
	__u64 start, end, addr = (__u64)(uintptr_t)p;
	enum cp_chunk_verdict v;
	struct cp_chunk ch;
	bool brk;

	assert_true(own_mapping(p, &start, &end, &brk));
	v = cp_glibc_chunks__find(c, getpid(), start, end,
				  brk ? CP_CHUNK_MAP_BRK : CP_CHUNK_MAP_ANON, addr + 3, NOW,
				  read_self, NULL, &ch);
	if (v != CP_CHUNK_IN_USE)
		fail_msg("own %p: %s", p, cp_chunk_verdict_name(v));
	assert_int_equal(ch.user, addr);
	assert_int_equal(ch.usable, malloc_usable_size(p));
	assert_int_equal(ch.heap, heap);
}

static void *thread_alloc(void *arg)
{
	*(void **)arg = malloc(300);
	return NULL;
}

static void test_own_heaps(void **state)
{
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(NULL);
	void *small, *mid, *big, *theirs = NULL;
	pthread_t t;

	(void)state;
	/* the earlier tests freed large images: the dynamic threshold rose above 300000 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	small = malloc(100);
	mid = malloc(5000);
	big = malloc(300000);
	assert_non_null(small);
	assert_non_null(mid);
	assert_non_null(big);
	expect_own(c, small, CP_CHUNK_HEAP_MAIN);
	expect_own(c, mid, CP_CHUNK_HEAP_MAIN);
	expect_own(c, big, CP_CHUNK_HEAP_MMAPPED);
	/* a thread's first malloc makes a non-main arena (unless MALLOC_ARENA_MAX=1) */
	assert_int_equal(pthread_create(&t, NULL, thread_alloc, &theirs), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_non_null(theirs);
	{
		__u64 start, end;
		bool brk;

		assert_true(own_mapping(theirs, &start, &end, &brk));
		expect_own(c, theirs, brk ? CP_CHUNK_HEAP_MAIN : CP_CHUNK_HEAP_ARENA);
	}
	free(theirs);
	free(big);
	free(mid);
	free(small);
	cp_glibc_chunks__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_main_heap),
		cmocka_unit_test(test_top_at_mapping_end),
		cmocka_unit_test(test_odd_main_heap),
		cmocka_unit_test(test_caps_and_frontier),
		cmocka_unit_test(test_checkpoints),
		cmocka_unit_test(test_restart_when_heap_changed),
		cmocka_unit_test(test_arena_heap),
		cmocka_unit_test(test_arena_later_heap),
		cmocka_unit_test(test_mmapped_chunks),
		cmocka_unit_test(test_unreadable_and_eviction),
		cmocka_unit_test(test_own_heaps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
