// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cp_map_drain() (live/drain.h) on a real BPF hash map, in batches and
 * entry by entry: every entry is handed over once with its value and
 * deleted, no more than the cap is taken, and what is left stays for the
 * next drain. Root (bpf()).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <cmocka.h>

#include "live/drain.h"

#define NR_KEYS 1000

/* A key as wide as the per-instruction counts' (tgid, ip), its value a function of it. */
struct key {
	__u32 tgid;
	__u32 pad;
	__u64 ip;
};

struct val {
	__u64 a, b;
};

struct taken {
	int times[NR_KEYS];	/* how often each key was handed over */
	int wrong;		/* values that were not their key's */
	size_t n;
};

static void take(void *ctx, const void *key, const void *val)
{
	struct taken *t = ctx;
	struct key k;
	struct val v;

	memcpy(&k, key, sizeof(k));
	memcpy(&v, val, sizeof(v));
	if (k.ip >= NR_KEYS || v.a != k.ip * 3 || v.b != k.tgid) {
		t->wrong++;
		return;
	}
	t->times[k.ip]++;
	t->n++;
}

static int filled_map(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "drain_test", sizeof(struct key),
				sizeof(struct val), 4096, NULL);

	assert_true(fd >= 0);
	for (__u64 i = 0; i < NR_KEYS; i++) {
		struct key k = { .tgid = 7 + (__u32)(i % 5), .ip = i };
		struct val v = { .a = i * 3, .b = k.tgid };

		assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
	}
	return fd;
}

static size_t entries(int fd)
{
	struct key k, next;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, n ? &k : NULL, &next)) {
		k = next;
		n++;
	}
	return n;
}

/* Capped drains, then one to the end: each key once, right values, the map empty. */
static void drain_in_parts(bool one_by_one)
{
	struct taken *t;
	bool no_combined = one_by_one;
	int fd;

	if (geteuid() != 0)
		skip();
	t = calloc(1, sizeof(*t));
	assert_non_null(t);
	fd = filled_map();
	/* a cap that is no multiple of a batch, then one below a batch */
	assert_int_equal(cp_map_drain(fd, sizeof(struct key), sizeof(struct val), 300,
				      &no_combined, take, t), 300);
	assert_int_equal(entries(fd), NR_KEYS - 300);
	assert_int_equal(cp_map_drain(fd, sizeof(struct key), sizeof(struct val), 7, &no_combined,
				      take, t), 7);
	assert_int_equal(entries(fd), NR_KEYS - 307);
	assert_int_equal(cp_map_drain(fd, sizeof(struct key), sizeof(struct val), NR_KEYS,
				      &no_combined, take, t), NR_KEYS - 307);
	assert_int_equal(entries(fd), 0);
	assert_int_equal(t->wrong, 0);
	assert_int_equal(t->n, NR_KEYS);
	for (int i = 0; i < NR_KEYS; i++)
		assert_int_equal(t->times[i], 1);
	/* empty: nothing, no error */
	assert_int_equal(cp_map_drain(fd, sizeof(struct key), sizeof(struct val), 10, &no_combined,
				      take, t), 0);
	/* this kernel has the combined calls: the flag is not set by the way */
	assert_int_equal(no_combined, one_by_one);
	close(fd);
	free(t);
}

static void test_batches(void **state)
{
	(void)state;
	drain_in_parts(false);
}

static void test_one_by_one(void **state)
{
	(void)state;
	drain_in_parts(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_one_by_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
