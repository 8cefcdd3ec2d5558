// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The breakpoint manager's decisions (paper §3.3): which instructions
 * qualify, in which order, how many may be armed per slot domain, what
 * ENOSPC and the hit budget do, and when a watched instruction is let go.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "breakpoints/bp_manager.h"

#define MS	1000000ull
#define T0	(5000 * MS)	/* an arbitrary start time */

static struct cp_bp_manager *mgr(bool per_cpu)
{
	struct cp_bp_manager_cfg cfg = { .expiry_ns = 100 * MS, .max_rate = 2000,
					  .per_cpu = per_cpu };
	struct cp_bp_manager *m = cp_bp_manager__new(&cfg);

	assert_non_null(m);
	cp_bp_manager__hits(m, 0, T0);
	return m;
}

/* @n consecutive misses of (@tgid, @ip) on @cpu, each on a set of its own. */
static void run_of(struct cp_bp_manager *m, __u32 tgid, __u64 ip, __u32 cpu, int n)
{
	for (int i = 0; i < n; i++)
		cp_bp_manager__note_miss(m, tgid, cpu, ip, (__u32)i, T0);
}

/* @n qualified candidates of process @tgid at 0x1000, 0x1001, ... */
static void candidates(struct cp_bp_manager *m, __u32 tgid, int n)
{
	for (int i = 0; i < n; i++)
		run_of(m, tgid, 0x1000 + (__u64)i, 0, CP_BPM_MIN_RUN);
}

/* Picks and arms successfully; returns the pick's ip, 0 when nothing is picked. */
static __u64 arm_next(struct cp_bp_manager *m, __u64 now)
{
	struct cp_bp_manager_pick p;

	if (!cp_bp_manager__next(m, NULL, NULL, now, &p))
		return 0;
	assert_false(cp_bp_manager__armed(m, &p, 0, now));
	return p.ip;
}

/*
 * Soft source (by_time): every sample is a tick on an access. An instruction
 * qualifies by its share of the ticks (1 %, at least CP_BPM_MIN_RUN of
 * them), interleaved with others, never in a run or a pile; without by_time
 * the same stream qualifies nothing. Ranking is by time samples.
 */
static struct cp_bp_manager_stats stats_of(const struct cp_bp_manager *m)
{
	struct cp_bp_manager_stats st;

	cp_bp_manager__stats(m, &st);
	return st;
}

static void test_by_time_qualifies_on_share(void **state)
{
	for (int by_time = 0; by_time <= 1; by_time++) {
		struct cp_bp_manager_cfg cfg = { .expiry_ns = 100 * MS, .max_rate = 2000,
					  .by_time = by_time };
		struct cp_bp_manager *m = cp_bp_manager__new(&cfg);
		struct cp_bp_manager_pick p;

		(void)state;
		assert_non_null(m);
		cp_bp_manager__hits(m, 0, T0);
		/* 400 ticks: 0x1000 every 80th (5 = 1.25 %), 0x2000 every 50th (8 = 2 %) */
		for (__u32 i = 0; i < 400; i++) {
			__u64 ip = i % 80 == 40 ? 0x1000 : i % 50 == 25 ? 0x2000 : 0x9000 + i;

			cp_bp_manager__note_miss(m, 10, 0, ip, i % 64, T0);
		}
		if (!by_time) {
			assert_false(cp_bp_manager__next(m, NULL, NULL, T0, &p));
			cp_bp_manager__free(m);
			continue;
		}
		assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
		assert_int_equal(p.ip, 0x2000);
		assert_int_equal(p.impact, 8);
		assert_false(cp_bp_manager__armed(m, &p, 0, T0));
		assert_int_equal(arm_next(m, T0), 0x1000);
		/* the 1-tick instructions are 0.25 % each: none qualifies */
		assert_int_equal(arm_next(m, T0), 0);
		/* 387 of them came: the cold ones made room for each other, nothing dropped */
		assert_int_equal(stats_of(m).dropped, 0);
		cp_bp_manager__free(m);
	}
}

static void test_bad_config(void **state)
{
	struct cp_bp_manager_cfg off = { .expiry_ns = 100 * MS, .max_rate = 0 };

	(void)state;
	assert_null(cp_bp_manager__new(&off));
}

/* CP_BPM_MIN_RUN consecutive misses qualify; fewer, or broken runs, do not. */
static void test_runs_of_misses_qualify(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_pick p;

	(void)state;
	run_of(m, 10, 0x1000, 0, CP_BPM_MIN_RUN - 1);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	/* another instruction in between restarts the run on that CPU */
	run_of(m, 10, 0x2000, 0, 1);
	run_of(m, 10, 0x1000, 0, CP_BPM_MIN_RUN - 1);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	/* ... but not a miss on another CPU */
	run_of(m, 10, 0x3000, 1, 1);
	run_of(m, 10, 0x1000, 0, 1);
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	assert_int_equal(p.tgid, 10);
	assert_int_equal(p.ip, 0x1000);
	cp_bp_manager__free(m);
}

/* Misses piling onto one set within the window qualify without any run. */
static void test_misses_on_one_set_qualify(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_pick p;

	(void)state;
	/* 8 misses on set 5, each followed by another instruction's: no run */
	for (int i = 0; i < CP_BPM_PILE; i++) {
		cp_bp_manager__note_miss(m, 10, 0, 0x1000, 5, T0 + (__u64)i * 10 * MS);
		cp_bp_manager__note_miss(m, 10, 0, 0x9000 + (__u64)i, (__u32)i,
					 T0 + (__u64)i * 10 * MS);
	}
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0 + 80 * MS, &p));
	assert_int_equal(p.ip, 0x1000);
	cp_bp_manager__free(m);

	/* the same misses 20 ms apart span more than the 100 ms window */
	m = mgr(false);
	for (int i = 0; i < CP_BPM_PILE; i++) {
		cp_bp_manager__note_miss(m, 10, 0, 0x1000, 5, T0 + (__u64)i * 20 * MS);
		cp_bp_manager__note_miss(m, 10, 0, 0x9000 + (__u64)i, (__u32)i,
					 T0 + (__u64)i * 20 * MS);
	}
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + 200 * MS, &p));
	cp_bp_manager__free(m);
}

/* Impact orders the candidates: the instruction store's sampled misses when it knows more. */
static void test_ranked_by_impact(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_insn_store *insns = cp_insn_store__new(16);
	struct cp_ip_key key = { .tgid = 10, .ip = 0x1000 };
	struct cp_ip_counts c = { .loads = 100, .load_misses = 50 };
	struct cp_bp_manager_pick p;

	(void)state;
	assert_non_null(insns);
	run_of(m, 10, 0x1000, 0, 4);
	run_of(m, 10, 0x2000, 0, 6);
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	assert_int_equal(p.ip, 0x2000);
	assert_int_equal(p.impact, 6);
	assert_int_equal(cp_insn_store__add(insns, &key, &c), 0);
	assert_true(cp_bp_manager__next(m, insns, NULL, T0, &p));
	assert_int_equal(p.ip, 0x1000);
	assert_int_equal(p.impact, 50);
	cp_insn_store__free(insns);
	cp_bp_manager__free(m);
}

/* Per-thread events: 4 slots per process. Per-CPU events: 4 for the machine. */
static void test_slots_per_domain(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_stats st;

	(void)state;
	candidates(m, 10, 6);
	candidates(m, 20, 1);
	for (int i = 0; i < 5; i++)
		assert_int_not_equal(arm_next(m, T0), 0);
	assert_int_equal(arm_next(m, T0), 0);
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.watching, 5);	/* 4 in process 10, 1 in process 20 */
	cp_bp_manager__free(m);

	m = mgr(true);
	candidates(m, 10, 3);
	candidates(m, 20, 3);
	for (int i = 0; i < 4; i++)
		assert_int_not_equal(arm_next(m, T0), 0);
	assert_int_equal(arm_next(m, T0), 0);
	cp_bp_manager__free(m);
}

/* ENOSPC: fewer slots for a second, counted, then the full count is tried again. */
static void test_enospc_retries_with_fewer_slots(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_pick p;
	struct cp_bp_manager_stats st;

	(void)state;
	candidates(m, 10, 4);
	assert_int_not_equal(arm_next(m, T0), 0);
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	assert_false(cp_bp_manager__armed(m, &p, -ENOSPC, T0));
	/* the domain now holds what it has: nothing more until the retry time */
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + 500 * MS, &p));
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.enospc, 1);
	assert_int_equal(st.watching, 1);
	assert_false(st.off);
	cp_bp_manager__hits(m, 0, T0 + CP_BPM_RETRY_NS);
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0 + CP_BPM_RETRY_NS, &p));
	cp_bp_manager__free(m);
}

/* Operands that cannot be computed are skipped; a machine without breakpoints stops it all. */
static void test_skipped_and_off(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_pick p;
	struct cp_bp_manager_stats st;

	(void)state;
	run_of(m, 10, 0x1000, 0, 5);
	run_of(m, 10, 0x2000, 0, 4);
	run_of(m, 10, 0x3000, 0, 3 + 1);
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	assert_int_equal(p.ip, 0x1000);
	assert_false(cp_bp_manager__armed(m, &p, -EINVAL, T0));
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	assert_int_not_equal(p.ip, 0x1000);
	assert_true(cp_bp_manager__armed(m, &p, -EOPNOTSUPP, T0));
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.skipped, 2);
	assert_true(st.off);
	cp_bp_manager__free(m);
}

/* When a watched instruction is let go, and why. */
static void test_check_reasons(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_view v = { .state = CP_BP_ARMED };
	__u64 ip;

	(void)state;
	run_of(m, 10, 0x1000, 0, 4);
	ip = arm_next(m, T0);
	assert_int_equal(ip, 0x1000);
	assert_int_equal(cp_bp_manager__check(m, 10, ip, &v, T0 + 99 * MS), CP_BPM_KEEP);
	/* never hit: idle one expiry time after arming */
	assert_int_equal(cp_bp_manager__check(m, 10, ip, &v, T0 + 100 * MS), CP_BPM_IDLE);
	/* hit 50 ms ago: kept */
	v.last_ns = T0 + 60 * MS;
	v.recorded = 3;
	assert_int_equal(cp_bp_manager__check(m, 10, ip, &v, T0 + 110 * MS), CP_BPM_KEEP);
	/* hit now and then, but armed for 10 expiry times */
	v.last_ns = T0 + 990 * MS;
	assert_int_equal(cp_bp_manager__check(m, 10, ip, &v, T0 + 1000 * MS), CP_BPM_LIFETIME);
	v.state = CP_BP_FULL;
	assert_int_equal(cp_bp_manager__check(m, 10, ip, &v, T0 + MS), CP_BPM_FULL);
	v.state = CP_BP_CONFLICT;
	assert_int_equal(cp_bp_manager__check(m, 10, ip, &v, T0 + MS), CP_BPM_SETTLED);
	cp_bp_manager__free(m);
}

/* A settled instruction is done; one that went idle before 8 accesses needs fresh misses. */
static void test_released_instructions(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_stats st;

	(void)state;
	run_of(m, 10, 0x1000, 0, 4);
	run_of(m, 10, 0x2000, 0, 4);
	assert_int_not_equal(arm_next(m, T0), 0);
	assert_int_not_equal(arm_next(m, T0), 0);
	cp_bp_manager__released(m, 10, 0x1000, CP_BPM_SETTLED, CP_BP_SETTLE_RUN, T0 + MS);
	cp_bp_manager__released(m, 10, 0x2000, CP_BPM_IDLE, 2, T0 + 100 * MS);
	assert_int_equal(arm_next(m, T0 + 200 * MS), 0);
	/* 0x2000 misses again in a run: armed again; 0x1000 never */
	run_of(m, 10, 0x1000, 0, 4);
	run_of(m, 10, 0x2000, 0, 4);
	assert_int_equal(arm_next(m, T0 + 200 * MS), 0x2000);
	assert_int_equal(arm_next(m, T0 + 200 * MS), 0);
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.released[CP_BPM_SETTLED], 1);
	assert_int_equal(st.released[CP_BPM_IDLE], 1);
	assert_int_equal(st.armed, 3);
	assert_int_equal(st.watching, 1);
	cp_bp_manager__free(m);
}

/* The budget: arming reserves a history; at the budget everything is let go until next second. */
static void test_hit_budget(void **state)
{
	struct cp_bp_manager_cfg cfg = { .expiry_ns = 100 * MS, .max_rate = 200 };
	struct cp_bp_manager *m = cp_bp_manager__new(&cfg);
	struct cp_bp_manager_view v = { .state = CP_BP_ARMED, .last_ns = T0 };
	struct cp_bp_manager_pick p;
	struct cp_bp_manager_stats st;

	(void)state;
	cp_bp_manager__hits(m, 1000, T0);
	candidates(m, 10, 4);
	/* 200 hits/s: three histories of 64 fit, a fourth does not */
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(arm_next(m, T0), 0);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	cp_bp_manager__hits(m, 1150, T0 + 10 * MS);
	assert_int_equal(cp_bp_manager__check(m, 10, 0x1000, &v, T0 + 10 * MS), CP_BPM_KEEP);
	cp_bp_manager__hits(m, 1200, T0 + 20 * MS);
	assert_int_equal(cp_bp_manager__check(m, 10, 0x1000, &v, T0 + 20 * MS), CP_BPM_BUDGET);
	cp_bp_manager__released(m, 10, 0x1000, CP_BPM_BUDGET, 20, T0 + 20 * MS);
	cp_bp_manager__released(m, 10, 0x1001, CP_BPM_BUDGET, 2, T0 + 20 * MS);
	cp_bp_manager__released(m, 10, 0x1002, CP_BPM_BUDGET, 0, T0 + 20 * MS);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + 30 * MS, &p));
	/* the next second: the two cut short come back, the one with 20 accesses is done */
	cp_bp_manager__hits(m, 1200, T0 + 1000 * MS);
	assert_int_not_equal(arm_next(m, T0 + 1000 * MS), 0);
	assert_int_not_equal(arm_next(m, T0 + 1000 * MS), 0);
	assert_int_not_equal(arm_next(m, T0 + 1000 * MS), 0);
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.over_budget, 1);
	assert_int_equal(st.released[CP_BPM_BUDGET], 3);
	assert_int_equal(st.watching, 3);	/* 0x1001, 0x1002 and 0x1003 */
	cp_bp_manager__free(m);
}

/*
 * Hits past the budget are owed: an instruction in a hot loop took 1000 hits
 * against 200/s before it was let go, so nothing is armed again until the
 * seconds after have paid for them (5 s), and the report counts each second
 * spent at the budget.
 */
static void test_hit_budget_debt(void **state)
{
	struct cp_bp_manager_cfg cfg = { .expiry_ns = 100 * MS, .max_rate = 200 };
	struct cp_bp_manager *m = cp_bp_manager__new(&cfg);
	struct cp_bp_manager_view v = { .state = CP_BP_ARMED, .last_ns = T0 };
	struct cp_bp_manager_pick p;
	struct cp_bp_manager_stats st;

	(void)state;
	cp_bp_manager__hits(m, 0, T0);
	candidates(m, 10, 2);
	assert_int_not_equal(arm_next(m, T0), 0);
	cp_bp_manager__hits(m, 1000, T0 + 50 * MS);
	assert_int_equal(cp_bp_manager__check(m, 10, 0x1000, &v, T0 + 50 * MS), CP_BPM_BUDGET);
	cp_bp_manager__released(m, 10, 0x1000, CP_BPM_BUDGET, 64, T0 + 50 * MS);
	/* 200 hits paid per second: 800 owed after the first, 0 after the fifth */
	for (int s = 1; s < 5; s++) {
		cp_bp_manager__hits(m, 1000, T0 + (__u64)s * 1000 * MS);
		assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + (__u64)s * 1000 * MS, &p));
	}
	cp_bp_manager__hits(m, 1000, T0 + 5000 * MS);
	assert_int_not_equal(arm_next(m, T0 + 5000 * MS), 0);
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.over_budget, 5);	/* the first second, and four that owed all theirs */
	cp_bp_manager__free(m);
}

/*
 * The overhead budget lowers the rate for a target that uses a fifth of a
 * CPU: 200/s becomes 40/s, under a history's 64, so only one arm fits a
 * second (a tiny budget still allows one); back at 200, three fit again.
 */
static void test_hit_budget_lowered(void **state)
{
	struct cp_bp_manager_cfg cfg = { .expiry_ns = 100 * MS, .max_rate = 200 };
	struct cp_bp_manager *m = cp_bp_manager__new(&cfg);
	struct cp_bp_manager_pick p;

	(void)state;
	cp_bp_manager__hits(m, 0, T0);
	candidates(m, 10, 4);
	cp_bp_manager__set_rate(m, 40);
	assert_int_not_equal(arm_next(m, T0), 0);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	cp_bp_manager__released(m, 10, 0x1000, CP_BPM_IDLE, 0, T0 + 200 * MS);
	cp_bp_manager__set_rate(m, 0);	/* ignored: the rate stays 40 */
	cp_bp_manager__hits(m, 30, T0 + 200 * MS);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + 200 * MS, &p));
	cp_bp_manager__set_rate(m, 200);
	cp_bp_manager__hits(m, 30, T0 + 1200 * MS);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(arm_next(m, T0 + 1200 * MS), 0);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + 1200 * MS, &p));
	cp_bp_manager__free(m);
}

/*
 * Soft source: a history let go with 8-15 accesses has settled no conflict
 * and is too short to show a stream (CP_STREAM_MIN_HISTORY): watched again,
 * not marked done. With the PMU, 8 accesses are enough to judge.
 */
static void test_released_short_soft_history(void **state)
{
	for (int by_time = 0; by_time <= 1; by_time++) {
		struct cp_bp_manager_cfg cfg = { .expiry_ns = 100 * MS, .max_rate = 2000,
						  .by_time = by_time };
		struct cp_bp_manager *m = cp_bp_manager__new(&cfg);

		(void)state;
		cp_bp_manager__hits(m, 0, T0);
		run_of(m, 10, 0x1000, 0, 4);
		assert_int_equal(arm_next(m, T0), 0x1000);
		cp_bp_manager__released(m, 10, 0x1000, CP_BPM_LIFETIME, 12, T0 + MS);
		run_of(m, 10, 0x1000, 0, 4);
		assert_int_equal(arm_next(m, T0 + 2 * MS), by_time ? 0x1000 : 0);
		cp_bp_manager__free(m);
	}
}

/* Bounded: candidates beyond the cap are counted; exit and staleness free room. */
static void test_bounded_forget_prune(void **state)
{
	struct cp_bp_manager *m = mgr(false);
	struct cp_bp_manager_pick p;
	struct cp_bp_manager_stats st;

	(void)state;
	for (int i = 0; i < CP_BPM_MAX_CANDIDATES + 10; i++)
		cp_bp_manager__note_miss(m, 10 + (__u32)(i & 1), 0, 0x1000 + (__u64)i, 0, T0);
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.dropped, 10);
	/* process 10's half is forgotten: room for new ones */
	cp_bp_manager__forget(m, 10);
	run_of(m, 30, 0x5000, 0, 4);
	assert_true(cp_bp_manager__next(m, NULL, NULL, T0, &p));
	assert_int_equal(p.tgid, 30);
	/* 10 s later everything untouched is gone */
	cp_bp_manager__prune(m, T0 + CP_BPM_STALE_NS);
	assert_false(cp_bp_manager__next(m, NULL, NULL, T0 + CP_BPM_STALE_NS, &p));
	cp_bp_manager__stats(m, &st);
	assert_int_equal(st.dropped, 10);
	cp_bp_manager__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_by_time_qualifies_on_share),
		cmocka_unit_test(test_runs_of_misses_qualify),
		cmocka_unit_test(test_misses_on_one_set_qualify),
		cmocka_unit_test(test_ranked_by_impact),
		cmocka_unit_test(test_slots_per_domain),
		cmocka_unit_test(test_enospc_retries_with_fewer_slots),
		cmocka_unit_test(test_skipped_and_off),
		cmocka_unit_test(test_check_reasons),
		cmocka_unit_test(test_released_instructions),
		cmocka_unit_test(test_hit_budget),
		cmocka_unit_test(test_hit_budget_debt),
		cmocka_unit_test(test_hit_budget_lowered),
		cmocka_unit_test(test_released_short_soft_history),
		cmocka_unit_test(test_bounded_forget_prune),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
