// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The breakpoint manager live (root): a synthetic miss feed makes one
 * labelled load of tests/workloads/bp_walks a candidate; the sampler
 * (user/bp_sampler.*) arms it with real HW_BREAKPOINT_X events and
 * on_breakpoint, the workload runs the walk, and the CP_REC_BP record or
 * the expiry lets it go. What the user would see: the column walk
 * (4096-byte stride) settles as a conflict with the workload's own
 * addresses, the padded and sequential walks fill without settling, an
 * instruction that never runs expires, a thread created after arming is
 * watched, and another process holding every breakpoint slot of the target
 * costs an ENOSPC that is counted and retried, not the run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/bp_walks_client.h"
#include "lib/require_root.h"
#include "lib/require_breakpoints.h"

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/bp_arm.h"
#include "breakpoints/bp_report.h"
#include "live/bp_sampler.h"
#include "live/drain.h"
#include "machine/pmu_attr.h"

#define MS		1000000ull
#define EXPIRY_NS	(50 * MS)
#define MAX_SEEN	8

enum { COL = CP_BPW_COL, PAD = CP_BPW_PAD, SEQ = CP_BPW_SEQ, TLS = CP_BPW_TLS, RIP = CP_BPW_RIP };

struct history_seen {
	struct cp_bp_finding f;
	struct cp_bp_access h[CP_BP_HISTORY];
	size_t n;
};

struct fixture {
	struct cp_bpw_rig rig;		/* the workload, its labelled loads, the BPF object */
	struct cp_bp_sampler *bps;
	struct history_seen seen[MAX_SEEN];
	int nr_seen;
};

/*
 * Accesses that settle the column walk: one line more than an 8-way L1 set
 * holds (cp_bp_settle_run()); 8 ways is BPF's default and this VM's L1D.
 */
#define SETTLE	cp_bp_settle_run(8)

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static void on_history(void *ctx, const struct cp_bp_finding *f, const struct cp_bp_insn *h)
{
	struct fixture *fx = ctx;
	struct history_seen *s;

	if (fx->nr_seen == MAX_SEEN)
		return;
	s = &fx->seen[fx->nr_seen++];
	s->f = *f;
	s->n = cp_bp_history(h, s->h);
}

static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct fixture *fx = ctx;

	if (type == CP_REC_BP && size >= sizeof(struct cp_bp_event))
		cp_bp_sampler__on_event(fx->bps, data, NULL, NULL, now_ns());
	return 0;
}

/* A sampler that has seen nothing yet. */
static void new_sampler(struct fixture *f)
{
	struct cp_bp_sampler_cfg cfg = {
		.skel = f->rig.skel, .expiry_ns = EXPIRY_NS, .max_rate = 2000,
		.l1 = { .line_bytes = CP_BPW_LINE_BYTES, .sets = CP_BPW_SETS, .ways = 8 },
		.on_history = on_history, .ctx = f,
	};

	cp_bp_sampler__free(f->bps);
	f->bps = cp_bp_sampler__new(&cfg);
	assert_non_null(f->bps);
}

static int setup(void **state)
{
	struct fixture *f = NULL;

	/* without root every test skips (REQUIRE_ROOT) */
	if (geteuid() == 0) {
		f = calloc(1, sizeof(*f));
		assert_non_null(f);
		cp_bpw_rig_start(&f->rig, on_record, f);
		new_sampler(f);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	cp_bp_sampler__free(f->bps);
	cp_bpw_rig_stop(&f->rig);
	free(f);
	return 0;
}

static const struct cp_bp_manager_stats *stats(struct fixture *f)
{
	return &cp_bp_sampler__summary(f->bps)->stats;
}

/* A tick past the sampler's 10 ms tick gate. */
static void tick(struct fixture *f)
{
	usleep(11000);
	cp_bp_sampler__tick(f->bps, NULL, NULL, now_ns());
}

/* Makes label @idx a candidate (a run of misses on one CPU) and ticks: it is armed if it can be. */
static void feed_and_tick(struct fixture *f, int idx)
{
	for (int i = 0; i < CP_BPM_MIN_RUN; i++)
		cp_bp_sampler__note_miss(f->bps, (__u32)f->rig.wl.pid, 0, f->rig.wl.label[idx],
					 0x10000 + (__u64)i * 64, now_ns());
	tick(f);
}

/* The history delivered last: for label @idx, let go for @reason, with @n of @w's accesses. */
static const struct history_seen *expect_history(struct fixture *f, int before, int idx,
						 enum cp_bp_manager_reason reason,
						 const struct cp_bpw_walk *w, size_t n)
{
	const struct history_seen *s;

	assert_int_equal(f->nr_seen, before + 1);
	s = &f->seen[before];
	assert_int_equal(s->f.tgid, (__u32)f->rig.wl.pid);
	assert_int_equal(s->f.ip, f->rig.wl.label[idx]);
	assert_int_equal(s->f.reason, reason);
	assert_int_equal(s->f.accesses, n);
	assert_int_equal(s->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s->h[i].addr, w->addr[i]);
		assert_int_equal(s->h[i].tid, w->tid[i]);
	}
	return s;
}

/* The walk's CP_REC_BP record reaches user space and lets the instruction go at once. */
static void drain_done(struct fixture *f)
{
	for (int i = 0; i < 50 && stats(f)->watching; i++)
		assert_true(cp_drain__poll(f->rig.drain, 20) >= 0);
	assert_int_equal(stats(f)->watching, 0);
}

static void test_column_walk_settles_as_conflict(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	const struct history_seen *s;
	__u64 settled = stats(f)->released[CP_BPM_SETTLED];
	int before = f->nr_seen;
	struct cp_bpw_walk w;

	feed_and_tick(f, COL);
	assert_int_equal(stats(f)->watching, 1);
	cp_bpw_run(&f->rig.wl, "col", &w);
	drain_done(f);
	s = expect_history(f, before, COL, CP_BPM_SETTLED, &w, SETTLE);
	/* rows 4096 bytes apart: one set, a line each */
	assert_int_equal(s->f.top_set, (w.addr[0] / 64) % 64);
	assert_int_equal(s->f.top_set_accesses, SETTLE);
	assert_int_equal(s->f.top_set_lines, SETTLE);
	assert_int_equal(stats(f)->released[CP_BPM_SETTLED], settled + 1);
}

/* Padded rows (a new set each) and a sequential walk (one line 8 times) fill: no conflict. */
static void test_padded_and_sequential_walks_fill(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	static const int idx[2] = { PAD, SEQ };
	const struct history_seen *s;
	struct cp_bpw_walk w;

	for (int k = 0; k < 2; k++) {
		int before = f->nr_seen;

		feed_and_tick(f, idx[k]);
		assert_int_equal(stats(f)->watching, 1);
		cp_bpw_run(&f->rig.wl, cp_bpw_labels[idx[k]], &w);
		drain_done(f);
		s = expect_history(f, before, idx[k], CP_BPM_FULL, &w, CP_BP_HISTORY);
		/* padded: 64 rows on 64 sets; sequential: 8 longs a line, 8 lines */
		assert_int_equal(s->f.top_set_accesses, idx[k] == PAD ? 1 : 8);
		assert_int_equal(s->f.top_set_lines, 1);
		/* C2Sim: repeated, 64 lines on 64 sets or 8 lines fit L1: no conflict */
		assert_true(s->f.simulated);
		assert_int_equal(s->f.sim.conflict, 0);
	}
}

/* Armed but never run: let go after the expiry time, no history. */
static void test_idle_instruction_expires(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	__u64 idle = stats(f)->released[CP_BPM_IDLE];
	int before = f->nr_seen;

	feed_and_tick(f, RIP);
	assert_int_equal(stats(f)->watching, 1);
	tick(f);
	assert_int_equal(stats(f)->watching, 1);
	usleep(EXPIRY_NS / 1000);
	tick(f);
	assert_int_equal(stats(f)->watching, 0);
	assert_int_equal(stats(f)->released[CP_BPM_IDLE], idle + 1);
	assert_int_equal(f->nr_seen, before);
	/* nothing left in the BPF map */
	assert_int_equal(cp_bp_disarm(bpf_map__fd(f->rig.skel->maps.bp_insns), (__u32)f->rig.wl.pid,
				      f->rig.wl.label[RIP]), -ENOENT);
}

/* A thread created after arming carries the breakpoint (inherit); 8 accesses, then idle. */
static void test_thread_created_after_arming(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	const struct history_seen *s;
	int before = f->nr_seen;
	struct cp_bpw_walk w;

	feed_and_tick(f, TLS);
	assert_int_equal(stats(f)->watching, 1);
	cp_bpw_run(&f->rig.wl, "tls-thread", &w);
	assert_int_equal(w.n, 8);
	assert_int_not_equal(w.tid[0], f->rig.wl.pid);
	usleep(EXPIRY_NS / 1000);
	tick(f);
	assert_int_equal(stats(f)->watching, 0);
	s = expect_history(f, before, TLS, CP_BPM_IDLE, &w, 8);
	assert_int_not_equal(s->h[0].tid, (__u32)f->rig.wl.pid);
}

/*
 * A helper process holds the 4 debug registers of the target's thread
 * (disabled breakpoints reserve their slot all the same): arming fails with
 * ENOSPC, which is counted and retried; once the helper is gone, the retry
 * arms and the walk settles.
 */
static void test_slots_taken_by_another_process(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	int ready[2], hold[2], status, before;
	struct cp_bpw_walk w;
	__u64 enospc;
	char c;
	pid_t helper;

	/* the column walk settled before: a sampler that does not know it */
	new_sampler(f);
	enospc = stats(f)->enospc;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		close(ready[0]);
		close(hold[1]);
		for (int i = 0; i < 4; i++) {
			struct cp_event_spec spec;

			/* labels of walks this test does not run */
			cp_breakpoint_spec(&spec, f->rig.wl.label[i == 0 ? SEQ : i == 1 ? TLS : i == 2 ? RIP : PAD]);
			if (syscall(SYS_perf_event_open, &spec.attr, f->rig.wl.pid, -1, -1, 0) < 0)
				_exit(1);
		}
		c = 'r';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		/* hold the slots until the test closes the pipe */
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);

	feed_and_tick(f, COL);
	assert_int_equal(stats(f)->watching, 0);
	assert_int_equal(stats(f)->enospc, enospc + 1);
	assert_false(stats(f)->off);
	/* within the retry time nothing is tried again */
	tick(f);
	assert_int_equal(stats(f)->enospc, enospc + 1);

	close(hold[1]);
	assert_int_equal(waitpid(helper, &status, 0), helper);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	usleep(CP_BPM_RETRY_NS / 1000);
	tick(f);
	assert_int_equal(stats(f)->watching, 1);
	before = f->nr_seen;
	cp_bpw_run(&f->rig.wl, "col", &w);
	drain_done(f);
	expect_history(f, before, COL, CP_BPM_SETTLED, &w, SETTLE);
}

/* Every hit is accounted for: recorded, late (between settle and disarm), or not ours. */
static void test_counters(void **state)
{
	struct fixture *f = ROOT_FIXTURE(struct fixture, state);
	const struct cp_bp_stats *st = &f->rig.skel->bss->bp_stats;

	assert_int_equal(st->uncomputable, 0);
	assert_int_equal(st->drop_ringbuf, 0);
	assert_int_equal(st->hits, st->recorded + st->late + st->not_armed);
	assert_int_equal(stats(f)->skipped, 0);
	assert_int_equal(cp_drain__malformed(f->rig.drain), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_column_walk_settles_as_conflict),
		cmocka_unit_test(test_padded_and_sequential_walks_fill),
		cmocka_unit_test(test_idle_instruction_expires),
		cmocka_unit_test(test_thread_created_after_arming),
		cmocka_unit_test(test_slots_taken_by_another_process),
		cmocka_unit_test(test_counters),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
