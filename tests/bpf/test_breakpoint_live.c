// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Breakpoint sampling end to end (root): tests/workloads/bp_walks loads
 * through labelled instructions and reports the addresses it loaded from.
 * Each walk's instruction is decoded from the running process, armed in
 * bp_insns, and watched by a HW_BREAKPOINT_X event per thread (inherit) with
 * on_breakpoint attached. The history must hold exactly the reported
 * addresses, in order, with the loading thread; the column walk (4096-byte
 * stride) must settle as a conflict after 8 accesses, the padded and
 * sequential walks must fill without settling.
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
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/bp_walks_client.h"
#include "lib/require_root.h"
#include "lib/require_breakpoints.h"

#include "cacheperf/abi.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf.skel.h"
#include "live/bp_arm.h"
#include "breakpoints/bp_report.h"
#include "decode/decode_cache.h"
#include "live/drain.h"
#include "live/perf_events.h"
#include "machine/pmu_attr.h"

#define LINE_BYTES	CP_BPW_LINE_BYTES
#define SETS		CP_BPW_SETS
#define MAX_DONE	8

struct done_seen {
	struct cp_bp_event ev[MAX_DONE];
	int n;
};

struct fixture {
	struct cp_bpw_rig rig;		/* the workload, its labelled loads, the BPF object */
	struct done_seen done;
	struct cp_maps *maps;
	struct cp_decode_cache *decoded;
};

/*
 * Accesses that settle the column walk: one line more than an 8-way L1 set
 * holds (cp_bp_settle_run()); 8 ways is BPF's default and this VM's L1D.
 */
#define SETTLE	cp_bp_settle_run(8)

static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct done_seen *d = ctx;

	if (type == CP_REC_BP && size >= sizeof(struct cp_bp_event) && d->n < MAX_DONE)
		memcpy(&d->ev[d->n++], data, sizeof(struct cp_bp_event));
	return 0;
}

static int setup(void **state)
{
	struct fixture *f;

	if (geteuid() != 0) {
		*state = NULL;
		return 0;
	}
	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	cp_bpw_rig_start(&f->rig, on_record, &f->done);
	assert_int_equal(cp_maps__read(NULL, f->rig.wl.pid, &f->maps), 0);
	f->decoded = cp_decode_cache__new(0);
	assert_non_null(f->decoded);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	cp_bpw_rig_stop(&f->rig);
	cp_maps__free(f->maps);
	cp_decode_cache__free(f->decoded);
	free(f);
	return 0;
}

/*
 * Arms instruction @label_idx of the workload, runs @cmd, disarms, and
 * returns the entry as BPF left it in @v.
 */
static void watch(struct fixture *f, int label_idx, const char *cmd, struct cp_bpw_walk *w,
		  struct cp_bp_insn *v)
{
	int map_fd = bpf_map__fd(f->rig.skel->maps.bp_insns);
	__u64 ip = f->rig.wl.label[label_idx];
	struct cp_perf_events *events;
	struct cp_event_spec spec;
	struct cp_operand op;
	char err[256] = "";
	int n;

	assert_int_equal(cp_decode_cache__get(f->decoded, f->rig.wl.pid, f->maps, ip, &op), 0);
	assert_int_equal(op.status, CP_OPND_OK);
	assert_int_equal(op.access, CP_OPND_READ);
	assert_int_equal(cp_bp_arm(map_fd, (__u32)f->rig.wl.pid, ip, &op), 0);
	events = cp_perf_events__new();
	assert_non_null(events);
	cp_breakpoint_spec(&spec, ip);
	n = cp_perf_events__open_threads(events, &spec, f->rig.wl.pid, f->rig.skel->progs.on_breakpoint,
					 err, sizeof(err));
	if (n < 0)
		print_message("# %s\n", err);
	assert_true(n >= 1);

	cp_bpw_run(&f->rig.wl, cmd, w);

	cp_perf_events__free(events);
	assert_true(cp_drain__poll(f->rig.drain, 0) >= 0);
	assert_int_equal(cp_bp_read(map_fd, (__u32)f->rig.wl.pid, ip, v), 0);
	assert_int_equal(cp_bp_disarm(map_fd, (__u32)f->rig.wl.pid, ip), 0);
	assert_int_equal(cp_bp_disarm(map_fd, (__u32)f->rig.wl.pid, ip), -ENOENT);
}

/* The history is the first @n accesses the workload reported, in order, by the loader. */
static void expect_history(const struct cp_bp_insn *v, const struct cp_bpw_walk *w, int n)
{
	struct cp_bp_access h[CP_BP_HISTORY];

	assert_int_equal(cp_bp_history(v, h), n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(h[i].addr, w->addr[i]);
		assert_int_equal(h[i].tid, w->tid[i]);
		assert_int_equal(h[i].set, (w->addr[i] / LINE_BYTES) % SETS);
		assert_true(h[i].time_ns > 0);
		if (i)
			assert_true(h[i].time_ns >= h[i - 1].time_ns);
	}
	assert_int_equal(v->uncomputable, 0);
}

static void expect_done(struct fixture *f, int from, __u32 kind, __u64 ip)
{
	assert_int_equal(f->done.n, from + 1);
	assert_int_equal(f->done.ev[from].kind, kind);
	assert_int_equal(f->done.ev[from].tgid, (__u32)f->rig.wl.pid);
	assert_int_equal(f->done.ev[from].ip, ip);
}

static void test_column_walk_settles_as_conflict(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	struct cp_bp_insn v;
	struct cp_bpw_walk w;
	int before = f->done.n;
	__u32 set;

	watch(f, 0, "col", &w, &v);
	assert_int_equal(w.n, 64);
	/* rows 4096 bytes apart: every access on one set, each on a line of its own */
	set = (w.addr[0] / LINE_BYTES) % SETS;
	assert_int_equal(v.state, CP_BP_CONFLICT);
	expect_history(&v, &w, SETTLE);
	assert_int_equal(v.set_counts[set], SETTLE);
	/* hits after settling are counted, not recorded */
	assert_int_equal(v.late, 64 - SETTLE);
	expect_done(f, before, CP_BP_CONFLICT, f->rig.wl.label[0]);
	assert_int_equal(f->done.ev[before].set, set);
}

/* Walk @cmd through label @idx: 64 accesses, all recorded, full and not settled. */
static void expect_fills(struct fixture *f, int idx, const char *cmd, struct cp_bp_insn *v)
{
	struct cp_bpw_walk w;
	int before = f->done.n;

	watch(f, idx, cmd, &w, v);
	assert_int_equal(w.n, 64);
	assert_int_equal(v->state, CP_BP_FULL);
	expect_history(v, &w, 64);
	assert_int_equal(v->late, 0);
	expect_done(f, before, CP_BP_FULL, f->rig.wl.label[idx]);
}

static void test_padded_walk_fills_without_settling(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	struct cp_bp_insn v;

	expect_fills(f, 1, "pad", &v);
	/* rows a line longer than 4096: 64 rows over 64 sets, one line each */
	for (int s = 0; s < SETS; s++)
		assert_int_equal(v.set_counts[s], 1);
}

/* 8 longs per line: 8 accesses in a row on one set, but one line, not a conflict */
static void test_sequential_walk_fills_without_settling(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	struct cp_bp_insn v;

	expect_fills(f, 2, "seq", &v);
}

/* %fs:(,%rcx,8): the fs base comes from the task, the thread's own. */
static void test_tls_walk_uses_fs_base(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	struct cp_bp_insn v;
	struct cp_bpw_walk w;
	int before = f->done.n;

	watch(f, 3, "tls", &w, &v);
	assert_int_equal(w.n, 8);
	assert_int_equal(v.state, CP_BP_ARMED);
	expect_history(&v, &w, 8);
	assert_int_equal(w.tid[0], f->rig.wl.pid);
	assert_int_equal(f->done.n, before);
}

/* A thread created after arming carries the event (inherit) and its own fs base. */
static void test_thread_created_after_arming(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	struct cp_bp_insn v;
	struct cp_bpw_walk w;

	watch(f, 3, "tls-thread", &w, &v);
	assert_int_equal(w.n, 8);
	assert_int_not_equal(w.tid[0], f->rig.wl.pid);
	expect_history(&v, &w, 8);
}

static void test_rip_relative_walk(void **state)
{
	struct fixture *f = BP_FIXTURE(struct fixture, state);
	struct cp_bp_insn v;
	struct cp_bpw_walk w;

	watch(f, 4, "rip", &w, &v);
	assert_int_equal(w.n, 8);
	/* one line eight times: not a conflict */
	assert_int_equal(v.state, CP_BP_ARMED);
	expect_history(&v, &w, 8);
}

/* Nothing was lost or miscounted across the walks. */
static void test_counters(void **state)
{
	struct fixture *f = ROOT_FIXTURE(struct fixture, state);
	const struct cp_bp_stats *st = &f->rig.skel->bss->bp_stats;

	assert_int_equal(st->not_armed, 0);
	assert_int_equal(st->uncomputable, 0);
	assert_int_equal(st->drop_ringbuf, 0);
	assert_int_equal(st->hits, st->recorded + st->late);
	assert_int_equal(cp_drain__malformed(f->rig.drain), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_column_walk_settles_as_conflict),
		cmocka_unit_test(test_padded_walk_fills_without_settling),
		cmocka_unit_test(test_sequential_walk_fills_without_settling),
		cmocka_unit_test(test_tls_walk_uses_fs_base),
		cmocka_unit_test(test_thread_created_after_arming),
		cmocka_unit_test(test_rip_relative_walk),
		cmocka_unit_test(test_counters),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
