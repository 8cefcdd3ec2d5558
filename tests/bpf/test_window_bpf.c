// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory-sample pipeline in the kernel (root): both perf_event variants
 * must pass the verifier here, and the syscall program test_mem_sample runs
 * the very same inline code on synthetic samples, so every expectation below
 * is about the real maps, windows and ring buffer. Each expected record is
 * derived from the window rule in cacheperf/window.h, not copied from a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "live/mem_prog.h"
#include "lib/mem_pipeline.h"


/* data_src values as PEBS encodes them (arch/x86/events/intel/ds.c) */
#define OP_LH		(PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT))
#define DS_L1		(OP_LH | PERF_MEM_S(LVL, L1) | PERF_MEM_S(LVLNUM, L1))
#define DS_L3		(OP_LH | PERF_MEM_S(LVL, L3) | PERF_MEM_S(LVLNUM, L3))
#define DS_L3_HITM	(DS_L3 | PERF_MEM_S(SNOOP, HITM))
#define ST_OP		(PERF_MEM_S(OP, STORE) | PERF_MEM_S(LVL, L1))
#define DS_ST_HIT	(ST_OP | PERF_MEM_S(LVL, HIT))
#define DS_ST_MISS	(ST_OP | PERF_MEM_S(LVL, MISS))
/* a load whose level the PMU could not tell (IBS without DataSrc) */
#define DS_LOAD_NA	(PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(LVLNUM, NA))
#define DS_NA_KERNEL	0x1e05080021ULL

#define TGID		4242
#define IP_HIT		0x401000ULL
#define IP_MISS		0x402000ULL
#define MAX_RECS	256

struct knobs {
	__u32 window;
	__u32 ratio_ppm;
	bool forward_all;
	bool filter_tgid;
	__u32 self_tgid;
	__u32 ringbuf_bytes;	/* 0: default */
	__u32 max_ips;		/* 0: default */
};

struct env {
	struct cacheperf *skel;
	struct cp_drain *drain;
	struct cp_sample recs[MAX_RECS];
	unsigned int nrecs;
	__u64 next_time;
};

static int collect(const struct cp_sample *s, void *ctx)
{
	struct env *e = ctx;

	if (e->nrecs < MAX_RECS)
		e->recs[e->nrecs] = *s;
	e->nrecs++;
	return 0;
}

/* Opens, configures and loads the skeleton with the test program enabled. */
static struct env *env_new(const struct knobs *k)
{
	struct cp_record_ops ops = { .sample = collect };
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->skel = cacheperf__open();
	assert_non_null(e->skel);
	e->skel->rodata->targ_window_size = k->window;
	e->skel->rodata->targ_window_ratio_ppm = k->ratio_ppm;
	e->skel->rodata->targ_forward_all = k->forward_all;
	e->skel->rodata->targ_filter_tgid = k->filter_tgid;
	e->skel->rodata->targ_self_tgid = k->self_tgid;
	if (k->ringbuf_bytes)
		assert_int_equal(bpf_map__set_max_entries(e->skel->maps.events,
							  k->ringbuf_bytes), 0);
	if (k->max_ips)
		assert_int_equal(bpf_map__set_max_entries(e->skel->maps.ip_counts, k->max_ips), 0);
	cp_test_pipeline_load(e->skel, NULL);
	ops.ctx = e;
	e->drain = cp_drain__new(e->skel, &ops);
	assert_non_null(e->drain);
	return e;
}

static void env_free(struct env *e)
{
	cp_drain__free(e->drain);
	cacheperf__destroy(e->skel);
	free(e);
}

/* Runs one sample through test_mem_sample; returns the records it wrote. */
static int run(struct env *e, __u32 tgid, __u32 cpu, __u64 ip, __u64 addr, __u64 data_src,
	       __u64 weight)
{
	struct cp_mem_input s = {
		.tgid = tgid, .tid = tgid + 1, .cpu = cpu, .ip = ip, .addr = addr,
		.data_src = data_src, .weight = weight, .time_ns = ++e->next_time,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &s, .ctx_size_in = sizeof(s));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.test_mem_sample),
						&opts), 0);
	return (int)opts.retval;
}

static int hit(struct env *e, __u64 addr)
{
	return run(e, TGID, 0, IP_HIT, addr, DS_L1, 4);
}

static int miss(struct env *e, __u64 addr)
{
	return run(e, TGID, 0, IP_MISS, addr, DS_L3, 40);
}

/* Consumes the ring buffer; returns the records now collected in total. */
static unsigned int drain(struct env *e)
{
	assert_true(cp_drain__poll(e->drain, 0) >= 0);
	assert_int_equal(cp_drain__malformed(e->drain), 0);
	return e->nrecs;
}

static struct cp_stats stats(struct env *e)
{
	struct cp_stats st;

	cp_drain__stats(e->drain, &st);
	return st;
}

static void expect_addrs(struct env *e, unsigned int from, const __u64 *addrs, unsigned int n)
{
	assert_int_equal(e->nrecs, from + n);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(e->recs[from + i].addr, addrs[i]);
}

/* The verifier of this kernel must accept both variants and the test programs. */
static void test_both_variants_load(void **state)
{
	struct cacheperf *skel;
	int variant;

	(void)state;
	REQUIRE_ROOT();
	skel = cacheperf__open();
	assert_non_null(skel);
	variant = cp_mem_prog_select(skel);
	/* DESIGN.md: this kernel (6.18) has bpf_cast_to_kern_ctx */
	assert_int_equal(variant, CP_MEM_PROG_KFUNC);
	assert_int_equal(cp_mem_prog_size_windows(skel), 0);
	assert_int_equal(bpf_program__set_autoload(skel->progs.test_mem_sample, true), 0);
	assert_int_equal(bpf_program__set_autoload(skel->progs.bench_mem_sample, true), 0);
	assert_int_equal(cacheperf__load(skel), 0);
	assert_true(bpf_program__fd(skel->progs.on_mem_sample) >= 0);
	assert_true(bpf_program__fd(skel->progs.on_mem_sample_compat) < 0);
	assert_true(bpf_program__fd(cp_mem_prog(skel, CP_MEM_PROG_KFUNC)) >= 0);
	assert_int_equal(bpf_map__max_entries(skel->maps.windows),
			 CP_ACCESS_NR * libbpf_num_possible_cpus());
	/* after load the choice is fixed */
	assert_true(cp_mem_prog_select(skel) < 0);
	cacheperf__destroy(skel);

	skel = cacheperf__open();
	assert_non_null(skel);
	assert_int_equal(cp_mem_prog_force(skel, CP_MEM_PROG_COMPAT), 0);
	assert_int_equal(cacheperf__load(skel), 0);
	assert_true(bpf_program__fd(skel->progs.on_mem_sample_compat) >= 0);
	assert_true(bpf_program__fd(skel->progs.on_mem_sample) < 0);
	/* test programs are "?": not loaded unless asked for */
	assert_true(bpf_program__fd(skel->progs.test_mem_sample) < 0);
	cacheperf__destroy(skel);
}

/*
 * N = 8 at 25 %: forwarding needs misses * 10^6 > 250000 * 8, three misses
 * among the last eight loads of one CPU.
 */
static void test_window_threshold_sequence(void **state)
{
	struct knobs k = { .window = 8, .ratio_ppm = 250000 };
	struct cp_insn ips[4];
	struct cp_stats st;
	struct env *e;
	int n;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	/* M H H M: two misses, below the ratio, nothing leaves */
	assert_int_equal(miss(e, 0xa1), 0);
	assert_int_equal(hit(e, 0xb1), 0);
	assert_int_equal(hit(e, 0xb2), 0);
	assert_int_equal(miss(e, 0xa2), 0);
	assert_int_equal(drain(e), 0);
	/* the third miss crosses: all three, oldest first */
	assert_int_equal(miss(e, 0xa3), 3);
	drain(e);
	expect_addrs(e, 0, (const __u64[]){ 0xa1, 0xa2, 0xa3 }, 3);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(e->recs[i].type, CP_REC_SAMPLE);
		assert_int_equal(e->recs[i].flags, CP_SAMPLE_MISS);
		assert_int_equal(e->recs[i].ip, IP_MISS);
		assert_int_equal(e->recs[i].tgid, TGID);
		assert_int_equal(e->recs[i].tid, TGID + 1);
		assert_int_equal(e->recs[i].cpu, 0);
		assert_int_equal(e->recs[i].data_src, DS_L3);
		assert_int_equal(e->recs[i].weight, 40);
	}
	/* samples 1 and 4 and 5 had times 1, 4, 5 */
	assert_int_equal(e->recs[0].time_ns, 1);
	assert_int_equal(e->recs[1].time_ns, 4);
	assert_int_equal(e->recs[2].time_ns, 5);
	/* still above: the next miss goes alone */
	assert_int_equal(miss(e, 0xa4), 1);
	drain(e);
	expect_addrs(e, 3, (const __u64[]){ 0xa4 }, 1);
	/* eight hits flush the window; forwarded misses are not "filtered" */
	for (int i = 0; i < 8; i++)
		assert_int_equal(hit(e, 0xc0 + i), 0);
	/* a lone miss; it ages out at the eighth sample after it */
	assert_int_equal(miss(e, 0xa5), 0);
	for (int i = 0; i < 7; i++)
		hit(e, 0xd0 + i);
	assert_int_equal(stats(e).filtered, 0);
	hit(e, 0xd7);
	st = stats(e);
	assert_int_equal(st.filtered, 1);
	assert_int_equal(st.forwarded, 4);
	/* 5 misses + 2 + 8 + 8 hits, all loads */
	assert_int_equal(st.samples[CP_ACCESS_LOAD], 23);
	assert_int_equal(st.misses[CP_ACCESS_LOAD], 5);
	assert_int_equal(st.samples[CP_ACCESS_STORE], 0);
	assert_int_equal(st.drop_ringbuf + st.drop_ipmap + st.drop_window + st.not_target, 0);
	assert_int_equal(drain(e), 4);

	/* per-instruction counters: every sample, forwarded or not, then reset */
	n = cp_drain__ip_counts(e->drain, ips, 4);
	assert_int_equal(n, 2);
	if (ips[0].key.ip != IP_HIT) {
		struct cp_insn t = ips[0];

		ips[0] = ips[1];
		ips[1] = t;
	}
	assert_int_equal(ips[0].key.tgid, TGID);
	assert_int_equal(ips[0].key.ip, IP_HIT);
	assert_int_equal(ips[0].counts.loads, 18);
	assert_int_equal(ips[0].counts.load_misses, 0);
	assert_int_equal(ips[0].counts.lvl[CP_LVL_L1], 18);
	assert_int_equal(ips[0].counts.lat_sum, 18 * 4);
	assert_int_equal(ips[1].key.ip, IP_MISS);
	assert_int_equal(ips[1].counts.loads, 5);
	assert_int_equal(ips[1].counts.load_misses, 5);
	assert_int_equal(ips[1].counts.lvl[CP_LVL_L3], 5);
	assert_int_equal(ips[1].counts.lat_sum, 5 * 40);
	assert_int_equal(ips[1].counts.stores + ips[1].counts.hitm, 0);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 4), 0);
	/* counting resumes from zero */
	hit(e, 0xe0);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 4), 1);
	assert_int_equal(ips[0].counts.loads, 1);
	env_free(e);
}

/* Loads and stores, CPU 0 and CPU 1: four independent windows. */
static void test_windows_per_cpu_and_kind(void **state)
{
	struct knobs k = { .window = 8, .ratio_ppm = 250000 };
	int ncpus = libbpf_num_possible_cpus();
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	/* two load misses and one store miss on CPU 0: each window below 3 */
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x10, DS_L3, 0), 0);
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x11, DS_L3, 0), 0);
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x20, DS_ST_MISS, 0), 0);
	/* two more store misses: the store window crosses, store records only */
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x21, DS_ST_MISS, 0), 0);
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x22, DS_ST_MISS, 0), 3);
	drain(e);
	expect_addrs(e, 0, (const __u64[]){ 0x20, 0x21, 0x22 }, 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(e->recs[i].flags, CP_SAMPLE_STORE | CP_SAMPLE_MISS);
	/* a store that hit L1 is a store sample, not a miss */
	assert_int_equal(run(e, TGID, 0, IP_HIT, 0x23, DS_ST_HIT, 0), 0);
	if (ncpus >= 2) {
		/* CPU 1's load window is empty: two misses there do not add to CPU 0's */
		assert_int_equal(run(e, TGID, 1, IP_MISS, 0x30, DS_L3, 0), 0);
		assert_int_equal(run(e, TGID, 1, IP_MISS, 0x31, DS_L3, 0), 0);
	} else {
		print_message("# one possible CPU: per-CPU part not checked\n");
	}
	/* CPU 0's third load miss sends its three */
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x12, DS_L3, 0), 3);
	drain(e);
	expect_addrs(e, 3, (const __u64[]){ 0x10, 0x11, 0x12 }, 3);
	assert_int_equal(e->recs[3].flags, CP_SAMPLE_MISS);
	if (ncpus >= 2) {
		assert_int_equal(run(e, TGID, 1, IP_MISS, 0x32, DS_L3, 0), 3);
		drain(e);
		expect_addrs(e, 6, (const __u64[]){ 0x30, 0x31, 0x32 }, 3);
		assert_int_equal(e->recs[6].cpu, 1);
	}
	/* a CPU beyond the map has no window: counted, nothing sent */
	assert_int_equal(run(e, TGID, (__u32)ncpus, IP_MISS, 0x40, DS_L3, 0), 0);
	assert_int_equal(stats(e).drop_window, 1);
	assert_int_equal(stats(e).samples[CP_ACCESS_STORE], 4);
	assert_int_equal(stats(e).misses[CP_ACCESS_STORE], 3);
	env_free(e);
}

/* Level-unknown samples are counted, never misses, never forwarded. */
static void test_na_never_forwarded(void **state)
{
	struct knobs k = { .window = 8, .ratio_ppm = 0 };	/* 0: every miss goes at once */
	struct cp_insn ips[2];
	struct cp_stats st;
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	for (int i = 0; i < 3; i++)
		assert_int_equal(run(e, TGID, 0, IP_HIT, 0x50 + i, DS_LOAD_NA, 0), 0);
	/* no op at all (the kernel's NA): not a memory access in this mode */
	assert_int_equal(run(e, TGID, 0, IP_HIT, 0x60, DS_NA_KERNEL, 0), 0);
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x70, DS_L3_HITM, 7), 1);
	drain(e);
	expect_addrs(e, 0, (const __u64[]){ 0x70 }, 1);
	assert_int_equal(e->recs[0].flags, CP_SAMPLE_MISS);
	st = stats(e);
	assert_int_equal(st.na[CP_ACCESS_LOAD], 3);
	assert_int_equal(st.samples[CP_ACCESS_LOAD], 4);
	assert_int_equal(st.misses[CP_ACCESS_LOAD], 1);
	assert_int_equal(st.not_mem, 1);
	assert_int_equal(st.forwarded, 1);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 2), 2);
	for (int i = 0; i < 2; i++) {
		if (ips[i].key.ip == IP_HIT) {
			assert_int_equal(ips[i].counts.loads, 3);
			assert_int_equal(ips[i].counts.lvl[CP_LVL_NA], 3);
			assert_int_equal(ips[i].counts.load_misses, 0);
		} else {
			assert_int_equal(ips[i].counts.hitm, 1);
			assert_int_equal(ips[i].counts.lat_sum, 7);
		}
	}
	env_free(e);
}

/* Forward-all: every sample, hit, miss, NA or no op, with CP_SAMPLE_ALL. */
static void test_forward_all(void **state)
{
	struct knobs k = { .window = 8, .ratio_ppm = 1000000, .forward_all = true };
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	assert_int_equal(hit(e, 0x1), 1);
	assert_int_equal(miss(e, 0x2), 1);
	assert_int_equal(run(e, TGID, 0, IP_HIT, 0x3, DS_NA_KERNEL, 0), 1);
	assert_int_equal(run(e, TGID, 0, IP_HIT, 0x4, DS_ST_MISS, 0), 1);
	/* a page-fault software event: data_src never filled */
	assert_int_equal(run(e, TGID, 0, IP_HIT, 0x5, 0, 0), 1);
	drain(e);
	expect_addrs(e, 0, (const __u64[]){ 0x1, 0x2, 0x3, 0x4, 0x5 }, 5);
	assert_int_equal(e->recs[0].flags, CP_SAMPLE_ALL);
	assert_int_equal(e->recs[1].flags, CP_SAMPLE_ALL | CP_SAMPLE_MISS);
	assert_int_equal(e->recs[2].flags, CP_SAMPLE_ALL | CP_SAMPLE_NA);
	assert_int_equal(e->recs[3].flags, CP_SAMPLE_ALL | CP_SAMPLE_STORE | CP_SAMPLE_MISS);
	assert_int_equal(e->recs[4].flags, CP_SAMPLE_ALL | CP_SAMPLE_NA);
	/* the 100 % ratio would have filtered the misses: windows are bypassed */
	assert_int_equal(stats(e).filtered, 0);
	assert_int_equal(stats(e).forwarded, 5);
	assert_int_equal(stats(e).not_mem, 0);
	env_free(e);
}

/* -p: only listed processes; never tgid 0 (the idle task) or ourselves. */
static void test_target_filter(void **state)
{
	struct knobs k = { .window = 8, .ratio_ppm = 0, .filter_tgid = true,
			   .self_tgid = TGID + 1 };
	struct cp_insn ips[2];
	__u32 tgid = TGID, self = TGID + 1;
	__u8 one = 1;
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	assert_int_equal(bpf_map__update_elem(e->skel->maps.targ_tgids, &tgid, sizeof(tgid),
					      &one, sizeof(one), BPF_ANY), 0);
	/* even listed, the profiler's own process stays out */
	assert_int_equal(bpf_map__update_elem(e->skel->maps.targ_tgids, &self, sizeof(self),
					      &one, sizeof(one), BPF_ANY), 0);
	assert_int_equal(run(e, TGID + 100, 0, IP_MISS, 0x1, DS_L3, 0), 0);
	assert_int_equal(run(e, 0, 0, IP_MISS, 0x2, DS_L3, 0), 0);
	assert_int_equal(run(e, self, 0, IP_MISS, 0x2, DS_L3, 0), 0);
	assert_int_equal(stats(e).not_target, 3);
	assert_int_equal(stats(e).samples[CP_ACCESS_LOAD], 0);
	assert_int_equal(drain(e), 0);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 2), 0);
	assert_int_equal(run(e, TGID, 0, IP_MISS, 0x3, DS_L3, 0), 1);
	drain(e);
	expect_addrs(e, 0, (const __u64[]){ 0x3 }, 1);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 2), 1);
	assert_int_equal(ips[0].key.tgid, TGID);
	env_free(e);
}

/*
 * A 4 KiB ring buffer holds 56 records: each takes an 8-byte header plus the
 * 64-byte struct cp_sample, and 57 * 72 > 4096. Nothing consumes in between.
 */
static void test_ringbuf_full_counts_drops(void **state)
{
	struct knobs k = { .window = 8, .forward_all = true, .ringbuf_bytes = 4096 };
	int sent = 0;
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	if (sysconf(_SC_PAGESIZE) != 4096) {
		print_message("# page size is not 4 KiB: the 56-record capacity does not hold\n");
		skip();
	}
	e = env_new(&k);
	for (int i = 0; i < 100; i++)
		sent += hit(e, 0x1000 + i);
	assert_int_equal(sent, 56);
	assert_int_equal(stats(e).forwarded, 56);
	assert_int_equal(stats(e).drop_ringbuf, 44);
	drain(e);
	assert_int_equal(e->nrecs, 56);
	/* the first 56 made it, in order */
	for (unsigned int i = 0; i < 56; i++)
		assert_int_equal(e->recs[i].addr, 0x1000 + i);
	/* consumed space is usable again */
	assert_int_equal(hit(e, 0x2000), 1);
	env_free(e);
}

/* The exec and exit records of a child, counted by the drain's other-record callback. */
static int count_proc(__u32 type, const void *data, size_t size, void *ctx)
{
	const struct cp_proc_event *pe = data;
	unsigned int *procs = ctx;

	/* an exec's record is the longer struct cp_proc_exec_event */
	if (type == CP_REC_PROC && size == (pe->kind == CP_PROC_EXEC ? sizeof(struct cp_proc_exec_event) : sizeof(*pe)))
		procs[pe->kind == CP_PROC_EXEC ? 0 : 1]++;
	return 0;
}

/*
 * A ring that samples filled keeps room for exec and exit records: with
 * the real ring (4 MiB) full of forwarded samples, a child's exec and exit
 * still reach user space (the lifecycle programs of bpf/targets.bpf.c on
 * a real fork and exec), and the samples stopped at 63/64 of the ring.
 */
static void test_ringbuf_keeps_room_for_processes(void **state)
{
	struct cacheperf *skel;
	struct bpf_link *links[3];
	struct cp_drain *d;
	struct cp_stats st;
	unsigned int procs[2] = {0};
	struct cp_record_ops ops = { .record = count_proc, .ctx = procs };
	__u32 self = getpid();
	__u8 profile = CP_TARG_PROFILE;
	__u64 sent = 0, rec = (sizeof(struct cp_sample) + 8 + 7) / 8 * 8;
	int status;
	pid_t child;

	(void)state;
	REQUIRE_ROOT();
	skel = cacheperf__open();
	assert_non_null(skel);
	skel->rodata->targ_forward_all = true;
	skel->rodata->targ_filter_tgid = true;
	cp_test_pipeline_load(skel, NULL);
	assert_int_equal(bpf_map__update_elem(skel->maps.targ_tgids, &self, sizeof(self), &profile,
					      sizeof(profile), BPF_ANY), 0);
	links[0] = bpf_program__attach(skel->progs.on_fork);
	links[1] = bpf_program__attach(skel->progs.on_exec);
	links[2] = bpf_program__attach(skel->progs.on_exit);
	for (int i = 0; i < 3; i++)
		assert_non_null(links[i]);
	for (int i = 0; i < (int)(CP_RINGBUF_BYTES / rec) + 16; i++) {
		struct cp_mem_input s = {
			.tgid = self, .tid = self, .ip = 0x1000, .addr = 0x2000 + i,
			.data_src = DS_L1, .time_ns = i + 1,
		};
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &s, .ctx_size_in = sizeof(s));

		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.test_mem_sample),
							&opts), 0);
		sent += opts.retval;
	}
	/* the samples stopped at the share they may fill, the rest of the ring free */
	assert_true(sent * rec <= CP_RINGBUF_BYTES / CP_RINGBUF_KEEP_SHARE *
					  (CP_RINGBUF_KEEP_SHARE - 1) + rec);
	assert_true(sent * rec > CP_RINGBUF_BYTES / CP_RINGBUF_KEEP_SHARE *
					 (CP_RINGBUF_KEEP_SHARE - 1) - rec);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	d = cp_drain__new(skel, &ops);
	assert_non_null(d);
	assert_true(cp_drain__poll(d, 0) >= 0);
	cp_drain__stats(d, &st);
	assert_int_equal(procs[0], 1);
	assert_int_equal(procs[1], 1);
	assert_int_equal(st.drop_proc, 0);
	assert_true(st.drop_ringbuf > 0);
	cp_drain__free(d);
	for (int i = 0; i < 3; i++)
		bpf_link__destroy(links[i]);
	cacheperf__destroy(skel);
}

/* A full counter map drops new instructions (counted) but still counts known ones. */
static void test_ip_map_full(void **state)
{
	struct knobs k = { .window = 8, .ratio_ppm = 1000000, .max_ips = 4 };
	struct cp_insn ips[8];
	struct env *e;
	int n;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	for (__u64 ip = 1; ip <= 6; ip++)
		run(e, TGID, 0, ip, 0x1, DS_L1, 0);
	run(e, TGID, 0, 1, 0x1, DS_L1, 0);
	assert_int_equal(stats(e).drop_ipmap, 2);
	/* the window still saw all seven */
	assert_int_equal(stats(e).samples[CP_ACCESS_LOAD], 7);
	n = cp_drain__ip_counts(e->drain, ips, 8);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		assert_true(ips[i].key.ip >= 1 && ips[i].key.ip <= 4);
		assert_int_equal(ips[i].counts.loads, ips[i].key.ip == 1 ? 2 : 1);
	}
	/* a caller array smaller than the map: the rest waits for the next call */
	for (__u64 ip = 1; ip <= 3; ip++)
		run(e, TGID, 0, ip, 0x1, DS_L1, 0);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 2), 2);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 2), 1);
	assert_int_equal(cp_drain__ip_counts(e->drain, ips, 2), 0);
	env_free(e);
}

/*
 * The paper's defaults in the kernel: N = 512 at 0.5 % needs three misses
 * among 512 loads. A lone miss ages out (filtered); three within 512 go.
 */
static void test_defaults_in_kernel(void **state)
{
	struct knobs k = { .window = CP_WINDOW_DEFAULT, .ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM };
	struct env *e;
	int sent = 0;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	sent += miss(e, 0xf0);
	for (int i = 0; i < 512; i++)
		sent += hit(e, 0x100);
	assert_int_equal(sent, 0);
	assert_int_equal(stats(e).filtered, 1);
	sent += miss(e, 0xf1);
	for (int i = 0; i < 300; i++)
		sent += hit(e, 0x100);
	sent += miss(e, 0xf2);
	for (int i = 0; i < 200; i++)
		sent += hit(e, 0x100);
	assert_int_equal(sent, 0);
	/* 0xf1 was pushed 502 samples ago: still inside */
	assert_int_equal(miss(e, 0xf3), 3);
	drain(e);
	expect_addrs(e, 0, (const __u64[]){ 0xf1, 0xf2, 0xf3 }, 3);
	env_free(e);
}

struct other {
	__u32 type;
	size_t size;
	unsigned int n;
};

static int on_other(__u32 type, const void *data, size_t size, void *ctx)
{
	struct other *o = ctx;

	(void)data;
	o->type = type;
	o->size = size;
	o->n++;
	return 0;
}

/*
 * A sched_cls program that writes one @size-byte record starting with the
 * __u32 @type into @map_fd: what a buggy or newer producer could put there.
 */
static int load_writer(int map_fd, __u32 type, __u32 size)
{
	const struct bpf_insn insns[] = {
		/* *(u32 *)(r10 - 8) = type; *(u32 *)(r10 - 4) = 0 */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -8, .imm = type },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0 },
		/* r1 = map */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		/* r2 = r10 - 8; r3 = size; r4 = 0; bpf_ringbuf_output() */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = size },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "cp_writer", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

static void write_record(int map_fd, __u32 type, __u32 size)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = sizeof(pkt));
	int fd = load_writer(map_fd, type, size);

	assert_true(fd >= 0);
	assert_int_equal(bpf_prog_test_run_opts(fd, &opts), 0);
	close(fd);
}

/* The drain checks each record's size and type before anyone reads it. */
static void test_drain_validates_records(void **state)
{
	struct knobs k = { .window = 8, .forward_all = true };
	struct other o = { 0 };
	struct cp_record_ops ops = { .record = on_other, .ctx = &o };
	struct cp_drain *d;
	struct env *e;
	int fd;

	(void)state;
	REQUIRE_ROOT();
	e = env_new(&k);
	fd = bpf_map__fd(e->skel->maps.events);
	write_record(fd, CP_REC_SAMPLE, 8);	/* a sample record of the wrong size */
	write_record(fd, CP_REC_SAMPLE, 2);	/* too short to hold a type */
	write_record(fd, 99, 8);		/* a type nobody handles */
	assert_int_equal(hit(e, 0x42), 1);	/* and one good sample */
	assert_int_equal(cp_drain__poll(e->drain, 0), 4);
	assert_int_equal(cp_drain__malformed(e->drain), 2);
	assert_int_equal(cp_drain__unknown(e->drain), 1);
	expect_addrs(e, 0, (const __u64[]){ 0x42 }, 1);

	/*
	 * with a record callback too: a type the record table does not know is
	 * counted and never handed on, nor is a known type of a size it cannot
	 * have (an object event is 64 bytes)
	 */
	d = cp_drain__new(e->skel, &ops);
	assert_non_null(d);
	write_record(fd, 99, 8);
	write_record(fd, CP_REC_OBJECT, 8);
	assert_int_equal(cp_drain__poll(d, 0), 2);
	assert_int_equal(o.n, 0);
	assert_int_equal(cp_drain__unknown(d), 1);
	assert_int_equal(cp_drain__malformed(d), 1);
	cp_drain__free(d);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_variants_load),
		cmocka_unit_test(test_window_threshold_sequence),
		cmocka_unit_test(test_windows_per_cpu_and_kind),
		cmocka_unit_test(test_na_never_forwarded),
		cmocka_unit_test(test_forward_all),
		cmocka_unit_test(test_target_filter),
		cmocka_unit_test(test_ringbuf_full_counts_drops),
		cmocka_unit_test(test_ringbuf_keeps_room_for_processes),
		cmocka_unit_test(test_ip_map_full),
		cmocka_unit_test(test_defaults_in_kernel),
		cmocka_unit_test(test_drain_validates_records),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
