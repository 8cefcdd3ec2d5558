// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * How on_mem_sample reads a PMU sample and what it makes of it (root), on
 * what the kernel really hands it:
 *  - test_sample_read runs the programs' own reading (bpf/sample_read.bpf.h)
 *    on fake registers and a fake struct perf_sample_data, laid out at the
 *    offsets this kernel's BTF gives: an address the driver did not flag
 *    (IBS without dc_lin_addr_valid; any PMU since 6.1's sample_flags) is
 *    never read, and a sample whose CS is the kernel's is marked kernel;
 *  - test_mem_sample then takes such samples through the pipeline: kernel
 *    samples are dropped and counted, the event (the link's bpf_cookie)
 *    decides load or store over data_src.mem_op, and an IBS store past L2
 *    is a miss. The data_src values are the kernel encoders' (see
 *    tests/unit/test_data_src.c for their derivation).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "lib/mem_pipeline.h"
#include "machine/event_spec.h"

#define TGID		4343
#define USER_CS		0x33	/* __USER_CS */
#define KERNEL_CS	0x10	/* __KERNEL_CS */
#define ATOM_STORE_L1	0x10268100142ULL	/* cpu_atom mem-stores, dse 0x01 */
#define IBS_STORE_PAST_L2 0x1e29080024ULL	/* IBS store, dc_miss + l2_miss */
#define IBS_LOAD_DRAM	0x1a29081042ULL		/* IBS load (or RMW) from local DRAM */

struct env {
	struct cacheperf *skel;
	struct cp_drain *drain;
	unsigned int nrecs;
	struct cp_sample last;
};

static int collect(const struct cp_sample *s, void *ctx)
{
	struct env *e = ctx;

	e->last = *s;
	e->nrecs++;
	return 0;
}

static struct env *env_new(void)
{
	struct cp_record_ops ops = { .sample = collect };
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->skel = cacheperf__open();
	assert_non_null(e->skel);
	/* every miss forwarded at once */
	e->skel->rodata->targ_window_size = 8;
	e->skel->rodata->targ_window_ratio_ppm = 0;
	cp_test_pipeline_load(e->skel, e->skel->progs.test_sample_read);
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

/* Offset of member @name of struct perf_sample_data in this kernel's BTF. */
static size_t member_off(const struct btf *btf, const char *name)
{
	__s32 id = btf__find_by_name_kind(btf, "perf_sample_data", BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	assert_true(id > 0);
	t = btf__type_by_id(btf, id);
	assert_true(t->size <= CP_FAKE_SAMPLE_DATA);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return btf_member_bit_offset(t, i) / 8;
	fail_msg("struct perf_sample_data has no member %s", name);
	return 0;
}

struct fake {
	__u64 flags, addr, data_src, weight;
	__u64 cs, ip;
	__u8 event;
	bool raw;		/* an IBS raw record with IbsOpData3 = @opdata3 */
	__u64 opdata3;
};

/* Runs test_sample_read on @f laid out as the kernel would; returns what it read. */
static struct cp_mem_input read_sample(struct env *e, const struct btf *btf, const struct fake *f)
{
	struct cp_sample_read_ctx ctx = {
		.regs = { .ip = f->ip, .cs = f->cs }, .event = f->event, .with_raw = f->raw,
	};
	/* a syscall program's context is copied back to ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	char *data = e->skel->bss->cp_fake_sample_data;

	memset(data, 0, CP_FAKE_SAMPLE_DATA);
	memcpy(data + member_off(btf, "sample_flags"), &f->flags, 8);
	memcpy(data + member_off(btf, "addr"), &f->addr, 8);
	memcpy(data + member_off(btf, "data_src"), &f->data_src, 8);
	memcpy(data + member_off(btf, "weight"), &f->weight, 8);
	/* perf_ibs_handle_irq()'s raw record: u32 caps, then IbsOpCtl, IbsOpRip, IbsOpData, IbsOpData2, IbsOpData3 */
	memset(e->skel->bss->cp_fake_ibs_raw, 0, CP_FAKE_IBS_RAW);
	memcpy(e->skel->bss->cp_fake_ibs_raw + 4 + 4 * 8, &f->opdata3, 8);
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.test_sample_read),
						&opts), 0);
	return ctx.out;
}

static void test_read_flags_and_mode(void **state)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct cp_mem_input s;
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	assert_non_null(btf);
	e = env_new();
	/* IBS without a valid linear address: ADDR not flagged, whatever the field holds */
	s = read_sample(e, btf, &(struct fake){
		.flags = PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT, .addr = 0xdeadbeef000,
		.data_src = IBS_STORE_PAST_L2, .weight = 300, .cs = USER_CS, .ip = 0x401000 });
	assert_int_equal(s.addr, 0);
	assert_int_equal(s.data_src, IBS_STORE_PAST_L2);
	assert_int_equal(s.weight, 300);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.kernel, 0);
	/* flagged: read */
	s = read_sample(e, btf, &(struct fake){
		.flags = PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC, .addr = 0x7f0000001040,
		.data_src = IBS_LOAD_DRAM, .weight = 300, .cs = USER_CS, .ip = 0x401000 });
	assert_int_equal(s.addr, 0x7f0000001040);
	assert_int_equal(s.data_src, IBS_LOAD_DRAM);
	assert_int_equal(s.weight, 0);	/* not flagged */
	/* nothing flagged: the kernel's NA, not the stale field */
	s = read_sample(e, btf, &(struct fake){ .data_src = IBS_LOAD_DRAM, .cs = USER_CS });
	assert_int_equal(s.data_src, 0x1e05080021ULL);
	/* set_linear_ip() gave a kernel IP the kernel's CS: a copy_to_user() of the target */
	s = read_sample(e, btf, &(struct fake){
		.flags = PERF_SAMPLE_DATA_SRC, .data_src = IBS_LOAD_DRAM, .cs = KERNEL_CS,
		.ip = 0xffffffff81000000ULL });
	assert_int_equal(s.kernel, 1);
	env_free(e);
	btf__free(btf);
}

/*
 * IBS read-modify-write ops: perf_ibs_get_mem_op() tests ld_op first and
 * says load; IbsOpData3 (bit 0 ld_op, bit 1 st_op) in the raw record says
 * both, and the sample becomes a store with the load's level.
 */
static void test_ibs_rmw_is_a_store(void **state)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const __u64 flags = PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_RAW;
	const __u64 as_store = (IBS_LOAD_DRAM & ~0x1fULL) | PERF_MEM_OP_STORE;
	struct cp_mem_input s;
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	assert_non_null(btf);
	e = env_new();
	s = read_sample(e, btf, &(struct fake){ .flags = flags, .data_src = IBS_LOAD_DRAM,
		.cs = USER_CS, .event = CP_SEV_IBS, .raw = true, .opdata3 = 0x3 | 0x80 });
	assert_int_equal(s.data_src, as_store);
	/* a plain load (ld_op only) stays one */
	s = read_sample(e, btf, &(struct fake){ .flags = flags, .data_src = IBS_LOAD_DRAM,
		.cs = USER_CS, .event = CP_SEV_IBS, .raw = true, .opdata3 = 0x1 | 0x80 });
	assert_int_equal(s.data_src, IBS_LOAD_DRAM);
	/* no raw record flagged, or not IBS: data_src as the kernel gave it */
	s = read_sample(e, btf, &(struct fake){ .flags = PERF_SAMPLE_DATA_SRC,
		.data_src = IBS_LOAD_DRAM, .cs = USER_CS, .event = CP_SEV_IBS, .raw = true,
		.opdata3 = 0x3 });
	assert_int_equal(s.data_src, IBS_LOAD_DRAM);
	s = read_sample(e, btf, &(struct fake){ .flags = flags, .data_src = IBS_LOAD_DRAM,
		.cs = USER_CS, .event = CP_SEV_LOAD, .raw = true, .opdata3 = 0x3 });
	assert_int_equal(s.data_src, IBS_LOAD_DRAM);
	env_free(e);
	btf__free(btf);
}

/* One sample through test_mem_sample. */
static void run(struct env *e, __u8 event, bool kernel, __u64 data_src)
{
	struct cp_mem_input s = {
		.tgid = TGID, .tid = TGID, .cpu = 0, .ip = 0x401000, .addr = 0x7f0000001040,
		.data_src = data_src, .time_ns = 1, .event = event, .kernel = kernel,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &s, .ctx_size_in = sizeof(s));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(e->skel->progs.test_mem_sample),
						&opts), 0);
	cp_drain__poll(e->drain, 0);
}

static struct cp_stats stats(struct env *e)
{
	struct cp_stats st;

	cp_drain__stats(e->drain, &st);
	return st;
}

static void test_kernel_samples_dropped(void **state)
{
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	e = env_new();
	run(e, CP_SEV_IBS, true, IBS_LOAD_DRAM);
	assert_int_equal(stats(e).kernel_ip, 1);
	assert_int_equal(stats(e).samples[CP_ACCESS_LOAD], 0);
	assert_int_equal(e->nrecs, 0);
	run(e, CP_SEV_IBS, false, IBS_LOAD_DRAM);
	assert_int_equal(stats(e).samples[CP_ACCESS_LOAD], 1);
	assert_int_equal(e->nrecs, 1);
	env_free(e);
}

static void test_event_decides(void **state)
{
	struct env *e;

	(void)state;
	REQUIRE_ROOT();
	e = env_new();
	/* an E-core store: a store, though its data_src says load */
	run(e, CP_SEV_STORE, false, ATOM_STORE_L1);
	assert_int_equal(stats(e).samples[CP_ACCESS_STORE], 1);
	assert_int_equal(stats(e).samples[CP_ACCESS_LOAD], 0);
	/* an IBS store past L2: a store miss, forwarded as a store with the rewritten source */
	run(e, CP_SEV_IBS, false, IBS_STORE_PAST_L2);
	assert_int_equal(stats(e).samples[CP_ACCESS_STORE], 2);
	assert_int_equal(stats(e).misses[CP_ACCESS_STORE], 1);
	assert_int_equal(e->nrecs, 1);
	assert_int_equal(e->last.flags, CP_SAMPLE_STORE | CP_SAMPLE_MISS);
	assert_int_equal(e->last.data_src, 0x429080484ULL);
	/* no cookie (kernels before 5.15): data_src alone, so that store is of unknown level */
	run(e, CP_SEV_UNKNOWN, false, IBS_STORE_PAST_L2);
	assert_int_equal(stats(e).misses[CP_ACCESS_STORE], 1);
	assert_int_equal(stats(e).na[CP_ACCESS_STORE], 1);
	env_free(e);
}

/* The cookies the events are attached with name those events. */
static void test_role_cookies(void **state)
{
	(void)state;
	assert_int_equal(cp_event_role_cookie(CP_EVENT_LOAD), CP_SEV_LOAD);
	assert_int_equal(cp_event_role_cookie(CP_EVENT_STORE), CP_SEV_STORE);
	assert_int_equal(cp_event_role_cookie(CP_EVENT_MEM), CP_SEV_IBS);
	assert_int_equal(cp_event_role_cookie(CP_EVENT_AUX), CP_SEV_UNKNOWN);
	assert_int_equal(cp_event_role_cookie(CP_EVENT_OTHER), CP_SEV_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_flags_and_mode),
		cmocka_unit_test(test_ibs_rmw_is_a_store),
		cmocka_unit_test(test_kernel_samples_dropped),
		cmocka_unit_test(test_event_decides),
		cmocka_unit_test(test_role_cookies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
