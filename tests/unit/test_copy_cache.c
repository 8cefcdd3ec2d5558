// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kept copies' bookkeeping (machine/copy_cache.h): a key finds its copy
 * and nothing else, a changed file (any of device, inode, size, mtime,
 * ctime) is another key, the least recently used copy goes first, by
 * entries and by bytes, a copy larger than the cache is not kept, and every
 * hit, miss and eviction is counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "machine/copy_cache.h"

static struct cp_copy_key key(__u64 ino)
{
	return (struct cp_copy_key){
		.dev = 0x801, .ino = ino, .size = 4096, .mtime_ns = 7, .ctime_ns = 9,
	};
}

/* Keeps @handle for key(@ino) at @bytes; returns how many were evicted. */
static size_t keep(struct cp_copy_cache *c, __u64 ino, int handle, __u64 bytes, int *out)
{
	struct cp_copy_key k = key(ino);
	size_t n = 0;
	int slot = cp_copy_cache_make_room(c, bytes, out, &n);

	assert_true(slot >= 0);
	cp_copy_cache_put(c, slot, &k, handle, bytes);
	return n;
}

static void test_find(void **state)
{
	struct cp_copy_cache c;
	struct cp_copy_key k = key(42), other;
	int out[CP_COPY_CACHE_ENTRIES];

	(void)state;
	cp_copy_cache_init(&c, 4, 1 << 20);
	assert_int_equal(cp_copy_cache_find(&c, &k), -1);
	assert_int_equal(keep(&c, 42, 100, 4096, out), 0);
	assert_int_equal(cp_copy_cache_find(&c, &k), 100);
	/* each part of the key tells another content */
	other = k, other.dev++;
	assert_int_equal(cp_copy_cache_find(&c, &other), -1);
	other = k, other.size++;
	assert_int_equal(cp_copy_cache_find(&c, &other), -1);
	other = k, other.mtime_ns++;
	assert_int_equal(cp_copy_cache_find(&c, &other), -1);
	other = k, other.ctime_ns++; /* written, its mtime set back */
	assert_int_equal(cp_copy_cache_find(&c, &other), -1);
	other = k, other.ino = 0; /* no key: never found */
	assert_int_equal(cp_copy_cache_find(&c, &other), -1);
	assert_int_equal(c.stats.hits, 1);
	assert_int_equal(c.stats.misses, 6);
	assert_int_equal(c.stats.held, 1);
	assert_int_equal(c.stats.held_bytes, 4096);
	/* the whole copy serves a reader that needs no code */
	other = k, other.no_code = 1;
	assert_int_equal(cp_copy_cache_find(&c, &other), 100);
	/* a probe (no copy made on a miss) counts its hit, never its miss */
	assert_int_equal(cp_copy_cache_probe(&c, &k), 100);
	other = k, other.ino++;
	assert_int_equal(cp_copy_cache_probe(&c, &other), -1);
	assert_int_equal(c.stats.hits, 3);
	assert_int_equal(c.stats.misses, 6);
}

/* A copy without the code serves only readers that need none: a whole one is copied apart. */
static void test_no_code_copies(void **state)
{
	struct cp_copy_cache c;
	struct cp_copy_key part = key(7), whole = key(7);
	int out[CP_COPY_CACHE_ENTRIES];

	(void)state;
	part.no_code = 1;
	cp_copy_cache_init(&c, 4, 1 << 20);
	assert_int_equal(cp_copy_cache_make_room(&c, 4096, out, &(size_t){0}), 0);
	cp_copy_cache_put(&c, 0, &part, 200, 4096);
	assert_int_equal(cp_copy_cache_find(&c, &part), 200);
	assert_int_equal(cp_copy_cache_find(&c, &whole), -1);
	assert_int_equal(c.stats.hits, 1);
	assert_int_equal(c.stats.misses, 1);
}

static void test_evicts_least_recently_used(void **state)
{
	struct cp_copy_cache c;
	struct cp_copy_key k1 = key(1), k2 = key(2), k3 = key(3);
	int out[CP_COPY_CACHE_ENTRIES];

	(void)state;
	/* by entries: 3 at most */
	cp_copy_cache_init(&c, 3, 1 << 20);
	keep(&c, 1, 11, 10, out);
	keep(&c, 2, 12, 10, out);
	keep(&c, 3, 13, 10, out);
	assert_int_equal(cp_copy_cache_find(&c, &k1), 11); /* 2 is now the oldest */
	assert_int_equal(keep(&c, 4, 14, 10, out), 1);
	assert_int_equal(out[0], 12);
	assert_int_equal(cp_copy_cache_find(&c, &k2), -1);
	assert_int_equal(cp_copy_cache_find(&c, &k3), 13);
	assert_int_equal(c.stats.evictions, 1);
	assert_int_equal(c.stats.held, 3);

	/* by bytes: 100 at most; 60 more take out the two oldest */
	cp_copy_cache_init(&c, 8, 100);
	keep(&c, 1, 11, 30, out);
	keep(&c, 2, 12, 30, out);
	keep(&c, 3, 13, 30, out);
	assert_int_equal(keep(&c, 4, 14, 60, out), 2);
	assert_int_equal(out[0], 11);
	assert_int_equal(out[1], 12);
	assert_int_equal(c.stats.held_bytes, 90);
}

static void test_too_big_and_drain(void **state)
{
	struct cp_copy_cache c;
	int out[CP_COPY_CACHE_ENTRIES];
	size_t n = 9;

	(void)state;
	cp_copy_cache_init(&c, 8, 100);
	keep(&c, 1, 11, 50, out);
	/* larger than the whole cache: not kept, nothing taken out for it */
	assert_int_equal(cp_copy_cache_make_room(&c, 101, out, &n), -1);
	assert_int_equal(n, 0);
	assert_int_equal(c.stats.held, 1);
	keep(&c, 2, 12, 50, out);
	assert_int_equal(cp_copy_cache_drain(&c, out), 2);
	assert_int_equal(c.stats.held, 0);
	assert_int_equal(c.stats.held_bytes, 0);
	assert_int_equal(c.stats.evictions, 2);
	/* no entries at all: nothing is kept */
	cp_copy_cache_init(&c, 0, 100);
	assert_int_equal(cp_copy_cache_make_room(&c, 1, out, &n), -1);
	/* more entries asked than there are: clamped */
	cp_copy_cache_init(&c, 1000, 1 << 20);
	assert_int_equal(c.max_entries, CP_COPY_CACHE_ENTRIES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find), cmocka_unit_test(test_no_code_copies),
		cmocka_unit_test(test_evicts_least_recently_used),
		cmocka_unit_test(test_too_big_and_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
