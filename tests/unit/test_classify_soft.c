// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The classifier's soft mode (timer ticks, no hit/miss information) on
 * synthetic sample streams: each sample is an access weighted by time.
 * One case per type and origin, the negative controls (a friendly pattern,
 * a line one thread writes, threads that never meet within an epoch, a
 * stream that fits in L2, no access history), and the report's wording.
 * Expected values are derived in the comments from the streams built.
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
#include "classify/issue.h"
#include "lib/classify_fixture.h"
#include "lib/issues_text.h"
#include "classify/stream_evidence.h"

#define MS	1000000ull
#define KIB	1024ull
#define MIB	(1024ull * 1024)

/* L1D as the fixture's, L2 1 MiB, LLC 32 MiB (this development VM's sysfs) */
static struct cp_geometry geo;

static struct fixture *soft_new(__u64 time_samples)
{
	struct fixture *f = fixture_new();

	geo.slot[CP_CACHE_L1D] = l1;
	geo.slot[CP_CACHE_L2] = (struct cp_cache_level){
		.level = 2, .size_bytes = MIB, .ways = 16, .sets = 1024, .line_bytes = 64,
		.valid = true };
	geo.slot[CP_CACHE_LLC] = (struct cp_cache_level){
		.level = 3, .size_bytes = 32 * MIB, .ways = 16, .sets = 32768, .line_bytes = 64,
		.valid = true };
	f->in.soft = true;
	f->in.no_levels = true;
	f->in.geo = &geo;
	f->in.time_samples = time_samples;
	return f;
}

/* @n ticks on @ip, an access of thread @tid at @addr, each in the counters and the stores. */
static void ticks(struct fixture *f, __u32 tid, __u64 ip, __u64 addr, __u32 size, bool store,
		  int n)
{
	counts(f, ip, store ? 0 : (__u64)n, 0, store ? (__u64)n : 0, 0);
	misses(f, tid, ip, addr, size, store, n);
}

/* Two threads interleaved in each of @epochs epochs of 100 ms, @n ticks each per epoch. */
static void two_threads(struct fixture *f, __u64 ip_a, __u64 addr_a, __u64 ip_b, __u64 addr_b,
			int epochs, int n)
{
	for (int e = 0; e < epochs; e++) {
		f->now_ns = (__u64)e * CP_SHARE_EPOCH_NS + 1;
		ticks(f, 101, ip_a, addr_a, 8, true, n);
		ticks(f, 102, ip_b, addr_b, 8, true, n);
	}
}

static void expect_text(const struct fixture *f, const char *want)
{
	char *text = render(&f->out, &f->cfg);

	expect(text, want);
	free(text);
}

/*
 * false_sharing.c: two threads write their own 8-byte word of one line in
 * every epoch. 10 epochs x 2 threads x 20 ticks = 400 ticks on the line,
 * of 1000 time samples in all: impact 40 %. Adjacent fields of one heap
 * struct are the application's; two 8-byte objects malloc'ed by the two
 * threads (cache-scratch) the allocator's.
 */
static void test_soft_false_sharing(void **state)
{
	struct { enum cp_issue_origin origin; __u64 second; __u32 objs, owner_b; } cases[] = {
		{ CP_ORIGIN_APPLICATION, 0x10008, 1, 0 },
		{ CP_ORIGIN_ALLOCATOR, 0x10020, 2, 102 },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = soft_new(1000);
		const struct cp_issue *is;

		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x10000, cases[c].objs == 1 ? 128 : 8, 1,
					     cases[c].objs == 1 ? 100 : 101, 52, NULL });
		if (cases[c].objs == 2)
			object(f, (struct test_obj){ CP_OBJ_HEAP, cases[c].second, 8, 1,
						     cases[c].owner_b, 52, NULL });
		two_threads(f, IP(33), 0x10000, IP(33), cases[c].second, 10, 20);
		is = classify_one(f);
		assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
		assert_int_equal(is->origin, cases[c].origin);
		assert_true(is->score > 0.399 && is->score < 0.401);
		assert_int_equal(is->insns[0].loc.line, 33);
		assert_int_equal(is->objects[0].nr_objects, cases[c].objs);
		assert_int_equal(is->objects[0].alloc_stack[0].line, 52);
		assert_true(f->out.soft);
		assert_false(f->out.app_filter_applies);
		expect_text(f, "source: soft, " CP_SOFT_NOTE);
		expect_text(f, "Impact: 40.0 % of time samples");
		expect_text(f, "(400 samples");
		fixture_free(f);
	}
}

/*
 * A soft fixture of 1000 time samples whose object is a shared file's:
 * /dev/shm/q, 4096 bytes mapped, in the first file line space.
 */
static struct fixture *shm_new(void)
{
	struct fixture *f = soft_new(1000);

	f->obj_space = CP_SPACE_FILE_FIRST;
	object(f, (struct test_obj){ CP_OBJ_MAPPING, 0, 4096, 0, 0, 0, "/dev/shm/q" });
	return f;
}

/*
 * shm_sharing.c, with two threads in one of the processes: in each of 10
 * epochs, process 200's thread 201 writes offsets 0x40 + @stride (15
 * ticks), then process 100's threads 101 and 102 write 0x40 and
 * 0x40 + 2 @stride (10 ticks each), in a shared file (4096 bytes mapped,
 * /dev/shm/q), each access given in the file's line space
 * (profile/shared_maps.h). @stride 8: one line, 350 of 1000 time samples,
 * 35 %, false sharing between the processes, charged to 100 (200 samples
 * against 200's 150, though 201 is the busiest thread and came first);
 * each instruction located in its own process (work.c:33 with 200
 * samples, peer.c:33 with 150); the threads with their processes in the
 * order they came; the line at its file offset; the file as the object
 * whose offsets the hint gives (72-79, 64-71, 80-87); both instructions
 * explained. @stride 64: three lines, nothing.
 */
static void test_soft_false_sharing_between_processes(void **state)
{
	for (__u64 stride = 8; stride <= 64; stride += 56) {
		struct fixture *f = shm_new();
		const struct cp_issue *is;

		(void)state;
		for (int e = 0; e < 10; e++) {
			f->now_ns = (__u64)e * CP_SHARE_EPOCH_NS + 1;
			counts_in(f, PEER_TGID, IP(33), 0, 0, 15, 0);
			misses_in(f, PEER_TGID, CP_SPACE_FILE_FIRST, 201, IP(33), 0x40 + stride, 8,
				  true, 15);
			for (__u32 t = 0; t < 2; t++) {
				counts_in(f, TGID, IP(33), 0, 0, 10, 0);
				misses_in(f, TGID, CP_SPACE_FILE_FIRST, 101 + t, IP(33),
					  0x40 + 2 * stride * t, 8, true, 10);
			}
		}
		classify(f);
		if (stride == 64) {
			assert_int_equal(f->out.nr_issues, 0);
			fixture_free(f);
			continue;
		}
		assert_int_equal(f->out.nr_issues, 1);
		is = &f->out.issues[0];
		assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
		assert_int_equal(is->origin, CP_ORIGIN_APPLICATION);
		assert_true(is->score > 0.349 && is->score < 0.351);
		assert_int_equal(is->tgid, TGID);
		assert_int_equal(is->nr_insns, 2);
		assert_int_equal(is->insns[0].tgid, TGID);
		assert_string_equal(is->insns[0].loc.file, "work.c");
		assert_int_equal(is->insns[0].misses, 200);
		assert_int_equal(is->insns[1].tgid, PEER_TGID);
		assert_string_equal(is->insns[1].loc.file, "peer.c");
		assert_int_equal(is->sharing.line_space, CP_SPACE_FILE_FIRST);
		assert_int_equal(is->sharing.line_addr, 0x40);
		assert_int_equal(is->sharing.nr_threads, 3);
		assert_int_equal(is->sharing.thr[0].pid, PEER_TGID);
		assert_int_equal(is->sharing.thr[0].write_mask, 0xff00ull);
		assert_int_equal(is->sharing.object_size, 4096);
		assert_int_equal(f->out.explained_insns, 2);
		expect_text(f, "Related to the mapping /dev/shm/q (4096 bytes)");
		expect_text(f, "(processes 100, 200, on memory they share)");
		expect_text(f, "Line at offset 0x40 of the file (350 samples)");
		expect_text(f, "thread 201 of process 200: wrote 8-15, read - (150 samples)");
		expect_text(f, "Processes write different bytes of one 64-byte line");
		expect_text(f, "Offsets in the 4096-byte object: thread 201 of process 200 wrote "
			    "72-79; thread 101 of process 100 wrote 64-71; thread 102 of process 100 "
			    "wrote 80-87.");
		fixture_free(f);
	}
}

/*
 * The mixed line of false_sharing.c --mixed in a shared file, written by
 * two processes: in each of 10 epochs, process 100's thread 101 and
 * process 200's thread 201 each write a counter of its own (offsets 8-15
 * and 16-23, line 71 of each one's source) 15 times and a total both write
 * (0-7, line 72) 5 times. As in one process: false sharing of the own
 * counters (300 ticks, 30 %), true sharing of the total (100, 10 %); each
 * part between the two processes, charged to the first listed of equals
 * (100), each instruction in its own process, the other part's bytes
 * named as offsets in the file.
 */
static void test_soft_mixed_line_between_processes(void **state)
{
	struct fixture *f = shm_new();
	__u32 pids[CP_ISSUE_MAX_PIDS];
	const struct cp_issue *fs, *ts;

	(void)state;
	for (int e = 0; e < 10; e++) {
		f->now_ns = (__u64)e * CP_SHARE_EPOCH_NS + 1;
		for (__u32 t = 0; t < 2; t++) {
			__u32 pid = t ? PEER_TGID : TGID;

			counts_in(f, pid, IP(71), 0, 0, 15, 0);
			misses_in(f, pid, CP_SPACE_FILE_FIRST, pid + 1, IP(71), 8 * (t + 1), 8, true,
				  15);
			counts_in(f, pid, IP(72), 0, 0, 5, 0);
			misses_in(f, pid, CP_SPACE_FILE_FIRST, pid + 1, IP(72), 0, 8, true, 5);
		}
	}
	classify(f);
	assert_int_equal(f->out.nr_issues, 2);
	fs = &f->out.issues[0];
	ts = &f->out.issues[1];
	assert_int_equal(fs->type, CP_ISSUE_FALSE_SHARING);
	assert_true(fs->score > 0.299 && fs->score < 0.301);
	assert_int_equal(fs->tgid, TGID);
	assert_int_equal(cp_issue_pids(fs, pids), 2);
	assert_int_equal(pids[1], PEER_TGID);
	assert_int_equal(fs->nr_insns, 2);
	assert_int_equal(fs->insns[0].loc.line + fs->insns[1].loc.line, 71 * 2);
	assert_int_equal(fs->insns[0].tgid + fs->insns[1].tgid, TGID + PEER_TGID);
	assert_int_equal(fs->sharing.other_part, 0xffull);
	assert_int_equal(ts->type, CP_ISSUE_TRUE_SHARING);
	assert_true(ts->score > 0.099 && ts->score < 0.101);
	assert_int_equal(ts->tgid, TGID);
	assert_int_equal(cp_issue_pids(ts, pids), 2);
	assert_int_equal(ts->nr_insns, 2);
	assert_int_equal(ts->insns[0].loc.line, 72);
	assert_int_equal(ts->sharing.other_part, 0xffff00ull);
	expect_text(f, "Beside the bytes the threads share (offsets 0-7: true sharing, reported "
		    "apart)");
	expect_text(f, "thread 101 of process 100 wrote 8-15; thread 201 of process 200 wrote "
		    "16-23.");
	expect_text(f, "Processes read and write the same bytes of memory they map shared");
	expect_text(f, "The line's other bytes (offsets 8-23) are false sharing, reported apart");
	fixture_free(f);
}

/*
 * Issues of one process and type are merged when they share an object:
 * every shared file starts at its offset 0, so two files are two objects
 * by their names (a review found two files' issues merged into one).
 */
static void test_shared_files_are_objects_apart(void **state)
{
	static struct cp_issue a, b;

	(void)state;
	a = (struct cp_issue){ .type = CP_ISSUE_FALSE_SHARING, .tgid = TGID };
	b = a;
	cp_issue_add_object(&a, &(struct cp_issue_object){ .kind = CP_OBJ_MAPPING, .size = 4096,
							   .nr_objects = 1, .name = "/dev/shm/a" },
			    1);
	cp_issue_add_object(&b, &(struct cp_issue_object){ .kind = CP_OBJ_MAPPING, .size = 4096,
							   .nr_objects = 1, .name = "/dev/shm/b" },
			    1);
	assert_false(cp_issue_related(&a, &b));
	snprintf(b.objects[0].name, sizeof(b.objects[0].name), "/dev/shm/a");
	assert_true(cp_issue_related(&a, &b));
}

/*
 * Two threads of one process (200) on a shared file's line, no other
 * process: false sharing of that process, said of threads, the file still
 * the object (a review found a lender process named that never touched
 * the line when lines were kept in the first mapping process's addresses).
 */
static void test_soft_threads_on_a_shared_file(void **state)
{
	struct fixture *f = shm_new();
	const struct cp_issue *is;
	__u32 pids[CP_ISSUE_MAX_PIDS];

	(void)state;
	for (int e = 0; e < 10; e++) {
		f->now_ns = (__u64)e * CP_SHARE_EPOCH_NS + 1;
		for (__u32 t = 0; t < 2; t++) {
			counts_in(f, PEER_TGID, IP(40), 0, 0, 20, 0);
			misses_in(f, PEER_TGID, CP_SPACE_FILE_FIRST, 201 + t, IP(40), 0x80 + 8 * t,
				  8, true, 20);
		}
	}
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(is->tgid, PEER_TGID);
	assert_int_equal(cp_issue_pids(is, pids), 1);
	assert_int_equal(pids[0], PEER_TGID);
	expect_text(f, "(process 200)");
	expect_text(f, "Threads write different bytes of one 64-byte line: pad or align the "
		    "object (4096 bytes)");
	expect_text(f, "Offsets in the 4096-byte object: thread 201 wrote 128-135; thread 202 "
		    "wrote 136-143.");
	fixture_free(f);
}

/* Without a time total the sampled accesses are the time samples. */
static void test_soft_time_total_defaults_to_accesses(void **state)
{
	struct fixture *f = soft_new(0);

	(void)state;
	two_threads(f, IP(75), 0x20000, IP(75), 0x20020, 5, 10);
	assert_true(classify_one(f)->score > 0.999);
	assert_int_equal(f->out.time_samples, 100);
	fixture_free(f);
}

/* true_sharing.c: both threads read and write the global cp_hits in every epoch. */
static void test_soft_true_sharing(void **state)
{
	struct fixture *f = soft_new(2000);
	const struct cp_issue *is;

	(void)state;
	object(f, (struct test_obj){ CP_OBJ_GLOBAL, 0x30000, 8, 0, 0, 0, "cp_hits" });
	/* each epoch: each thread loads (line 20) and stores (line 21) the counter */
	for (int k = 0; k < 20; k++) {
		f->now_ns = (__u64)(k / 4) * CP_SHARE_EPOCH_NS;
		ticks(f, 101 + k % 2, IP(20 + k / 2 % 2), 0x30000, 8, k / 2 % 2, 10);
	}
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_TRUE_SHARING);
	assert_string_equal(is->objects[0].name, "cp_hits");
	/* 200 ticks on the line of 2000 */
	assert_true(is->score > 0.099 && is->score < 0.101);
	fixture_free(f);
}

/* A 192-byte object at 0x10000: the total at its start, thread t's counter (t + 1) * @stride on. */
static void mixed_ticks(struct fixture *f, __u64 stride)
{
	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x10000, 192, 1, 100, 129, NULL });
	for (int e = 0; e < 10; e++) {
		f->now_ns = (__u64)e * CP_SHARE_EPOCH_NS + 1;
		for (__u32 t = 0; t < 2; t++) {
			ticks(f, 101 + t, IP(71), 0x10000 + stride * (t + 1), 8, true, 15);
			ticks(f, 101 + t, IP(72), 0x10000, 8, true, 5);
		}
	}
}

/*
 * false_sharing.c --mixed: in every epoch each thread writes a counter of
 * its own (line 71: thread 101 at bytes 8-15, thread 102 at 16-23) 15
 * times and a total at 0-7 both write (line 72) 5 times, in one 192-byte
 * heap object. 10 epochs: 300 ticks on the own counters, 100 on the total,
 * of 1000. CachePerf's rule would call the whole line true sharing (400
 * ticks); the false part, which padding fixes, is reported too: false
 * sharing at line 71 (30 %), true sharing at line 72 (10 %), each with its
 * own bytes and the other's bytes named in its hint.
 */
static void test_soft_mixed_line(void **state)
{
	struct fixture *f = soft_new(1000);
	const struct cp_issue *fs, *ts;

	(void)state;
	mixed_ticks(f, 8);
	classify(f);
	assert_int_equal(f->out.nr_issues, 2);
	fs = &f->out.issues[0];
	ts = &f->out.issues[1];
	assert_int_equal(fs->type, CP_ISSUE_FALSE_SHARING);
	assert_int_equal(fs->origin, CP_ORIGIN_APPLICATION);
	assert_true(fs->score > 0.299 && fs->score < 0.301);
	assert_int_equal(fs->nr_insns, 1);
	assert_int_equal(fs->insns[0].loc.line, 71);
	assert_int_equal(fs->sharing.nr_threads, 2);
	assert_int_equal(fs->sharing.thr[0].write_mask, 0xff00ull);
	assert_int_equal(fs->sharing.thr[0].accesses, 150);
	assert_int_equal(fs->sharing.thr[1].write_mask, 0xff0000ull);
	assert_int_equal(fs->sharing.other_part, 0xffull);
	assert_int_equal(ts->type, CP_ISSUE_TRUE_SHARING);
	assert_true(ts->score > 0.099 && ts->score < 0.101);
	assert_int_equal(ts->nr_insns, 1);
	assert_int_equal(ts->insns[0].loc.line, 72);
	assert_int_equal(ts->sharing.thr[0].write_mask, 0xffull);
	assert_int_equal(ts->sharing.thr[1].accesses, 50);
	assert_int_equal(ts->sharing.other_part, 0xffff00ull);
	expect_text(f, "Beside the bytes the threads share (offsets 0-7: true sharing, reported "
		    "apart)");
	expect_text(f, "thread 101 wrote 8-15; thread 102 wrote 16-23.");
	expect_text(f, "The line's other bytes (offsets 8-23) are false sharing, reported apart");
	expect_text(f, "thread 101 wrote 0-7; thread 102 wrote 0-7.");
	/* the padded twin: the total alone on its line, true sharing only */
	fixture_free(f);
	f = soft_new(1000);
	mixed_ticks(f, 64);
	ts = classify_one(f);
	assert_int_equal(ts->type, CP_ISSUE_TRUE_SHARING);
	assert_int_equal(ts->sharing.other_part, 0);
	fixture_free(f);
	/*
	 * the mixed line with 1 % of 40,000 time samples: neither part has 1 %
	 * (0.75 % and 0.25 %), so the line is one true-sharing issue, as
	 * before, not two suppressed parts
	 */
	f = soft_new(40000);
	mixed_ticks(f, 8);
	ts = classify_one(f);
	assert_int_equal(ts->type, CP_ISSUE_TRUE_SHARING);
	assert_int_equal(ts->samples, 400);
	assert_int_equal(ts->sharing.other_part, 0);
	assert_int_equal(ts->nr_insns, 2);
	assert_int_equal(f->out.suppressed, 0);
	fixture_free(f);
}

/*
 * Negative controls of sharing: thread 101 writes a line, thread 102 reads
 * it only 300 ms later (never in the same epoch): no sharing with soft,
 * while the PMU rule (misses of both threads on the line) calls it true
 * sharing. A line written by one thread only is nothing either way.
 */
static void test_soft_no_sharing(void **state)
{
	struct fixture *f = soft_new(1000);

	(void)state;
	f->now_ns = 1;
	ticks(f, 101, IP(40), 0x40000, 8, true, 100);
	f->now_ns = 3 * CP_SHARE_EPOCH_NS + 1;
	ticks(f, 102, IP(41), 0x40000, 8, false, 100);
	f->now_ns = 4 * CP_SHARE_EPOCH_NS + 1;
	ticks(f, 101, IP(42), 0x48000, 8, true, 100);
	ticks(f, 101, IP(43), 0x48008, 8, false, 100);
	classify(f);
	assert_int_equal(f->out.nr_issues, 0);
	/* the four hot instructions have no history: not issues, counted */
	assert_int_equal(f->out.unproven, 4);
	assert_int_equal(f->out.unproven_no_history, 4);
	expect_text(f, "4 hot memory instructions not reported");
	/* with a PMU's rule: true sharing on 0x40000, and pending 0x48000's instructions */
	f->in.soft = false;
	classify(f);
	assert_int_equal(f->out.nr_issues, 3);
	assert_int_equal(f->out.issues[0].type, CP_ISSUE_TRUE_SHARING);
	assert_int_equal(f->out.issues[0].sharing.line_addr, 0x40000);
	fixture_free(f);
}

/* A handful of concurrent ticks is not enough: below CP_SHARE_MIN_CONCURRENT, no sharing. */
static void test_soft_sharing_needs_concurrent_ticks(void **state)
{
	struct fixture *f = soft_new(100);

	(void)state;
	f->cfg.min_miss_ppm = 1000000;	/* keep the instructions out of the way */
	ticks(f, 101, IP(40), 0x40000, 8, true, 50);
	/* thread 102's first tick meets 101's bytes: 1 .. CP_SHARE_MIN_CONCURRENT - 1 */
	ticks(f, 102, IP(41), 0x40008, 8, true, CP_SHARE_MIN_CONCURRENT - 1);
	classify(f);
	assert_int_equal(f->out.nr_issues, 0);
	ticks(f, 102, IP(41), 0x40008, 8, true, 1);
	assert_int_equal(classify_one(f)->type, CP_ISSUE_FALSE_SHARING);
	fixture_free(f);
}

/* A history of @n addresses from @start, @stride apart, with @ticks ticks on each. */
static void walk(struct fixture *f, __u64 ip, __u64 start, __s64 stride, int n, int each)
{
	for (int i = 0; i < n; i++) {
		__u64 a = start + (__u64)((__s64)i * stride);

		history(f, ip, a);
		ticks(f, 100, ip, a, 8, false, each);
	}
}

/* conflict.c: a column walk 4096 bytes apart; the history decides as with a PMU. */
static void test_soft_conflict(void **state)
{
	struct fixture *f = soft_new(1000);
	const struct cp_issue *is;

	(void)state;
	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x100000, 192 * 4096, 3, 100, 57, NULL });
	walk(f, IP(40), 0x100000, 4096, 64, 5);
	is = classify_one(f);
	assert_int_equal(is->type, CP_ISSUE_CONFLICT);
	assert_int_equal(is->origin, CP_ORIGIN_APPLICATION);
	assert_int_equal(is->objects[0].alloc_stack[0].line, 57);
	/* 320 ticks of 1000 */
	assert_true(is->score > 0.319 && is->score < 0.321);
	fixture_free(f);
}

/*
 * stream.c: a sequential walk over a heap array. 8 MiB > L2 (1 MiB):
 * capacity of L2; 64 MiB > LLC (32 MiB): of LLC; 256 KiB (fits L2) and the
 * friendly 16 KiB: nothing, the instruction counted as unproven.
 */
static void test_soft_capacity_needs_a_stream_larger_than_l2(void **state)
{
	struct { __u64 bytes; bool issue; enum cp_cache_slot level; } cases[] = {
		{ 8 * MIB, true, CP_CACHE_L2 },
		{ 64 * MIB, true, CP_CACHE_LLC },
		{ 256 * KIB, false, 0 },
		{ 16 * KIB, false, 0 },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fixture *f = soft_new(1000);

		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x10000000, cases[c].bytes, 5, 100, 66,
					     NULL });
		walk(f, IP(55), 0x10000000, 8, 64, 2);
		classify(f);
		if (!cases[c].issue) {
			assert_int_equal(f->out.nr_issues, 0);
			assert_int_equal(f->out.unproven, 1);
			assert_int_equal(f->out.unproven_no_history, 0);
			fixture_free(f);
			continue;
		}
		assert_int_equal(f->out.nr_issues, 1);
		assert_int_equal(f->out.issues[0].type, CP_ISSUE_CAPACITY);
		assert_int_equal(f->out.issues[0].capacity.level, cases[c].level);
		assert_int_equal(f->out.issues[0].capacity.stride, 8);
		assert_int_equal(f->out.issues[0].capacity.footprint, cases[c].bytes);
		assert_int_equal(f->out.issues[0].objects[0].alloc_stack[0].line, 66);
		expect_text(f, "a stream with a stride of 8 bytes");
		expect_text(f, "Impact: 12.8 % of time samples");	/* 128 ticks of 1000 */
		fixture_free(f);
	}
}

/*
 * The padded column walk (stride 4160, an odd number of lines) over a
 * 780 KiB matrix: a constant stride but one line per row, so a pass over a
 * column touches 192 lines (12 KiB): no capacity, no conflict. A matrix of
 * 64 MiB at that stride touches 1 MiB a pass: still not more than L2.
 */
static void test_soft_strided_walk_counts_lines(void **state)
{
	__u64 sizes[] = { 192 * 4160, 16128 * 4160 };

	(void)state;
	for (size_t c = 0; c < 2; c++) {
		struct fixture *f = soft_new(1000);

		object(f, (struct test_obj){ CP_OBJ_HEAP, 0x1000000, sizes[c], 3, 100, 57, NULL });
		walk(f, IP(40), 0x1000000, 4160, 64, 5);
		classify(f);
		assert_int_equal(f->out.nr_issues, 0);
		assert_int_equal(f->out.unproven, 1);
		fixture_free(f);
	}
}

/* No object known: the distinct lines sampled stand for the footprint (a lower bound). */
static void test_soft_capacity_from_sampled_lines(void **state)
{
	struct fixture *f = soft_new(40000);

	(void)state;
	/* 20000 lines sampled once each: 1.22 MiB > L2, after a 64-step history at 8 bytes */
	walk(f, IP(55), 0x10000000, 8, 64, 1);
	for (__u64 i = 8; i < 20000; i++)
		ticks(f, 100, IP(55), 0x10000000 + i * 64, 8, false, 1);
	assert_int_equal(classify_one(f)->type, CP_ISSUE_CAPACITY);
	assert_int_equal(f->out.issues[0].capacity.object_bytes, 0);
	assert_int_equal(f->out.issues[0].capacity.sampled_lines, 20000);
	assert_int_equal(f->out.issues[0].capacity.level, CP_CACHE_L2);
	fixture_free(f);
}

/*
 * The friendly control: one thread summing a 16 KiB array, 90 % of the
 * time on the load; and a history that is no stream (addresses jumping
 * about a small object). Nothing reported.
 */
static void test_soft_friendly_reports_nothing(void **state)
{
	struct fixture *f = soft_new(1000);

	(void)state;
	object(f, (struct test_obj){ CP_OBJ_HEAP, 0x50000, 16 * KIB, 9, 100, 80, NULL });
	walk(f, IP(90), 0x50000, 8, 64, 14);
	for (__u64 i = 0; i < 64; i++)
		history(f, IP(91), 0x50000 + (i * 7919 % 2048) * 8);
	ticks(f, 100, IP(91), 0x50000, 8, false, 10);
	classify(f);
	assert_int_equal(f->out.nr_issues, 0);
	assert_int_equal(f->out.unproven, 2);
	expect_text(f, "none: no line or instruction with 1.00 % of the time samples");
	fixture_free(f);
}

/*
 * The ratio filters take time shares: 9 ticks of a conflicting walk are
 * 0.9 % of 1000 time samples (minor, suppressed) though they are all the
 * sampled accesses; 10 ticks are 1 %.
 */
static void test_soft_time_share_filter(void **state)
{
	(void)state;
	for (int n = 9; n <= 10; n++) {
		struct fixture *f = soft_new(1000);

		for (__u64 i = 0; i < 64; i++)
			history(f, IP(40), 0x100000 + i * 4096);
		ticks(f, 100, IP(40), 0x100000, 8, false, n);
		classify(f);
		assert_int_equal(f->out.nr_issues, n == 10);
		assert_int_equal(f->out.suppressed, n == 9);
		fixture_free(f);
	}
}

/* No history yet: a PMU would say "pending"; soft reports nothing and counts it. */
static void test_soft_no_history_is_no_issue(void **state)
{
	struct fixture *f = soft_new(100);

	(void)state;
	ticks(f, 100, IP(40), 0x100000, 8, false, 50);
	classify(f);
	assert_int_equal(f->out.nr_issues, 0);
	assert_int_equal(f->out.unproven_no_history, 1);
	f->in.soft = false;
	assert_int_equal(classify_one(f)->type, CP_ISSUE_CAPACITY_OR_CONFLICT);
	fixture_free(f);
}

/* Streams in histories: one stride, a restart, noise, too short, backwards, a ring. */
static void test_history_stream(void **state)
{
	struct cp_insn_history h;
	__s64 stride = 0;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (__u32 i = 0; i < 64; i++)
		h.addrs[h.len++] = 0x1000 + (i % 40) * 16;	/* restarts once at 40 */
	h.seen = h.len;
	assert_true(cp_history_stream(&h, &stride));
	assert_int_equal(stride, 16);
	for (__u32 i = 0; i < 64; i++)
		h.addrs[i] = 0x900000 - i * 64;
	assert_true(cp_history_stream(&h, &stride));
	assert_int_equal(stride, -64);
	/* a ring that wrapped: oldest at next = 10, the steps still 8 */
	for (__u32 i = 0; i < 64; i++)
		h.addrs[(10 + i) % 64] = 0x2000 + i * 8;
	h.next = 10;
	h.seen = 200;
	assert_true(cp_history_stream(&h, &stride));
	assert_int_equal(stride, 8);
	for (__u32 i = 0; i < 64; i++)
		h.addrs[i] = 0x1000 + (i * 7919 % 509) * 8;
	assert_false(cp_history_stream(&h, &stride));
	for (__u32 i = 0; i < 64; i++)
		h.addrs[i] = 0x1000;		/* one address: stride 0 is no stream */
	assert_false(cp_history_stream(&h, &stride));
	h.len = CP_STREAM_MIN_HISTORY - 1;
	h.seen = h.len;
	h.next = 0;
	for (__u32 i = 0; i < h.len; i++)
		h.addrs[i] = 0x1000 + i * 8;
	assert_false(cp_history_stream(&h, &stride));
	assert_false(cp_history_stream(NULL, &stride));
	/* footprints: a pass over the object, one line per step beyond a line */
	assert_int_equal(cp_stream_footprint(8, MIB, 0, 64), MIB);
	assert_int_equal(cp_stream_footprint(-4160, 4160 * 192, 0, 64), 192 * 64);
	assert_int_equal(cp_stream_footprint(8, 0, 100, 64), 6400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soft_false_sharing),
		cmocka_unit_test(test_soft_false_sharing_between_processes),
		cmocka_unit_test(test_soft_threads_on_a_shared_file),
		cmocka_unit_test(test_shared_files_are_objects_apart),
		cmocka_unit_test(test_soft_mixed_line_between_processes),
		cmocka_unit_test(test_soft_time_total_defaults_to_accesses),
		cmocka_unit_test(test_soft_true_sharing),
		cmocka_unit_test(test_soft_mixed_line),
		cmocka_unit_test(test_soft_no_sharing),
		cmocka_unit_test(test_soft_sharing_needs_concurrent_ticks),
		cmocka_unit_test(test_soft_conflict),
		cmocka_unit_test(test_soft_capacity_needs_a_stream_larger_than_l2),
		cmocka_unit_test(test_soft_strided_walk_counts_lines),
		cmocka_unit_test(test_soft_capacity_from_sampled_lines),
		cmocka_unit_test(test_soft_friendly_reports_nothing),
		cmocka_unit_test(test_soft_time_share_filter),
		cmocka_unit_test(test_soft_no_history_is_no_issue),
		cmocka_unit_test(test_history_stream),
	};

	return cmocka_run_group_tests_name("classify_soft", tests, NULL, NULL);
}
