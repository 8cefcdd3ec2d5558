// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --stack-every in the BPF pipeline (bpf/stacks.bpf.h): with targ_stack_every
 * N, one miss in N and one L1 hit in N * CP_STACK_HIT_FACTOR is counted on
 * its stack, each count worth as many samples, so the counts are multiples
 * of that and estimate the samples fed. Driven through test_mem_sample,
 * which chooses the way the perf_event programs do (CP_STACK_CHOOSE).
 */
#include <stddef.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "lib/mem_pipeline.h"

#define TGID	 4242
#define STACK_ID 7
#define EVERY	 4
#define FED	 1600
#define IP_HIT	 0x401000
#define IP_MISS	 0x402000
#define HIT_IPS	 8

#define DS_L1 (PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1) | \
	       PERF_MEM_S(LVLNUM, L1))
#define DS_L3 (PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L3) | \
	       PERF_MEM_S(LVLNUM, L3))

/* FED samples of @data_src, spread over @nr_ips instructions from @ip on (16 bytes apart) */
static void feed(struct cacheperf *skel, __u64 ip, int nr_ips, __u64 data_src)
{
	for (int i = 0; i < FED; i++) {
		struct cp_mem_input s = {
			.tgid = TGID, .tid = TGID, .ip = ip + 16 * (i % nr_ips), .addr = 0x10000 + 64 * i,
			.data_src = data_src, .time_ns = i + 1, .stack_id = STACK_ID,
		};
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &s, .ctx_size_in = sizeof(s));

		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.test_mem_sample),
							&opts), 0);
	}
}

static struct cp_stack_counts counts_of(struct cacheperf *skel, __u64 ip)
{
	struct cp_stack_key key = { .tgid = TGID, .stack_id = STACK_ID, .ip = ip };
	struct cp_stack_counts c = { 0 };

	bpf_map__lookup_elem(skel->maps.stack_counts, &key, sizeof(key), &c, sizeof(c), 0);
	return c;
}

/*
 * FED misses at one in 4: 400 chosen on average, sd sqrt(1600 / 4 * 3 / 4) =
 * 17.3; FED hits at one in 32: 50 chosen, sd 6.96. Bounds of 5 sd either side:
 * [313, 487] and [16, 84] chosen, times 4 and 32. The hits are spread over 8
 * instructions, each of whose counts must be a multiple of 32: were hits
 * chosen like misses (counts of 4), all 8 would be so by chance 1 in 8^8.
 */
static void test_misses_and_hits_chosen_apart(void **state)
{
	struct cacheperf *skel;
	struct cp_stack_counts miss, hit = { 0 };

	(void)state;
	REQUIRE_ROOT();
	skel = cacheperf__open();
	assert_non_null(skel);
	skel->rodata->targ_stack_every = EVERY;
	cp_test_pipeline_load(skel, NULL);
	feed(skel, IP_MISS, 1, DS_L3);
	feed(skel, IP_HIT, HIT_IPS, DS_L1);
	miss = counts_of(skel, IP_MISS);
	for (int i = 0; i < HIT_IPS; i++) {
		struct cp_stack_counts c = counts_of(skel, IP_HIT + 16 * i);

		if (c.samples % (EVERY * CP_STACK_HIT_FACTOR))
			fail_msg("L1 hits of instruction %d on the stack: %llu, not a multiple of %d",
				 i, (unsigned long long)c.samples, EVERY * CP_STACK_HIT_FACTOR);
		assert_int_equal(c.misses, 0);
		hit.samples += c.samples;
	}
	cacheperf__destroy(skel);

	if (miss.samples % EVERY || miss.samples < 313 * EVERY || miss.samples > 487 * EVERY)
		fail_msg("misses on the stack: %llu, want a multiple of %d in [%d, %d]",
			 (unsigned long long)miss.samples, EVERY, 313 * EVERY, 487 * EVERY);
	assert_int_equal(miss.misses, miss.samples);
	if (hit.samples < 16 * 32 || hit.samples > 84 * 32)
		fail_msg("L1 hits on the stack: %llu, want [%d, %d]", (unsigned long long)hit.samples,
			 16 * 32, 84 * 32);
}

/* targ_stack_every 0 (--stack-every 0): nothing on any stack. */
static void test_zero_counts_nothing(void **state)
{
	struct cacheperf *skel;

	(void)state;
	REQUIRE_ROOT();
	skel = cacheperf__open();
	assert_non_null(skel);
	skel->rodata->targ_stack_every = 0;
	cp_test_pipeline_load(skel, NULL);
	feed(skel, IP_MISS, 1, DS_L3);
	assert_int_equal(counts_of(skel, IP_MISS).samples, 0);
	assert_int_equal(skel->bss->stats.no_ustack + skel->bss->stats.drop_stack_map, 0);
	cacheperf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_misses_and_hits_chosen_apart),
		cmocka_unit_test(test_zero_counts_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
