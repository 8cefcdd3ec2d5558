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

#include "require_root.h"
#include "workload_pipe.h"

#include "cacheperf/abi.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf.skel.h"
#include "bp_arm.h"
#include "decode_cache.h"
#include "drain.h"
#include "perf_events.h"
#include "pmu_attr.h"

#define LINE_BYTES	64
#define SETS		64
#define MAX_ACCESSES	64
#define MAX_DONE	8

struct walk_seen {
	__u64 addr[MAX_ACCESSES];
	__u32 tid[MAX_ACCESSES];
	int n;
};

struct done_seen {
	struct cp_bp_event ev[MAX_DONE];
	int n;
};

struct fixture {
	pid_t pid;
	int in;
	FILE *out;
	__u64 label[5];			/* col, pad, seq, tls, rip */
	struct cacheperf *skel;
	struct cp_drain *drain;
	struct done_seen done;
	struct cp_maps *maps;
	struct cp_decode_cache *decoded;
};

static const char *const labels[] = { "col", "pad", "seq", "tls", "rip" };

static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct done_seen *d = ctx;

	if (type == CP_REC_BP && size >= sizeof(struct cp_bp_event) && d->n < MAX_DONE)
		memcpy(&d->ev[d->n++], data, sizeof(struct cp_bp_event));
	return 0;
}

static int on_sample(const struct cp_sample *s, void *ctx)
{
	(void)s;
	(void)ctx;
	return 0;
}

static int setup(void **state)
{
	char path[512], line[256], name[16];
	char *argv[2] = { path, NULL };
	struct cp_drain_ops ops = { .sample = on_sample, .record = on_record };
	struct fixture *f;
	unsigned long long addr;

	if (geteuid() != 0) {
		*state = NULL;
		return 0;
	}
	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(path, sizeof(path), "%s/tests/workloads/bp_walks",
		 getenv("CP_BUILD") ? getenv("CP_BUILD") : "build");
	assert_int_equal(cp_wl_pipe_start(argv, &f->pid, &f->in, &f->out), 0);
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_true(strncmp(line, "ready ", 6) == 0);
	for (int i = 0; i < 5; i++) {
		assert_non_null(fgets(line, sizeof(line), f->out));
		assert_int_equal(sscanf(line, "label %15s %llx", name, &addr), 2);
		assert_string_equal(name, labels[i]);
		f->label[i] = addr;
	}

	f->skel = cacheperf__open();
	assert_non_null(f->skel);
	assert_int_equal(bpf_program__set_autoload(f->skel->progs.on_breakpoint, true), 0);
	f->skel->rodata->targ_l1_line_bytes = LINE_BYTES;
	f->skel->rodata->targ_l1_sets = SETS;
	assert_int_equal(cacheperf__load(f->skel), 0);
	ops.ctx = &f->done;
	f->drain = drain__new(f->skel, &ops);
	assert_non_null(f->drain);
	assert_int_equal(cp_maps__read(NULL, f->pid, &f->maps), 0);
	f->decoded = cp_decode_cache__new(0);
	assert_non_null(f->decoded);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int status;

	if (!f)
		return 0;
	dprintf(f->in, "quit\n");
	close(f->in);
	waitpid(f->pid, &status, 0);
	fclose(f->out);
	drain__free(f->drain);
	cacheperf__destroy(f->skel);
	cp_maps__free(f->maps);
	cp_decode_cache__free(f->decoded);
	free(f);
	return 0;
}

/* Runs walk @cmd in the workload and collects what it says it loaded. */
static void run_walk(struct fixture *f, const char *cmd, struct walk_seen *w)
{
	char line[256], name[32], done[64];
	unsigned long long addr;
	unsigned int tid;

	memset(w, 0, sizeof(*w));
	dprintf(f->in, "%s\n", cmd);
	snprintf(done, sizeof(done), "done %s\n", cmd);
	while (fgets(line, sizeof(line), f->out) && strcmp(line, done)) {
		assert_int_equal(sscanf(line, "access %31s %u %llx", name, &tid, &addr), 3);
		assert_true(w->n < MAX_ACCESSES);
		w->addr[w->n] = addr;
		w->tid[w->n] = tid;
		w->n++;
	}
	assert_string_equal(line, done);
}

/*
 * Arms instruction @label_idx of the workload, runs @cmd, disarms, and
 * returns the entry as BPF left it in @v.
 */
static void watch(struct fixture *f, int label_idx, const char *cmd, struct walk_seen *w,
		  struct cp_bp_insn *v)
{
	int map_fd = bpf_map__fd(f->skel->maps.bp_insns);
	__u64 ip = f->label[label_idx];
	struct cp_perf_events *events;
	struct cp_event_spec spec;
	struct cp_operand op;
	char err[256] = "";
	int n;

	assert_int_equal(cp_decode_cache__get(f->decoded, f->pid, f->maps, ip, &op), 0);
	assert_int_equal(op.status, CP_OPND_OK);
	assert_int_equal(op.access, CP_OPND_READ);
	assert_int_equal(cp_bp_arm(map_fd, (__u32)f->pid, ip, &op), 0);
	events = cp_perf_events__new();
	assert_non_null(events);
	cp_breakpoint_spec(&spec, ip);
	n = cp_perf_events__open_threads(events, &spec, f->pid, f->skel->progs.on_breakpoint,
					 err, sizeof(err));
	if (n < 0)
		print_message("# %s\n", err);
	assert_true(n >= 1);

	run_walk(f, cmd, w);

	cp_perf_events__free(events);
	assert_true(drain__poll(f->drain, 0) >= 0);
	assert_int_equal(cp_bp_read(map_fd, (__u32)f->pid, ip, v), 0);
	assert_int_equal(cp_bp_disarm(map_fd, (__u32)f->pid, ip), 0);
	assert_int_equal(cp_bp_disarm(map_fd, (__u32)f->pid, ip), -ENOENT);
}

/* The history is the first @n accesses the workload reported, in order, by the loader. */
static void expect_history(const struct cp_bp_insn *v, const struct walk_seen *w, int n)
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
	assert_int_equal(f->done.ev[from].tgid, (__u32)f->pid);
	assert_int_equal(f->done.ev[from].ip, ip);
}

#define FIXTURE(state)				\
	({					\
		REQUIRE_ROOT();			\
		(struct fixture *)*(state);	\
	})

static void test_column_walk_settles_as_conflict(void **state)
{
	struct fixture *f = FIXTURE(state);
	struct cp_bp_insn v;
	struct walk_seen w;
	int before = f->done.n;
	__u32 set;

	watch(f, 0, "col", &w, &v);
	assert_int_equal(w.n, 64);
	/* rows 4096 bytes apart: every access on one set, each on a line of its own */
	set = (w.addr[0] / LINE_BYTES) % SETS;
	assert_int_equal(v.state, CP_BP_CONFLICT);
	expect_history(&v, &w, CP_BP_SETTLE_RUN);
	assert_int_equal(v.set_counts[set], CP_BP_SETTLE_RUN);
	/* hits after settling are counted, not recorded */
	assert_int_equal(v.late, 64 - CP_BP_SETTLE_RUN);
	expect_done(f, before, CP_BP_CONFLICT, f->label[0]);
	assert_int_equal(f->done.ev[before].set, set);
}

/* Walk @cmd through label @idx: 64 accesses, all recorded, full and not settled. */
static void expect_fills(struct fixture *f, int idx, const char *cmd, struct cp_bp_insn *v)
{
	struct walk_seen w;
	int before = f->done.n;

	watch(f, idx, cmd, &w, v);
	assert_int_equal(w.n, 64);
	assert_int_equal(v->state, CP_BP_FULL);
	expect_history(v, &w, 64);
	assert_int_equal(v->late, 0);
	expect_done(f, before, CP_BP_FULL, f->label[idx]);
}

static void test_padded_walk_fills_without_settling(void **state)
{
	struct fixture *f = FIXTURE(state);
	struct cp_bp_insn v;

	expect_fills(f, 1, "pad", &v);
	/* rows a line longer than 4096: 64 rows over 64 sets, one line each */
	for (int s = 0; s < SETS; s++)
		assert_int_equal(v.set_counts[s], 1);
}

/* 8 longs per line: 8 accesses in a row on one set, but one line, not a conflict */
static void test_sequential_walk_fills_without_settling(void **state)
{
	struct fixture *f = FIXTURE(state);
	struct cp_bp_insn v;

	expect_fills(f, 2, "seq", &v);
}

/* %fs:(,%rcx,8): the fs base comes from the task, the thread's own. */
static void test_tls_walk_uses_fs_base(void **state)
{
	struct fixture *f = FIXTURE(state);
	struct cp_bp_insn v;
	struct walk_seen w;
	int before = f->done.n;

	watch(f, 3, "tls", &w, &v);
	assert_int_equal(w.n, 8);
	assert_int_equal(v.state, CP_BP_ARMED);
	expect_history(&v, &w, 8);
	assert_int_equal(w.tid[0], f->pid);
	assert_int_equal(f->done.n, before);
}

/* A thread created after arming carries the event (inherit) and its own fs base. */
static void test_thread_created_after_arming(void **state)
{
	struct fixture *f = FIXTURE(state);
	struct cp_bp_insn v;
	struct walk_seen w;

	watch(f, 3, "tls-thread", &w, &v);
	assert_int_equal(w.n, 8);
	assert_int_not_equal(w.tid[0], f->pid);
	expect_history(&v, &w, 8);
}

static void test_rip_relative_walk(void **state)
{
	struct fixture *f = FIXTURE(state);
	struct cp_bp_insn v;
	struct walk_seen w;

	watch(f, 4, "rip", &w, &v);
	assert_int_equal(w.n, 8);
	/* one line eight times: not a conflict */
	assert_int_equal(v.state, CP_BP_ARMED);
	expect_history(&v, &w, 8);
}

/* Nothing was lost or miscounted across the walks. */
static void test_counters(void **state)
{
	struct fixture *f = FIXTURE(state);
	const struct cp_bp_stats *st = &f->skel->bss->bp_stats;

	assert_int_equal(st->not_armed, 0);
	assert_int_equal(st->uncomputable, 0);
	assert_int_equal(st->drop_ringbuf, 0);
	assert_int_equal(st->hits, st->recorded + st->late);
	assert_int_equal(drain__malformed(f->drain), 0);
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
