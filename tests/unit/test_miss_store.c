// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The miss store: set and line counts, byte masks, sharing verdicts, the cap. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "profile/miss_store.h"

/* 32 KiB, 8-way, 64-byte lines: 64 sets, so addresses 4 KiB apart share a set */
static const struct cp_cache_level l1 = {
	.level = 1, .size_bytes = 32768, .ways = 8, .sets = 64, .line_bytes = 64, .valid = true,
};

static void add(struct cp_miss_store *s, __u32 tid, __u64 addr, __u32 size, bool store)
{
	struct cp_mem_access a = { .tgid = 100, .tid = tid, .addr = addr, .size = size, .store = store };

	assert_int_equal(cp_miss_store__add(s, &a), 0);
}

static enum cp_sharing sharing_at(struct cp_miss_store *s, __u64 addr)
{
	const struct cp_line *l = cp_miss_store__find(s, 100, addr);

	assert_non_null(l);
	return cp_line_sharing(l);
}

static void test_sharing_verdicts(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0);

	(void)state;
	assert_non_null(s);
	/* two threads writing adjacent 8-byte counters of one line: false sharing */
	add(s, 1, 0x10000, 8, true);
	add(s, 2, 0x10008, 8, true);
	add(s, 1, 0x10000, 8, true);
	assert_int_equal(sharing_at(s, 0x10000), CP_SHARING_FALSE);
	/* one global counter, incremented by both: true sharing */
	add(s, 1, 0x20010, 8, false);
	add(s, 1, 0x20010, 8, true);
	add(s, 2, 0x20010, 8, true);
	assert_int_equal(sharing_at(s, 0x20010), CP_SHARING_TRUE);
	/* a writer and a reader of the same word: true sharing */
	add(s, 1, 0x30000, 4, true);
	add(s, 2, 0x30002, 1, false);
	assert_int_equal(sharing_at(s, 0x30000), CP_SHARING_TRUE);
	/* a writer and a reader of different words: false sharing */
	add(s, 1, 0x40000, 4, true);
	add(s, 2, 0x40004, 4, false);
	assert_int_equal(sharing_at(s, 0x40000), CP_SHARING_FALSE);
	/* readers only, or one thread: nothing to share */
	add(s, 1, 0x50000, 8, false);
	add(s, 2, 0x50000, 8, false);
	assert_int_equal(sharing_at(s, 0x50000), CP_SHARING_NONE);
	add(s, 3, 0x60000, 8, true);
	add(s, 3, 0x60008, 8, true);
	assert_int_equal(sharing_at(s, 0x60000), CP_SHARING_NONE);
	/* unknown size counts as one byte: adjacent bytes stay disjoint */
	add(s, 1, 0x70000, 0, true);
	add(s, 2, 0x70001, 0, true);
	assert_int_equal(sharing_at(s, 0x70000), CP_SHARING_FALSE);
	cp_miss_store__free(s);
}

static void add_load(struct cp_miss_store *s, __u32 tid, __u64 addr, bool hitm)
{
	struct cp_mem_access a = { .tgid = 100, .tid = tid, .addr = addr, .size = 8, .hitm = hitm };

	assert_int_equal(cp_miss_store__add(s, &a), 0);
}

/*
 * No store sampled (stores are sampled 1 in 50000, and a miss-ratio window
 * may drop them), but loads that hit the line modified in another core:
 * the line is written elsewhere, so several HITM readers share it.
 */
static void test_sharing_from_hitm_loads(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0);
	struct cp_miss_store *m = cp_miss_store__new(&l1, 0);

	(void)state;
	assert_non_null(s);
	assert_non_null(m);
	/* each thread reads its own field, both HITM: false sharing */
	add_load(s, 1, 0x10000, true);
	add_load(s, 2, 0x10008, true);
	assert_int_equal(sharing_at(s, 0x10000), CP_SHARING_FALSE);
	/* both read the same counter with HITM: true sharing */
	add_load(s, 1, 0x20010, true);
	add_load(s, 2, 0x20010, true);
	assert_int_equal(sharing_at(s, 0x20010), CP_SHARING_TRUE);
	/* only one thread's loads were HITM: the other's may be its own writes' */
	add_load(s, 1, 0x30000, true);
	add_load(s, 2, 0x30008, false);
	assert_int_equal(sharing_at(s, 0x30000), CP_SHARING_NONE);
	/* plain read misses of two threads (capacity): nothing shared */
	add_load(s, 1, 0x40000, false);
	add_load(s, 2, 0x40008, false);
	assert_int_equal(sharing_at(s, 0x40000), CP_SHARING_NONE);
	/* one HITM reader only: nothing to judge */
	add_load(s, 1, 0x50000, true);
	add_load(s, 1, 0x50008, true);
	assert_int_equal(sharing_at(s, 0x50000), CP_SHARING_NONE);
	/* merged stores keep the HITM readers: one in each half */
	add_load(m, 2, 0x30010, true);
	assert_int_equal(cp_miss_store__merge(s, m), 0);
	assert_int_equal(sharing_at(s, 0x30000), CP_SHARING_FALSE);
	cp_miss_store__free(m);
	cp_miss_store__free(s);
}

/* One access of thread @tid at @t_ms milliseconds of sample time. */
static void add_at(struct cp_miss_store *s, __u32 tid, __u64 addr, bool store, __u64 t_ms)
{
	struct cp_mem_access a = { .tgid = 100, .tid = tid, .addr = addr, .size = 8,
				   .store = store, .time_ns = t_ms * 1000000ull };

	assert_int_equal(cp_miss_store__add(s, &a), 0);
}

static const struct cp_line *line_at(struct cp_miss_store *s, __u64 addr)
{
	const struct cp_line *l = cp_miss_store__find(s, 100, addr);

	assert_non_null(l);
	return l;
}

/*
 * Epochs (soft source): threads share a line only within one epoch of
 * CP_SHARE_EPOCH_NS (100 ms). A writer at 0-30 ms and a reader of the same
 * bytes at 250-280 ms never meet: no sharing, though the whole-run masks
 * say true sharing. Interleaved in one epoch they do; a read after another
 * thread's read meets nothing (no write).
 */
static void test_sharing_within_epochs(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0);
	const struct cp_line *l;

	(void)state;
	assert_non_null(s);
	for (__u64 t = 0; t < 4; t++)
		add_at(s, 1, 0x10000, true, t * 10);
	for (__u64 t = 0; t < 4; t++)
		add_at(s, 2, 0x10000, false, 250 + t * 10);
	l = line_at(s, 0x10000);
	assert_int_equal(cp_line_sharing(l), CP_SHARING_TRUE);
	assert_int_equal(l->concurrent_true + l->concurrent_false, 0);
	assert_int_equal(cp_line_sharing_concurrent(l), CP_SHARING_NONE);
	/* adjacent words written in turn within 300-399 ms: false sharing, 7 meetings */
	for (__u64 t = 0; t < 4; t++) {
		add_at(s, 1, 0x20000, true, 300 + t);
		add_at(s, 2, 0x20008, true, 300 + t);
	}
	l = line_at(s, 0x20000);
	assert_int_equal(l->concurrent_false, 7);
	assert_int_equal(l->concurrent_true, 0);
	assert_int_equal(cp_line_sharing_concurrent(l), CP_SHARING_FALSE);
	/* then one reads what the other wrote, in the same epoch: true sharing */
	add_at(s, 2, 0x20000, false, 350);
	assert_int_equal(l->concurrent_true, 1);
	assert_int_equal(cp_line_sharing_concurrent(l), CP_SHARING_TRUE);
	/* readers only meet nothing */
	for (__u64 t = 0; t < 4; t++) {
		add_at(s, 1, 0x30000, false, 400 + t);
		add_at(s, 2, 0x30000, false, 400 + t);
	}
	assert_int_equal(line_at(s, 0x30000)->concurrent_false, 0);
	assert_int_equal(cp_line_sharing_concurrent(line_at(s, 0x30000)), CP_SHARING_NONE);
	cp_miss_store__free(s);
}

static void test_masks_and_counts(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0);
	const struct cp_line *l;

	(void)state;
	/* an 8-byte store at offset 60 is clipped to bytes 60..63 of its line */
	add(s, 7, 0x1003c, 8, true);
	l = cp_miss_store__find(s, 100, 0x10000);
	assert_non_null(l);
	assert_int_equal(l->thr[0].write_mask, 0xf000000000000000ull);
	assert_int_equal(l->thr[0].read_mask, 0);
	assert_int_equal(l->line, 0x10000 / 64);
	assert_int_equal(l->stores, 1);
	/* another process's same address is another line */
	assert_null(cp_miss_store__find(s, 101, 0x10000));
	/* 0x10000, 0x11000, 0x12000 are 4 KiB apart: all on set 0; 0x10040 on set 1 */
	add(s, 7, 0x11000, 8, false);
	add(s, 7, 0x12000, 8, false);
	add(s, 7, 0x10040, 8, false);
	assert_int_equal(cp_miss_store__set_misses(s, 0), 3);
	assert_int_equal(cp_miss_store__set_misses(s, 1), 1);
	assert_int_equal(cp_miss_store__set_misses(s, 64), 0);
	assert_int_equal(cp_miss_store__total(s), 4);
	cp_miss_store__free(s);
}

static void test_threads_beyond_cap(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0);
	const struct cp_line *l;

	(void)state;
	for (__u32 t = 1; t <= CP_LINE_MAX_THREADS + 2; t++)
		add(s, t, 0x8000 + t, 1, true);
	l = cp_miss_store__find(s, 100, 0x8000);
	assert_int_equal(l->nr_threads, CP_LINE_MAX_THREADS);
	assert_int_equal(l->more_threads, 2);
	assert_int_equal(l->misses, CP_LINE_MAX_THREADS + 2);
	cp_miss_store__free(s);
}

static void test_top_and_eviction(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 4);
	struct cp_miss_store_stats st;
	const struct cp_line *top[8];

	(void)state;
	/* four lines with 4, 3, 1 and 2 misses */
	for (int i = 0; i < 4; i++)
		add(s, 1, 0x1000, 8, false);
	for (int i = 0; i < 3; i++)
		add(s, 1, 0x2000, 8, false);
	add(s, 1, 0x3000, 8, false);
	add(s, 1, 0x4000, 8, false);
	add(s, 1, 0x4000, 8, false);
	assert_int_equal(cp_miss_store__top(s, top, 8), 4);
	assert_int_equal(top[0]->line, 0x1000 / 64);
	assert_int_equal(top[1]->line, 0x2000 / 64);
	assert_int_equal(top[2]->line, 0x4000 / 64);
	assert_int_equal(top[3]->line, 0x3000 / 64);
	/* a fifth line evicts the coldest one, 0x3000 */
	add(s, 1, 0x5000, 8, false);
	cp_miss_store__stats(s, &st);
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.evicted, 1);
	assert_null(cp_miss_store__find(s, 100, 0x3000));
	assert_non_null(cp_miss_store__find(s, 100, 0x1000));
	assert_non_null(cp_miss_store__find(s, 100, 0x2000));
	assert_non_null(cp_miss_store__find(s, 100, 0x4000));
	assert_non_null(cp_miss_store__find(s, 100, 0x5000));
	/* set counts keep every miss, evicted lines included */
	assert_int_equal(cp_miss_store__total(s), 11);
	cp_miss_store__clear(s);
	assert_int_equal(cp_miss_store__top(s, top, 8), 0);
	cp_miss_store__free(s);
}

static void test_many_lines_stay_findable(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 1000);
	struct cp_miss_store_stats st;
	int found = 0;

	(void)state;
	/* churn far past the cap: every kept line must still be found by its address */
	for (__u64 i = 0; i < 5000; i++)
		add(s, 1, 0x100000 + i * 64 * 7, 8, (i & 1) != 0);
	cp_miss_store__stats(s, &st);
	assert_int_equal(st.lines, 1000);
	assert_int_equal(st.evicted, 4000);
	for (__u64 i = 0; i < 5000; i++)
		found += cp_miss_store__find(s, 100, 0x100000 + i * 64 * 7) != NULL;
	assert_int_equal(found, 1000);
	cp_miss_store__free(s);
}

static void test_line_instructions(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0);
	const struct cp_line *l;

	(void)state;
	/* ips 1..6 miss on one line, ip 1 three times: four kept, two pooled */
	for (__u64 ip = 1; ip <= 6; ip++) {
		struct cp_mem_access a = { .tgid = 100, .tid = 1, .ip = ip, .addr = 0x9000,
					   .weight = 10 };

		cp_miss_store__add(s, &a);
		if (ip == 1) {
			cp_miss_store__add(s, &a);
			cp_miss_store__add(s, &a);
		}
	}
	l = cp_miss_store__find(s, 100, 0x9000);
	assert_int_equal(l->ips[0].ip, 1);
	assert_int_equal(l->ips[0].misses, 3);
	assert_int_equal(l->ips[3].ip, 4);
	assert_int_equal(l->more_ips, 2);
	assert_int_equal(l->weight_sum, 80);
	cp_miss_store__free(s);
}

/* One access of @tid by instruction @ip at @t_ms of sample time. */
static void add_ip(struct cp_miss_store *s, __u32 tid, __u64 ip, __u64 addr, bool store,
		   __u64 t_ms)
{
	struct cp_mem_access a = { .tgid = 100, .tid = tid, .ip = ip, .addr = addr, .size = 8,
				   .store = store, .time_ns = t_ms * 1000000ull };

	assert_int_equal(cp_miss_store__add(s, &a), 0);
}

/*
 * A mixed line (#31): threads 1 and 2 add to a total at bytes 0-7 (ip
 * 0x10) and each to a counter of its own beside it, thread 1 at 8-15 and
 * thread 2 at 16-23 (ip 0x20, the same code for both), in one epoch. The
 * true part is 0-7 with ip 0x10's samples, the false part 8-23 with ip
 * 0x20's, each thread's samples split by instruction; a merge of two
 * stores keeps the split.
 */
static void test_mixed_line_parts(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0), *m = cp_miss_store__new(&l1, 0);
	struct cp_line_parts p;
	const struct cp_line *l;

	(void)state;
	for (__u64 t = 0; t < 5; t++) {
		add_ip(s, 1, 0x20, 0x10008, true, t);
		add_ip(s, 2, 0x20, 0x10010, true, t);
		add_ip(s, 1, 0x10, 0x10000, true, t);
	}
	add_ip(s, 2, 0x10, 0x10000, true, 5);
	l = line_at(s, 0x10000);
	assert_int_equal(cp_line_sharing(l), CP_SHARING_TRUE);
	assert_true(cp_line_parts(l, false, &p));
	assert_true(cp_line_parts(l, true, &p));
	assert_int_equal(p.shared, 0xffull);
	assert_int_equal(p.rest, 0xffff00ull);
	assert_int_equal(p.shared_misses, 6);
	assert_int_equal(p.rest_misses, 10);
	/* thread 1 is thr[0]: 5 samples in each part; thread 2: 1 on the total, 5 its own */
	assert_int_equal(l->thr[0].tid, 1);
	assert_int_equal(p.shared_accesses[0], 5);
	assert_int_equal(p.rest_accesses[0], 5);
	assert_int_equal(p.shared_accesses[1], 1);
	assert_int_equal(p.rest_accesses[1], 5);
	/* merged twice into an empty store: the same split, doubled */
	assert_int_equal(cp_miss_store__merge(m, s), 0);
	assert_int_equal(cp_miss_store__merge(m, s), 0);
	assert_true(cp_line_parts(line_at(m, 0x10000), false, &p));
	assert_int_equal(p.rest, 0xffff00ull);
	assert_int_equal(p.shared_misses, 12);
	assert_int_equal(p.rest_misses, 20);
	assert_int_equal(p.rest_accesses[1], 10);

	/* one total only: true sharing, no false part */
	for (__u64 t = 0; t < 8; t++)
		add_ip(s, 1 + t % 2, 0x10, 0x20000, true, t);
	assert_int_equal(cp_line_sharing(line_at(s, 0x20000)), CP_SHARING_TRUE);
	assert_false(cp_line_parts(line_at(s, 0x20000), false, &p));
	assert_int_equal(p.rest, 0);
	/*
	 * thread 1 writes the total and reads a word of its own, thread 2 only
	 * reads the total: nobody else writes the line, so thread 1's own word
	 * costs nothing (it stays in its cache): no false part
	 */
	for (__u64 t = 0; t < 8; t++) {
		add_ip(s, 1, 0x10, 0x30000, true, t);
		add_ip(s, 1, 0x20, 0x30008, false, t);
		add_ip(s, 2, 0x30, 0x30000, false, t);
	}
	assert_int_equal(cp_line_sharing(line_at(s, 0x30000)), CP_SHARING_TRUE);
	assert_false(cp_line_parts(line_at(s, 0x30000), false, &p));
	assert_int_equal(p.rest, 0xff00ull);
	/*
	 * two counters both threads add to, one store sampled (PMU stores are
	 * rare): the unwritten counter is shared too, not the threads' own
	 */
	add_ip(s, 1, 0x10, 0x50000, true, 0);
	for (__u64 t = 0; t < 8; t++) {
		add_ip(s, 1 + t % 2, 0x11, 0x50000, false, t);
		add_ip(s, 1 + t % 2, 0x12, 0x50008, false, t);
	}
	assert_false(cp_line_parts(line_at(s, 0x50000), false, &p));
	assert_int_equal(p.shared, 0xffffull);
	assert_int_equal(p.rest, 0);
	/* a field both only read beside the total: shared, not false sharing */
	for (__u64 t = 0; t < 8; t++) {
		add_ip(s, 1 + t % 2, 0x10, 0x60000, true, t);
		add_ip(s, 1 + t % 2, 0x12, 0x60008, false, t);
	}
	assert_false(cp_line_parts(line_at(s, 0x60000), false, &p));
	assert_int_equal(p.rest, 0);
	/* the own words in one epoch, the total in another: soft sees no false part */
	for (__u64 t = 0; t < 5; t++) {
		add_ip(s, 1, 0x20, 0x40008, true, 100 + t);
		add_ip(s, 2, 0x20, 0x40010, false, 300 + t);
		add_ip(s, 1, 0x10, 0x40000, true, 500 + t);
		add_ip(s, 2, 0x10, 0x40000, true, 500 + t);
	}
	assert_true(cp_line_parts(line_at(s, 0x40000), false, &p));
	assert_false(cp_line_parts(line_at(s, 0x40000), true, &p));
	cp_miss_store__free(m);
	cp_miss_store__free(s);
}

/*
 * Two processes on one line of a shared file (#31): process 100's thread
 * 101 and process 200's thread 201 run the same code (ip 0x40) on bytes
 * 0x40-0x47 and 0x48-0x4f of the file, both given in its line space
 * (profile/shared_maps.h). One line there and none in either process's
 * space; two threads each with its process, and the instruction twice,
 * once per process (its address means something in each); a merge of the
 * store keeps all that.
 */
static void test_processes_on_one_line(void **state)
{
	struct cp_miss_store *s = cp_miss_store__new(&l1, 0), *d = cp_miss_store__new(&l1, 0);
	__u32 file = CP_SPACE_FILE_FIRST;
	struct cp_mem_access a = { .tgid = 100, .tid = 101, .ip = 0x40, .addr = 0x40,
				   .size = 8, .store = true, .space = file };
	struct cp_mem_access b = { .tgid = 200, .tid = 201, .ip = 0x40, .addr = 0x48,
				   .size = 8, .store = true, .space = file };
	const struct cp_line *l;

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cp_miss_store__add(s, &a), 0);
		assert_int_equal(cp_miss_store__add(s, &b), 0);
	}
	assert_null(cp_miss_store__find(s, 100, 0x40));
	assert_null(cp_miss_store__find(s, 200, 0x40));
	assert_int_equal(cp_miss_store__merge(d, s), 0);
	for (int pass = 0; pass < 2; pass++) {
		/* the store, then its merged copy */
		l = cp_miss_store__find(pass ? d : s, file, 0x40);
		assert_non_null(l);
		assert_int_equal(l->misses, 6);
		assert_int_equal(l->nr_threads, 2);
		assert_int_equal(l->thr[0].pid, 100);
		assert_int_equal(l->thr[1].pid, 200);
		assert_int_equal(l->thr[1].write_mask, 0xff00ull);
		assert_int_equal(l->ips[0].tgid, 100);
		assert_int_equal(l->ips[1].tgid, 200);
		assert_int_equal(l->ips[1].ip, 0x40);
		assert_int_equal(l->ips[1].misses, 3);
		assert_int_equal(l->thr[1].ip_accesses[1], 3);
		assert_int_equal(cp_line_sharing(l), CP_SHARING_FALSE);
	}
	cp_miss_store__free(s);
	cp_miss_store__free(d);
}

static void test_bad_geometry(void **state)
{
	struct cp_cache_level big = l1;

	(void)state;
	big.line_bytes = 128;	/* byte masks cover 64 bytes */
	assert_null(cp_miss_store__new(&big, 0));
	big.line_bytes = 48;
	assert_null(cp_miss_store__new(&big, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharing_verdicts),
		cmocka_unit_test(test_sharing_from_hitm_loads),
		cmocka_unit_test(test_sharing_within_epochs),
		cmocka_unit_test(test_masks_and_counts),
		cmocka_unit_test(test_threads_beyond_cap),
		cmocka_unit_test(test_top_and_eviction),
		cmocka_unit_test(test_many_lines_stay_findable),
		cmocka_unit_test(test_line_instructions),
		cmocka_unit_test(test_mixed_line_parts),
		cmocka_unit_test(test_processes_on_one_line),
		cmocka_unit_test(test_bad_geometry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
