// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The classifier (Algorithm 1 and the ratio filters) on synthetic sample
 * streams: one case per type and origin, the negative controls, the minor
 * issue that must be suppressed, merging and ranking. Expected values are
 * derived in the comments from the streams each test builds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "lib/classify_fixture.h"

/* linear_regression (paper Fig. 8): per-thread fields of one heap array share a line. */
static void test_false_sharing_application(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x10000, 1056, 1, 100, 155, NULL });
	/* line 94 writes SX: thread 101 at offset 0, thread 102 at offset 52 (its struct) */
	counts(f, IP(94), 0, 0, 400, 200);
	misses(f, 101, IP(94), 0x10000, 8, true, 100);
	misses(f, 102, IP(94), 0x10034, 8, true, 100);
	/* line 97 writes the next field: offsets 8 and 60 (4 bytes left in the line) */
	counts(f, IP(97), 0, 0, 400, 200);
	misses(f, 101, IP(97), 0x10008, 8, true, 100);
	misses(f, 102, IP(97), 0x1003c, 4, true, 100);
	/* many loads that hit: the store miss ratio (400 / 800) passes the 1 % filter */
	counts(f, IP(50), 100000, 0, 0, 0);
	is = classify_one(f);
	assert_true(f->out.app_filter_passed);
	assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(is->origin, CP_ORIGIN_APPLICATION);	/* one object on the line */
	/* all 400 forwarded misses are on the line */
	assert_true(is->score > 0.999 && is->score <= 1.0);
	assert_int_equal(is->nr_insns, 2);
	assert_int_equal(is->insns[0].misses, 200);
	assert_int_equal(is->insns[0].loc.line + is->insns[1].loc.line, 94 + 97);
	assert_int_equal(is->nr_objects, 1);
	assert_int_equal(is->objects[0].kind, CP_OBJ_HEAP);
	assert_int_equal(is->objects[0].size, 1056);
	assert_int_equal(is->objects[0].alloc_stack[0].line, 155);
	assert_int_equal(is->sharing.object_size, 1056);
	assert_int_equal(is->sharing.nr_threads, 2);
	/* the object starts the line, so line bytes are object offsets */
	assert_non_null(strstr(is->hint, "1056 bytes"));
	assert_non_null(strstr(is->hint, "thread 101 wrote 0-15"));
	assert_non_null(strstr(is->hint, "thread 102 wrote 52-63"));
	/* both instructions are explained by the line: no capacity issue besides */
	assert_int_equal(f->out.explained_insns, 2);
	assert_int_equal(f->out.suppressed, 0);
}

/*
 * The same sharing in memory no allocation was seen for (an object
 * allocated before attach, no chunk header read): the caller names the
 * [heap] mapping, whose size is no object's. The hint pads "the fields",
 * with bytes of the line, never "the object (135168 bytes)".
 */
static void test_false_sharing_unknown_memory(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	object(f, (struct test_obj){ CP_OBJ_UNKNOWN, 0x10000, 135168, 0, 0, 0, "[heap]" });
	counts(f, IP(94), 0, 0, 400, 200);
	misses(f, 101, IP(94), 0x10040, 8, true, 100);
	misses(f, 102, IP(94), 0x10048, 8, true, 100);
	counts(f, IP(50), 100000, 0, 0, 0);
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(is->nr_objects, 1);
	assert_int_equal(is->objects[0].kind, CP_OBJ_UNKNOWN);
	assert_int_equal(is->sharing.object_size, 0);
	assert_int_equal(is->sharing.object_start, 0);
	assert_null(strstr(is->hint, "135168"));
	assert_non_null(strstr(is->hint, "pad or align the data each thread writes"));
	assert_non_null(strstr(is->hint, "Bytes of the line: thread 101 wrote 0-7"));
}

/*
 * cache-scratch (paper Fig. 9): two 8-byte objects on one line. Allocated by
 * the two threads that write them: the allocator's; by one thread: the
 * application's (the paper requires different allocating threads).
 */
static void test_false_sharing_allocator(void **state)
{
	struct { __u32 tid_a, tid_b; enum cp_issue_origin origin; } cases[] = {
		{ 101, 102, CP_ORIGIN_ALLOCATOR },
		{ 100, 100, CP_ORIGIN_APPLICATION },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = fixture_new();
		const struct cp_issue *is;

		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x20000, 8, 2, cases[c].tid_a, 81, NULL });
		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x20010, 8, 2, cases[c].tid_b, 81, NULL });
		counts(f, IP(84), 0, 0, 1000, 200);
		misses(f, 101, IP(84), 0x20000, 1, true, 100);
		misses(f, 102, IP(84), 0x20010, 1, true, 100);
		is = classify_one(f);
		assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
		assert_int_equal(is->origin, cases[c].origin);
		/* one call site: one group of two objects */
		assert_int_equal(is->nr_objects, 1);
		assert_int_equal(is->objects[0].nr_objects, 2);
		assert_int_equal(is->objects[0].size, 8);
		assert_int_equal(is->objects[0].nr_tids, cases[c].tid_a == cases[c].tid_b ? 1 : 2);
		if (cases[c].origin == CP_ORIGIN_ALLOCATOR)
			assert_non_null(strstr(is->hint, "align these allocations"));
		/*
		 * the bytes lie in two 8-byte objects: no offsets "in the
		 * object" (16-16 would be past the end of either), bytes of
		 * the line instead
		 */
		assert_null(strstr(is->hint, "-byte object"));
		assert_non_null(strstr(is->hint, "Bytes of the line"));
		assert_non_null(strstr(is->hint, "thread 102 wrote 16"));
		fixture_free(f);
	}
}

/*
 * Objects whose allocation no probe saw (allocated before attach, found from
 * glibc's chunk headers; or while the probes were backed off): no allocating
 * thread. Two objects on the line, each written by a thread of its own: the
 * allocator placed them. When one thread writes both, or only one object is
 * on the line, nothing says it was not the application's own layout.
 */
static void test_false_sharing_allocator_unseen(void **state)
{
	struct {
		__u64 b_start;		/* the second object (0: none) */
		__u32 extra_tid;	/* a third write, by this thread (0: none) ... */
		__u64 extra_addr;	/* ... at this address */
		enum cp_issue_origin origin;
	} cases[] = {
		{ 0x20010, 0, 0, CP_ORIGIN_ALLOCATOR },
		{ 0x20010, 103, 0x20008, CP_ORIGIN_ALLOCATOR },	/* two threads of the first's own */
		{ 0, 0, 0, CP_ORIGIN_APPLICATION },
		/* 101 writes into both objects, 102 into one: neither is its own */
		{ 0x20010, 101, 0x20018, CP_ORIGIN_APPLICATION },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = fixture_new();
		const struct cp_issue *is;

		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x20000, cases[c].b_start ? 16 : 64, 0,
					     0, 0, NULL });
		if (cases[c].b_start)
			object(f, (struct test_obj){ CP_OBJ_HEAP, cases[c].b_start, 16, 0, 0, 0,
						     NULL });
		counts(f, IP(84), 0, 0, 1000, 200);
		misses(f, 101, IP(84), 0x20000, 1, true, 100);
		misses(f, 102, IP(84), 0x20010, 1, true, 100);
		if (cases[c].extra_tid)
			misses(f, cases[c].extra_tid, IP(84), cases[c].extra_addr, 1, true, 100);
		is = classify_one(f);
		assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
		assert_int_equal(is->origin, cases[c].origin);
		/* who allocated them is unknown: the hint does not say */
		if (cases[c].origin == CP_ORIGIN_ALLOCATOR)
			assert_non_null(strstr(is->hint, "Objects each used by different threads "
							 "share a 64-byte line"));
		fixture_free(f);
	}
}

/* A global counter both threads increment: true sharing of the application. */
static void test_true_sharing(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	object(f, (struct test_obj){ CP_OBJ_GLOBAL, 0x30000, 8, 0, 0, 0, "hits" });
	counts(f, IP(120), 500, 100, 500, 100);
	misses(f, 101, IP(120), 0x30000, 8, false, 50);
	misses(f, 101, IP(120), 0x30000, 8, true, 50);
	misses(f, 102, IP(120), 0x30000, 8, false, 50);
	misses(f, 102, IP(120), 0x30000, 8, true, 50);
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_TRUE_SHARING);
	assert_int_equal(is->origin, CP_ORIGIN_APPLICATION);
	assert_string_equal(is->objects[0].name, "hits");
	assert_int_equal(is->objects[0].kind, CP_OBJ_GLOBAL);
	assert_non_null(strstr(is->hint, "padding cannot help"));
}

/*
 * PMU samples of a mixed line: both threads miss on a global total at
 * bytes 0-7 (line 120, 200 misses) and each on its own counter of the same
 * struct, thread 101 at 8-15 and 102 at 16-23 (line 125, 300 misses): true
 * sharing of the total (200 of 500 forwarded misses), false sharing of the
 * counters (300), each with its own instruction.
 */
static void test_mixed_line(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *fs, *ts;

	object(f, (struct test_obj){ CP_OBJ_GLOBAL, 0x30000, 24, 0, 0, 0, "stats" });
	counts(f, IP(120), 500, 100, 500, 100);
	counts(f, IP(125), 500, 150, 500, 150);
	for (__u32 t = 0; t < 2; t++) {
		misses(f, 101 + t, IP(120), 0x30000, 8, false, 50);
		misses(f, 101 + t, IP(120), 0x30000, 8, true, 50);
		misses(f, 101 + t, IP(125), 0x30008 + 8 * t, 8, false, 75);
		misses(f, 101 + t, IP(125), 0x30008 + 8 * t, 8, true, 75);
	}
	classify(f);
	assert_int_equal(f->out.nr_issues, 2);
	fs = &f->out.issues[0];
	ts = &f->out.issues[1];
	assert_int_equal(fs->type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(fs->misses, 300);
	assert_int_equal(fs->nr_insns, 1);
	assert_int_equal(fs->insns[0].loc.line, 125);
	assert_int_equal(fs->sharing.other_part, 0xffull);
	assert_string_equal(fs->objects[0].name, "stats");
	assert_non_null(strstr(fs->hint, "Beside the bytes the threads share (offsets 0-7"));
	assert_int_equal(ts->type, CP_ISSUE_TRUE_SHARING);
	assert_int_equal(ts->misses, 200);
	assert_int_equal(ts->nr_insns, 1);
	assert_int_equal(ts->insns[0].loc.line, 120);
	assert_int_equal(ts->sharing.other_part, 0xffff00ull);
	assert_non_null(strstr(ts->hint, "padding cannot help"));
}

/*
 * Two threads on one line: thread 1 writes bytes 0-7; thread 2 touches the
 * bytes below. Any byte both touch, with one writing, is true sharing.
 */
static void test_overlapping_versus_disjoint_bytes(void **state)
{
	struct { __u64 off; __u32 size; bool store; enum cp_issue_type type; } cases[] = {
		{ 4, 8, true, CP_ISSUE_TRUE_SHARING },		/* writes 4-11: overlaps 4-7 */
		{ 8, 8, true, CP_ISSUE_FALSE_SHARING },		/* writes 8-15: disjoint */
		{ 7, 1, false, CP_ISSUE_TRUE_SHARING },		/* reads byte 7 thread 1 wrote */
		{ 8, 8, false, CP_ISSUE_FALSE_SHARING },	/* reads 8-15 */
		{ 56, 8, true, CP_ISSUE_FALSE_SHARING },	/* the far end of the line */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = fixture_new();

		counts(f, IP(10), 0, 0, 100, 50);
		counts(f, IP(11), 100, 50, 100, 50);
		misses(f, 1, IP(10), 0x50000, 8, true, 50);
		misses(f, 2, IP(11), 0x50000 + cases[c].off, cases[c].size, cases[c].store, 50);
		assert_int_equal(classify_one(f)->type, cases[c].type);
		fixture_free(f);
	}
}

/*
 * SRAD (paper Fig. 5): a column walk over a 4 KiB-wide image. All 64
 * history addresses are 4 KiB apart: one set, 64 lines > 8 ways.
 */
static void test_conflict_application(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x100000, 64 * 4096, 3, 100, 143, NULL });
	counts(f, IP(243), 1000, 640, 0, 0);
	for (__u64 i = 0; i < 64; i++) {
		history(f, IP(243), 0x100000 + i * 4096);
		misses(f, 101, IP(243), 0x100000 + i * 4096, 4, false, 1);
	}
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_CONFLICT);
	assert_int_equal(is->origin, CP_ORIGIN_APPLICATION);
	/* 0x100000 / 64 = 16384 lines, a multiple of 64 sets: set 0 */
	assert_int_equal(is->conflict.set, 0);
	assert_int_equal(is->conflict.accesses, 64);
	assert_int_equal(is->conflict.distinct_lines, 64);
	assert_int_equal(is->conflict.ways, 8);
	assert_int_equal(is->conflict.set_misses, 64);
	assert_int_equal(is->objects[0].size, 64 * 4096);
	assert_int_equal(is->objects[0].refs, 64);
	/* the instruction has all 640 sampled misses */
	assert_true(is->score > 0.999);
	assert_non_null(strstr(is->hint, "row stride in lines is odd"));
}

/* raytrace (paper Fig. 6): 16 small heap objects placed 4 KiB apart, one set. */
static void test_conflict_allocator(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	for (__u64 i = 0; i < 16; i++) {
		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x200000 + i * 4096, 48, 4, 100, 145,
					     NULL });
		history(f, IP(1875), 0x200000 + i * 4096 + 8);
		misses(f, 101, IP(1875), 0x200000 + i * 4096 + 8, 8, false, 2);
	}
	counts(f, IP(1875), 1000, 300, 0, 0);
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_CONFLICT);
	assert_int_equal(is->origin, CP_ORIGIN_ALLOCATOR);
	assert_int_equal(is->conflict.distinct_lines, 16);
	assert_int_equal(is->nr_objects, 1);		/* one call site */
	assert_int_equal(is->objects[0].nr_objects, 16);
	assert_int_equal(is->objects[0].size, 48);
	assert_non_null(strstr(is->hint, "sizes or the alignment"));
}

/*
 * Histories that are not conflicts: a sequential walk (8 accesses per set,
 * one line each), and a walk over exactly 8 lines of one set (8 lines fit
 * 8 ways). Both are capacity.
 */
static void test_capacity(void **state)
{
	struct { __u64 stride; __u64 period; } cases[] = {
		{ 8, 64 },		/* 64 x 8 bytes: 8 lines, 8 accesses each */
		{ 4096, 8 },		/* 64 accesses on one set, cycling over 8 lines */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = fixture_new();
		const struct cp_issue *is;

		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x300000, 1 << 20, 5, 100, 239, NULL });
		counts(f, IP(239), 1000, 500, 0, 0);
		for (__u64 i = 0; i < 64; i++) {
			__u64 a = 0x300000 + (i % cases[c].period) * cases[c].stride;

			history(f, IP(239), a);
			misses(f, 101, IP(239), a, 8, false, 1);
		}
		is = classify_one(f);
		assert_int_equal(is->type, CP_ISSUE_CAPACITY);
		assert_int_equal(is->objects[0].start, 0x300000);
		assert_non_null(strstr(is->hint, "tile"));
		fixture_free(f);
	}
}

/* No history yet: reported as pending, not guessed; the objects come from the misses. */
static void test_pending_access_pattern(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x300000, 1 << 20, 5, 100, 239, NULL });
	counts(f, IP(239), 1000, 500, 0, 0);
	for (__u64 i = 0; i < 64; i++)
		misses(f, 101, IP(239), 0x300000 + i * 4096, 8, false, 1);
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_CAPACITY_OR_CONFLICT);
	assert_string_equal(cp_issue_type_name(is->type), "capacity_or_conflict");
	assert_int_equal(is->objects[0].start, 0x300000);
	/* the first four miss lines were kept, all in the object */
	assert_int_equal(is->objects[0].refs, CP_INSN_MISS_ADDRS);
	assert_non_null(strstr(is->hint, "pending"));
}

/*
 * The application filter: load misses below 3 % of loads and store misses
 * below 1 % of stores report nothing, however concentrated; at exactly
 * 3 % the issue is reported.
 */
static void test_low_miss_ratio_reports_nothing(void **state)
{
	struct { __u64 load_misses, store_misses; size_t issues; } cases[] = {
		{ 2999, 99, 0 },	/* 2.999 % and 0.99 % */
		{ 3000, 0, 1 },		/* 3 % of loads */
		{ 0, 100, 1 },		/* 1 % of stores */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = fixture_new();

		counts(f, IP(239), 100000, cases[c].load_misses, 10000, cases[c].store_misses);
		misses(f, 101, IP(239), 0x300000, 8, false, 10);
		classify(f);
		assert_true(f->out.app_filter_applies);
		assert_int_equal(f->out.app_filter_passed, cases[c].issues > 0);
		assert_int_equal(f->out.nr_issues, cases[c].issues);
		/* the one candidate is counted as suppressed when the filter fails */
		assert_int_equal(f->out.suppressed, 1 - cases[c].issues);
		fixture_free(f);
	}
}

/*
 * Misses spread thin: 200 instructions, each with 10 of the 2000 sampled
 * misses (0.5 % < 1 %), each on 10 lines of its own (1 miss per line,
 * 0.05 %). The application filter passes (10 % of loads miss); nothing
 * else does.
 */
static void test_spread_misses_report_nothing(void **state)
{
	struct fixture *f = *state;

	for (__u64 i = 0; i < 200; i++) {
		counts(f, IP(1000 + i), 100, 10, 0, 0);
		for (__u64 l = 0; l < 10; l++)
			misses(f, 101, IP(1000 + i), 0x1000000 + (i * 10 + l) * 64, 8, false, 1);
	}
	classify(f);
	assert_true(f->out.app_filter_passed);
	assert_int_equal(f->out.nr_issues, 0);
	assert_null(f->out.issues);
	assert_int_equal(f->out.suppressed, 200);
}

/*
 * streamcluster (paper §4.2.4): work_mem is really falsely shared, but its
 * line holds 20 of 3020 forwarded misses (0.66 % < 1 %): suppressed. Its
 * instruction has 100 of 5100 sampled misses (2 %), enough to pass the
 * instruction filter, but the shared line explains all its forwarded
 * misses, so it must not come back as a capacity issue.
 */
static void test_minor_sharing_suppressed(void **state)
{
	struct fixture *f = *state;

	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x40000, 4096, 6, 100, 60, "work_mem" });
	counts(f, IP(300), 10000, 5000, 0, 0);		/* the real problem: capacity */
	for (__u64 i = 0; i < 64; i++)
		history(f, IP(300), 0x800000 + i * 8);
	for (__u64 i = 0; i < 3000; i++)
		misses(f, 101, IP(300), 0x800000 + i * 64, 8, false, 1);
	counts(f, IP(310), 0, 0, 1000, 100);
	misses(f, 101, IP(310), 0x40000, 8, true, 10);
	misses(f, 102, IP(310), 0x40020, 8, true, 10);
	classify(f);
	assert_int_equal(f->out.nr_issues, 1);
	assert_int_equal(f->out.issues[0].type, CP_ISSUE_CAPACITY);
	assert_int_equal(f->out.issues[0].insns[0].loc.line, 300);
	assert_int_equal(f->out.suppressed, 1);
	assert_int_equal(f->out.explained_insns, 1);

	/* with the line threshold at 0.5 %, the same sharing is serious */
	f->cfg.min_line_miss_ppm = 5000;
	classify(f);
	assert_int_equal(f->out.nr_issues, 2);
	assert_int_equal(f->out.issues[1].type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(f->out.suppressed, 0);
}

/*
 * An instruction that touches a shared line only now and then keeps its
 * own issue: 5 of its 105 forwarded misses are on the line.
 */
static void test_sharing_explains_only_majority(void **state)
{
	struct fixture *f = *state;

	counts(f, IP(20), 1000, 500, 0, 0);
	for (__u64 i = 0; i < 100; i++)
		misses(f, 101, IP(20), 0x900000 + i * 64, 8, false, 1);
	misses(f, 101, IP(20), 0x60000, 8, false, 5);
	counts(f, IP(21), 0, 0, 1000, 200);
	misses(f, 102, IP(21), 0x60008, 8, true, 50);
	classify(f);
	assert_int_equal(f->out.nr_issues, 2);
	/* the instruction has 500 of 700 sampled misses; the line 55 of 155 forwarded */
	assert_int_equal(f->out.issues[0].type, CP_ISSUE_CAPACITY_OR_CONFLICT);
	assert_int_equal(f->out.issues[1].type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(f->out.explained_insns, 1);	/* IP(21) only */
}

/*
 * IRS (paper Fig. 7): lines 239 and 240 miss in one array: one issue with
 * two source lines. Two ips of line 250 are one source line. Line 260 on
 * another array is its own issue. Ranked by share of misses; --top 1
 * keeps the first.
 */
static void test_merge_and_rank(void **state)
{
	struct fixture *f = *state;
	const struct cp_issue *is;

	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x1000000, 1 << 20, 7, 100, 275, NULL });
	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x2000000, 1 << 20, 8, 100, 278, NULL });
	counts(f, IP(239), 1000, 300, 0, 0);
	misses(f, 101, IP(239), 0x1000000, 8, false, 3);
	counts(f, IP(240), 1000, 200, 0, 0);
	misses(f, 101, IP(240), 0x1008000, 8, false, 2);
	counts(f, IP(250), 1000, 100, 0, 0);
	counts(f, IP(250) + 4, 1000, 100, 0, 0);		/* same line 250 */
	counts(f, IP(260), 1000, 150, 0, 0);
	misses(f, 101, IP(260), 0x2000000, 8, false, 1);
	classify(f);
	/* 850 sampled misses: {239, 240} 500, {250} 200, {260} 150 */
	assert_int_equal(f->out.nr_issues, 3);
	is = &f->out.issues[0];
	assert_int_equal(is->nr_insns, 2);
	assert_int_equal(is->insns[0].loc.line, 239);
	assert_int_equal(is->insns[1].loc.line, 240);
	assert_int_equal(is->misses, 500);
	assert_true(is->score > 500.0 / 850 - 1e-9 && is->score < 500.0 / 850 + 1e-9);
	assert_int_equal(is->objects[0].alloc_stack[0].line, 275);
	is = &f->out.issues[1];
	assert_int_equal(is->nr_insns, 1);
	assert_int_equal(is->insns[0].loc.line, 250);
	assert_int_equal(is->insns[0].nr_ips, 2);
	assert_int_equal(is->insns[0].misses, 200);
	assert_int_equal(f->out.issues[2].insns[0].loc.line, 260);

	f->cfg.top = 1;
	classify(f);
	assert_int_equal(f->out.nr_issues, 1);
	assert_int_equal(f->out.beyond_top, 2);
	assert_int_equal(f->out.issues[0].insns[0].loc.line, 239);
}

/* The instruction filters: 0.01 % of accesses and 1 % of misses, configurable. */
static void test_instruction_filters(void **state)
{
	struct fixture *f = *state;

	/* 100 of 200010 loads miss (0.05 %): let the application filter pass */
	f->cfg.app_load_miss_ppm = 0;
	/* 10 misses in 10 accesses: 10 % of the 100 misses, but 0.005 % of 200010 accesses */
	counts(f, IP(30), 10, 10, 0, 0);
	counts(f, IP(31), 200000, 90, 0, 0);
	classify(f);
	assert_int_equal(f->out.nr_issues, 1);
	assert_int_equal(f->out.issues[0].insns[0].loc.line, 31);
	assert_int_equal(f->out.suppressed, 1);
	f->cfg.min_access_ppm = 10;		/* 0.001 % lets line 30 through */
	classify(f);
	assert_int_equal(f->out.nr_issues, 2);
	f->cfg.min_miss_ppm = 950000;		/* 95 %: neither has that */
	classify(f);
	assert_int_equal(f->out.nr_issues, 0);
	assert_int_equal(f->out.suppressed, 2);
}

/* Estimated rates and the latency cost: samples x period / duration. */
static void test_rates_and_cost(void **state)
{
	struct fixture *f = *state;
	struct cp_ip_key k = { .tgid = TGID, .ip = IP(40) };
	struct cp_ip_counts c = { .loads = 1000, .load_misses = 500, .stores = 100,
				  .store_misses = 10, .lat_sum = 50000 };
	const struct cp_issue *is;

	cp_insn_store__add(f->insns, &k, &c);
	f->in.loads = 1000;
	f->in.load_misses = 500;
	f->in.stores = 100;
	f->in.store_misses = 10;
	f->in.load_period = 10000;
	f->in.store_period = 20000;
	f->in.duration_s = 2;
	is = classify_one(f);
	/* (500 x 10000 + 10 x 20000) / 2 s */
	assert_true(is->misses_per_s > 2.6e6 - 1 && is->misses_per_s < 2.6e6 + 1);
	/* 50000 cycles of sampled latency x 10000 / 2 s */
	assert_true(is->have_cost);
	assert_true(is->cost_cycles_per_s > 2.5e8 - 1 && is->cost_cycles_per_s < 2.5e8 + 1);
}

/* Sources without hit/miss levels: every sample counts, the app filter does not apply. */
static void test_no_levels(void **state)
{
	struct fixture *f = *state;

	f->in.no_levels = true;
	counts(f, IP(70), 1000, 0, 0, 0);
	misses(f, 101, IP(70), 0x300000, 8, false, 10);
	assert_int_equal(classify_one(f)->misses, 1000);
	assert_false(f->out.app_filter_applies);
}

static void test_bad_input(void **state)
{
	struct fixture *f = *state;

	f->in.misses = NULL;
	assert_int_equal(cp_classify(&f->in, &f->cfg, &f->out), -EINVAL);
	f->in.misses = f->misses;
	f->in.l1 = NULL;
	assert_int_equal(cp_classify(&f->in, &f->cfg, &f->out), -EINVAL);
	assert_string_equal(cp_issue_origin_name(CP_ORIGIN_ALLOCATOR), "allocator");
	assert_string_equal(cp_issue_type_name(CP_ISSUE_FALSE_SHARING), "false_sharing");
}

/* cp_src_loc_at(): a sample's file:line against an issue instruction's, a long path kept cut */
static void test_src_loc_at(void **state)
{
	struct cp_src_loc loc = { .line = 42 };
	char longer[CP_LOC_FILE_LEN + 40];

	(void)state;
	snprintf(loc.file, sizeof(loc.file), "/src/app/worker.c");
	assert_true(cp_src_loc_at(&loc, "/src/app/worker.c", 42));
	assert_false(cp_src_loc_at(&loc, "/src/app/worker.c", 43));
	assert_false(cp_src_loc_at(&loc, "/src/other/worker.c", 42));	/* same base name */
	assert_false(cp_src_loc_at(&loc, "/src/app/worker.cc", 42));
	assert_false(cp_src_loc_at(&loc, NULL, 42));
	/* a path longer than the location keeps: equal as far as it was kept */
	memset(longer, 'd', sizeof(longer) - 1);
	longer[0] = '/';
	longer[sizeof(longer) - 1] = '\0';
	memcpy(loc.file, longer, sizeof(loc.file) - 1);	/* kept cut, as the locator keeps it */
	loc.file[sizeof(loc.file) - 1] = '\0';
	assert_true(cp_src_loc_at(&loc, longer, 42));
	longer[sizeof(longer) - 2] = 'x';	/* differs past the cut: still the same */
	assert_true(cp_src_loc_at(&loc, longer, 42));
	longer[10] = 'x';			/* differs before it */
	assert_false(cp_src_loc_at(&loc, longer, 42));
	/* no line or no file: nothing is at it */
	loc.file[0] = '\0';
	assert_false(cp_src_loc_at(&loc, "", 42));
	snprintf(loc.file, sizeof(loc.file), "a.c");
	loc.line = 0;
	assert_false(cp_src_loc_at(&loc, "a.c", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_false_sharing_application, setup, teardown),
		cmocka_unit_test_setup_teardown(test_false_sharing_unknown_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_true_sharing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_minor_sharing_suppressed, setup, teardown),
		cmocka_unit_test(test_false_sharing_allocator),
		cmocka_unit_test(test_false_sharing_allocator_unseen),
		cmocka_unit_test_setup_teardown(test_sharing_explains_only_majority, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_application, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_allocator, setup, teardown),
		cmocka_unit_test(test_overlapping_versus_disjoint_bytes),
		cmocka_unit_test_setup_teardown(test_pending_access_pattern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spread_misses_report_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instruction_filters, setup, teardown),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test_setup_teardown(test_merge_and_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rates_and_cost, setup, teardown),
		cmocka_unit_test(test_low_miss_ratio_reports_nothing),
		cmocka_unit_test_setup_teardown(test_no_levels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test(test_src_loc_at),
	};

	return cmocka_run_group_tests_name("classify", tests, NULL, NULL);
}
