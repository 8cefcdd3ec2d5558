// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Rolling summaries: what an interval added leaves the window once the
 * window has moved past it, the window of the epochs in the ring is their
 * sum (counts, sets, threads' bytes: sharing split over two intervals is
 * still sharing; soft sources' concurrent samples: the window judges
 * sharing as the run does), access histories come from the whole run, the BPF
 * counters are the window's growth, and memory stays within the fixed caps
 * however many intervals go by.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/bpf_stats.h"
#include "profile/rolling.h"

#define SEC	1000000000ull
#define LINE	0x10000000ull

static const struct cp_cache_level l1 = {
	.level = 1, .type = CP_CACHE_TYPE_DATA, .size_bytes = 32768, .ways = 8, .sets = 64,
	.line_bytes = 64, .valid = true,
};

static void add_insn(struct cp_rolling *r, __u64 ip, __u64 loads)
{
	struct cp_ip_key k = { .tgid = 7, .ip = ip };
	struct cp_ip_counts c = { .loads = loads, .load_misses = loads };

	assert_int_equal(cp_insn_store__add(cp_rolling__insns(r), &k, &c), 0);
}

static __u64 loads_of(const struct cp_roll_window *w, __u64 ip)
{
	struct cp_ip_key k = { .tgid = 7, .ip = ip };
	const struct cp_insn *in = cp_insn_store__find(w->insns, &k);

	return in ? in->counts.loads : 0;
}

/* A window's start (s), sampled loads (its instructions' sum), ring-buffer drops, loads of 0xa-0xc. */
struct want {
	__u64 start_s, samples, drops, loads[3];
};

static void expect_window(const struct cp_rolling *r, const struct cp_stats *now, struct want x)
{
	struct cp_roll_window w;

	assert_int_equal(cp_rolling__window(r, NULL, now, &w), 0);
	assert_int_equal(w.start_ns, x.start_s * SEC);
	assert_int_equal(w.bpf.samples[CP_ACCESS_LOAD], x.samples);
	assert_int_equal(w.bpf.drop_ringbuf, x.drops);
	for (__u64 i = 0; i < 3; i++)
		assert_int_equal(loads_of(&w, 0xa + i), x.loads[i]);
	cp_roll_window_free(&w);
}

static void test_old_intervals_age_out(void **state)
{
	struct cp_stats s = { 0 };
	struct cp_rolling *r = cp_rolling__new(&l1, 2, 100 * SEC, &s);

	(void)state;
	assert_non_null(r);
	add_insn(r, 0xa, 5);
	s.samples[CP_ACCESS_LOAD] = 5;
	cp_rolling__rotate(r, 101 * SEC, &s);
	add_insn(r, 0xb, 3);
	s.samples[CP_ACCESS_LOAD] = 8;
	cp_rolling__rotate(r, 102 * SEC, &s);
	add_insn(r, 0xc, 1);
	add_insn(r, 0xa, 2);
	s.samples[CP_ACCESS_LOAD] = 11;
	s.drop_ringbuf = 4;

	/* two closed intervals and the one filling: everything so far */
	expect_window(r, &s, (const struct want){ 100, 11, 4, { 7, 3, 1 } });
	/* one more interval: the first one (0xa's 5) is past the window */
	cp_rolling__rotate(r, 103 * SEC, &s);
	s.drop_ringbuf = 6;
	/* drops: the growth since the oldest epoch began, 6 - 0 at 101 s */
	expect_window(r, &s, (const struct want){ 101, 6, 6, { 2, 3, 1 } });
	/* two more: no instruction left; the window began at 103 s, with 4 drops */
	cp_rolling__rotate(r, 104 * SEC, &s);
	cp_rolling__rotate(r, 105 * SEC, &s);
	expect_window(r, &s, (const struct want){ 103, 0, 2, { 0, 0, 0 } });
	cp_rolling__free(r);
}

static void add_miss(struct cp_rolling *r, __u32 tid, __u64 addr, bool store)
{
	struct cp_mem_access a = { .tgid = 7, .tid = tid, .ip = 0x40, .addr = addr, .size = 4,
				   .store = store };
	struct cp_ip_key k = { .tgid = 7, .ip = 0x40 };

	assert_int_equal(cp_miss_store__add(cp_rolling__misses(r), &a), 0);
	assert_true(cp_insn_store__note_miss(cp_rolling__insns(r), &k, addr,
					     (__u32)(addr / 64 % 64)) >= 0);
}

/* --pprof-dir's interval: the epoch that closed last, alone, and its span. */
static void test_last_epoch(void **state)
{
	struct cp_stats s = { 0 };
	struct cp_rolling *r = cp_rolling__new(&l1, 2, 100 * SEC, &s);
	const struct cp_insn_store *last;
	struct cp_ip_key ka = { .tgid = 7, .ip = 0xa }, kb = { .tgid = 7, .ip = 0xb };
	__u64 start = 0, end = 0;

	(void)state;
	add_insn(r, 0xa, 5);
	/* nothing closed yet */
	assert_null(cp_rolling__last(r, &start, &end));
	cp_rolling__rotate(r, 101 * SEC, &s);
	add_insn(r, 0xb, 3);
	last = cp_rolling__last(r, &start, &end);
	assert_non_null(last);
	assert_int_equal(start, 100 * SEC);
	assert_int_equal(end, 101 * SEC);
	assert_int_equal(cp_insn_store__count(last), 1);
	assert_int_equal(cp_insn_store__find(last, &ka)->counts.loads, 5);
	/* the ring goes round: the last epoch is always the one before the filling one */
	for (int i = 2; i <= 4; i++)
		cp_rolling__rotate(r, (100 + (__u64)i) * SEC, &s);
	last = cp_rolling__last(r, &start, &end);
	assert_int_equal(start, 103 * SEC);
	assert_int_equal(end, 104 * SEC);
	assert_int_equal(cp_insn_store__count(last), 0);
	assert_null(cp_insn_store__find(last, &kb));
	cp_rolling__free(r);
}

static void test_window_merges_lines_and_sets(void **state)
{
	struct cp_stats s = { 0 };
	struct cp_rolling *r = cp_rolling__new(&l1, 3, 0, &s);
	struct cp_ip_key k = { .tgid = 7, .ip = 0x40 };
	const struct cp_line *line;
	const struct cp_insn *in;
	struct cp_roll_window w;

	(void)state;
	/* thread 1 writes bytes 0-3 in one interval, thread 2 bytes 8-11 in the next */
	add_miss(r, 1, LINE, true);
	cp_rolling__rotate(r, SEC, &s);
	add_miss(r, 2, LINE + 8, true);
	add_miss(r, 2, LINE + 64 * 64, false);	/* the same set, another line */
	assert_int_equal(cp_rolling__window(r, NULL, &s, &w), 0);
	line = cp_miss_store__find(w.misses, 7, LINE);
	assert_non_null(line);
	assert_int_equal(line->misses, 2);
	assert_int_equal(line->nr_threads, 2);
	assert_int_equal(cp_line_sharing(line), CP_SHARING_FALSE);
	assert_int_equal(line->ips[0].misses, 2);
	assert_int_equal(cp_miss_store__total(w.misses), 3);
	assert_int_equal(cp_miss_store__set_misses(w.misses, 0), 3);
	in = cp_insn_store__find(w.insns, &k);
	assert_non_null(in);
	assert_int_equal(in->fwd_misses, 3);
	assert_int_equal(in->nr_sets, 1);
	assert_int_equal(in->sets[0].misses, 3);
	assert_int_equal(in->nr_miss_addrs, 2);	/* two distinct lines */
	cp_roll_window_free(&w);
	cp_rolling__free(r);
}

/*
 * A window's stores are sized by what its epochs hold, not by the caps: three
 * epochs of 1000 lines and instructions each, none shared, come out whole
 * (3000 of each, nothing evicted or dropped), and an empty window is empty.
 */
static void test_window_holds_every_epoch_whole(void **state)
{
	struct cp_stats s = { 0 };
	struct cp_rolling *r = cp_rolling__new(&l1, 3, 0, &s);
	struct cp_miss_store_stats ms;
	struct cp_roll_window w;

	(void)state;
	assert_int_equal(cp_rolling__window(r, NULL, &s, &w), 0);
	assert_int_equal(cp_insn_store__count(w.insns), 0);
	cp_miss_store__stats(w.misses, &ms);
	assert_int_equal(ms.lines, 0);
	cp_roll_window_free(&w);
	for (__u64 e = 0; e < 3; e++) {
		for (__u64 i = 0; i < 1000; i++) {
			__u64 n = e * 1000 + i;
			struct cp_mem_access a = { .tgid = 7, .tid = 1, .ip = 0x1000 + n,
						   .addr = LINE + n * 64, .size = 4 };

			add_insn(r, 0x1000 + n, 1);
			assert_int_equal(cp_miss_store__add(cp_rolling__misses(r), &a), 0);
		}
		if (e < 2)
			cp_rolling__rotate(r, (e + 1) * SEC, &s);
	}
	assert_int_equal(cp_rolling__window(r, NULL, &s, &w), 0);
	assert_int_equal(cp_insn_store__count(w.insns), 3000);
	assert_int_equal(w.insns_dropped, 0);
	assert_int_equal(loads_of(&w, 0x1000), 1);
	assert_int_equal(loads_of(&w, 0x1000 + 2999), 1);
	cp_miss_store__stats(w.misses, &ms);
	assert_int_equal(ms.lines, 3000);
	assert_int_equal(ms.evicted, 0);
	assert_non_null(cp_miss_store__find(w.misses, 7, LINE + 2999 * 64));
	cp_roll_window_free(&w);
	cp_rolling__free(r);
}

/* A soft sample (a tick: every access, its time the sharing epoch) into the window and the run. */
static void tick(struct cp_rolling *r, struct cp_miss_store *whole, __u32 tid, __u64 addr,
		 bool store, __u64 time_ns)
{
	struct cp_mem_access a = { .tgid = 7, .tid = tid, .ip = 0x40, .addr = addr, .size = 8,
				   .store = store, .time_ns = time_ns };

	assert_int_equal(cp_miss_store__add(cp_rolling__misses(r), &a), 0);
	assert_int_equal(cp_miss_store__add(whole, &a), 0);
}

/* The window's line and the run's line of @addr judge sharing alike (soft: within epochs). */
static void expect_soft_sharing(const struct cp_roll_window *w, const struct cp_miss_store *whole,
				__u64 addr, enum cp_sharing want)
{
	const struct cp_line *wl = cp_miss_store__find(w->misses, 7, addr);
	const struct cp_line *rl = cp_miss_store__find(whole, 7, addr);

	assert_non_null(wl);
	assert_non_null(rl);
	assert_int_equal(wl->concurrent_true, rl->concurrent_true);
	assert_int_equal(wl->concurrent_false, rl->concurrent_false);
	assert_int_equal(cp_line_sharing_concurrent(rl), want);
	assert_int_equal(cp_line_sharing_concurrent(wl), want);
}

/*
 * Soft sources judge sharing by the samples that met another thread's
 * bytes within one epoch of 100 ms (miss_store.h): a window of several
 * intervals judges as the whole run does, with the concurrent samples
 * each interval counted, and a hand-over across intervals stays none.
 */
static void test_soft_sharing_through_the_window(void **state)
{
	const __u64 ms = 1000000, fs = LINE, ts = LINE + 64, handover = LINE + 128;
	struct cp_miss_store *whole = cp_miss_store__new(&l1, 0);
	struct cp_stats s = { 0 };
	struct cp_rolling *r = cp_rolling__new(&l1, 3, 0, &s);
	struct cp_roll_window w;

	(void)state;
	assert_non_null(whole);
	assert_non_null(r);
	tick(r, whole, 1, handover, true, 50 * ms);	/* written at start-up ... */
	for (__u64 i = 0; i < 2; i++) {
		for (__u64 e = 0; e < 3; e++) {
			__u64 t = i * SEC + e * CP_SHARE_EPOCH_NS;

			/* false: thread 1 writes bytes 0-7, thread 2 reads 8-15, same epoch */
			tick(r, whole, 1, fs, true, t);
			tick(r, whole, 2, fs + 8, false, t + ms);
			tick(r, whole, 2, fs + 8, false, t + 2 * ms);
			/* true: both write bytes 0-7 */
			tick(r, whole, 1, ts, true, t);
			tick(r, whole, 2, ts, true, t + ms);
			tick(r, whole, 2, ts, true, t + 2 * ms);
		}
		if (!i)
			cp_rolling__rotate(r, SEC, &s);
	}
	tick(r, whole, 2, handover, false, SEC + 500 * ms);	/* ... read a second later */
	assert_int_equal(cp_rolling__window(r, NULL, &s, &w), 0);
	expect_soft_sharing(&w, whole, fs, CP_SHARING_FALSE);
	expect_soft_sharing(&w, whole, ts, CP_SHARING_TRUE);
	expect_soft_sharing(&w, whole, handover, CP_SHARING_NONE);
	cp_roll_window_free(&w);
	cp_rolling__free(r);
	cp_miss_store__free(whole);
}

static void test_histories_from_the_whole_run(void **state)
{
	struct cp_stats s = { 0 };
	struct cp_rolling *r = cp_rolling__new(&l1, 1, 0, &s);
	struct cp_insn_store *whole = cp_insn_store__new(16);
	struct cp_ip_key k = { .tgid = 7, .ip = 0xa };
	const struct cp_insn_history *h;
	struct cp_roll_window w;

	(void)state;
	/* a full history that went round: the window's copy is oldest first */
	for (__u64 i = 0; i < CP_INSN_HISTORY + 3; i++)
		assert_int_equal(cp_insn_store__add_history(whole, &k, LINE + i * 64), 0);
	add_insn(r, 0xa, 1);
	add_insn(r, 0xb, 1);	/* no history anywhere */
	assert_int_equal(cp_rolling__window(r, whole, &s, &w), 0);
	h = cp_insn_store__history(w.insns, cp_insn_store__find(w.insns, &k));
	assert_non_null(h);
	assert_int_equal(h->len, CP_INSN_HISTORY);
	assert_int_equal(h->addrs[0], LINE + 3 * 64);
	assert_int_equal(h->addrs[CP_INSN_HISTORY - 1], LINE + (CP_INSN_HISTORY + 2) * 64);
	k.ip = 0xb;
	assert_null(cp_insn_store__history(w.insns, cp_insn_store__find(w.insns, &k)));
	cp_roll_window_free(&w);
	cp_insn_store__free(whole);
	cp_rolling__free(r);
}

static void test_bounded_however_long(void **state)
{
	struct cp_stats s = { 0 };
	unsigned int intervals = 6;
	struct cp_rolling *r = cp_rolling__new(&l1, intervals, 0, &s);
	size_t per_epoch = CP_ROLL_INSNS / (intervals + 1);
	struct cp_roll_window w;

	(void)state;
	/* an epoch takes its share of the instructions and counts the rest */
	for (__u64 ip = 0; ip < per_epoch + 10; ip++)
		cp_insn_store__add(cp_rolling__insns(r), &(struct cp_ip_key){ .tgid = 7, .ip = ip },
				   &(struct cp_ip_counts){ .loads = 1 });
	assert_int_equal(cp_insn_store__count(cp_rolling__insns(r)), per_epoch);
	assert_int_equal(cp_insn_store__dropped(cp_rolling__insns(r)), 10);
	/* a thousand intervals of new instructions: the window never holds more than the ring */
	for (__u64 t = 1; t <= 1000; t++) {
		cp_rolling__rotate(r, t * SEC, &s);
		for (__u64 i = 0; i < 100; i++)
			add_insn(r, t * 1000 + i, 1);
	}
	assert_int_equal(cp_rolling__window(r, NULL, &s, &w), 0);
	assert_int_equal(cp_insn_store__count(w.insns), (intervals + 1) * 100);
	assert_int_equal(loads_of(&w, 1000 * 1000), 1);
	assert_int_equal(loads_of(&w, (1000 - intervals - 1) * 1000), 0);
	cp_roll_window_free(&w);
	cp_rolling__free(r);
	/* more intervals in a window than the ring allows: refused */
	assert_null(cp_rolling__new(&l1, CP_ROLL_MAX_INTERVALS + 1, 0, &s));
	assert_null(cp_rolling__new(&l1, 0, 0, &s));
}

static void test_stats_delta(void **state)
{
	struct cp_stats now = { .forwarded = 10, .drop_proc = 3 }, then = { .forwarded = 4 }, d;

	(void)state;
	now.samples[CP_ACCESS_STORE] = 9;
	then.samples[CP_ACCESS_STORE] = 2;
	then.drop_window = 5;	/* a counter that went backwards (reset) is 0, not huge */
	cp_stats_delta(&now, &then, &d);
	assert_int_equal(d.forwarded, 6);
	assert_int_equal(d.drop_proc, 3);
	assert_int_equal(d.samples[CP_ACCESS_STORE], 7);
	assert_int_equal(d.drop_window, 0);
}

/*
 * A PMU whose samples carry no data source (a kernel older than the CPU:
 * PERF_MEM_NA on every PEBS sample) is said, once there are enough samples.
 */
static void test_pmu_blind(void **state)
{
	struct cp_stats b = { 0 };

	(void)state;
	/* PEBS: 990 of 1000 without a source (NA loads, or no op at all) */
	b.samples[CP_ACCESS_LOAD] = 600;
	b.na[CP_ACCESS_LOAD] = 590;
	b.not_mem = 400;
	assert_true(cp_stats_pmu_blind(&b, false));
	/* one more with a level: below 99 % */
	b.na[CP_ACCESS_LOAD] = 589;
	assert_false(cp_stats_pmu_blind(&b, false));
	/* too few samples to judge */
	b = (struct cp_stats){ .samples = { 500, 0 }, .na = { 500, 0 }, .not_mem = 499 };
	assert_false(cp_stats_pmu_blind(&b, false));
	/* IBS: other ops are normal; its loads and stores are judged */
	b = (struct cp_stats){ .samples = { 900, 100 }, .na = { 10, 0 }, .not_mem = 50000 };
	assert_false(cp_stats_pmu_blind(&b, true));
	b.na[CP_ACCESS_LOAD] = 900;
	b.na[CP_ACCESS_STORE] = 90;
	assert_true(cp_stats_pmu_blind(&b, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_intervals_age_out),
		cmocka_unit_test(test_last_epoch),
		cmocka_unit_test(test_window_merges_lines_and_sets),
		cmocka_unit_test(test_window_holds_every_epoch_whole),
		cmocka_unit_test(test_soft_sharing_through_the_window),
		cmocka_unit_test(test_histories_from_the_whole_run),
		cmocka_unit_test(test_bounded_however_long),
		cmocka_unit_test(test_stats_delta),
		cmocka_unit_test(test_pmu_blind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
