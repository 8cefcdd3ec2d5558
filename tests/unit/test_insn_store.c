// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Instruction store: accumulation across intervals, the cap, the ranking. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>

#include "profile/insn_store.h"

static struct cp_ip_counts counts(__u64 loads, __u64 load_misses, __u64 stores,
				  __u64 store_misses)
{
	struct cp_ip_counts c = { 0 };

	c.loads = loads;
	c.load_misses = load_misses;
	c.stores = stores;
	c.store_misses = store_misses;
	c.lvl[CP_LVL_L1] = loads + stores - load_misses - store_misses;
	c.lvl[CP_LVL_L3] = load_misses + store_misses;
	return c;
}

static void test_accumulates_per_process_and_ip(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(8);
	struct cp_ip_key a = { .tgid = 10, .ip = 0x401000 }, b = { .tgid = 11, .ip = 0x401000 };
	struct cp_ip_counts c1 = counts(10, 2, 0, 0), c2 = counts(5, 1, 4, 4);
	const struct cp_insn *i;

	(void)state;
	assert_int_equal(cp_insn_store__add(s, &a, &c1), 0);
	assert_int_equal(cp_insn_store__add(s, &a, &c2), 0);
	assert_int_equal(cp_insn_store__add(s, &b, &c1), 0);
	assert_int_equal(cp_insn_store__count(s), 2);	/* same ip, two processes */
	i = cp_insn_store__find(s, &a);
	assert_non_null(i);
	assert_int_equal(i->counts.loads, 15);
	assert_int_equal(i->counts.load_misses, 3);
	assert_int_equal(i->counts.stores, 4);
	assert_int_equal(i->counts.store_misses, 4);
	assert_int_equal(i->counts.lvl[CP_LVL_L3], 7);
	assert_int_equal(cp_insn_store__find(s, &b)->counts.loads, 10);
	cp_insn_store__free(s);
}

/*
 * Time samples (soft source): the ticks on an instruction when the pipeline
 * counted them, memory instruction or not; else its sampled accesses.
 */
static void test_time_samples(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(2);
	struct cp_ip_key k = { .tgid = 1, .ip = 0x10 }, other = { .tgid = 1, .ip = 0x20 };
	struct cp_ip_counts c = counts(5, 0, 2, 0);

	(void)state;
	assert_int_equal(cp_insn_store__add(s, &k, &c), 0);
	assert_int_equal(cp_insn_time_samples(cp_insn_store__find(s, &k)), 7);
	assert_int_equal(cp_insn_store__add_time(s, &k, 30), 0);
	assert_int_equal(cp_insn_store__add_time(s, &k, 12), 0);
	assert_int_equal(cp_insn_time_samples(cp_insn_store__find(s, &k)), 42);
	/* an instruction without a memory operand: ticks only */
	assert_int_equal(cp_insn_store__add_time(s, &other, 9), 0);
	assert_int_equal(cp_insn_time_samples(cp_insn_store__find(s, &other)), 9);
	assert_int_equal(cp_insn_store__find(s, &other)->counts.loads, 0);
	other.ip = 0x30;
	assert_int_equal(cp_insn_store__add_time(s, &other, 1), -ENOSPC);
	assert_int_equal(cp_insn_store__dropped(s), 1);
	cp_insn_store__free(s);
}

static void test_cap_counts_drops(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(3);
	struct cp_ip_counts c = counts(1, 0, 0, 0);

	(void)state;
	for (__u64 ip = 1; ip <= 5; ip++) {
		struct cp_ip_key k = { .tgid = 1, .ip = ip };

		assert_int_equal(cp_insn_store__add(s, &k, &c), ip <= 3 ? 0 : -ENOSPC);
	}
	/* a known instruction still accumulates at the cap */
	struct cp_ip_key k1 = { .tgid = 1, .ip = 1 };
	assert_int_equal(cp_insn_store__add(s, &k1, &c), 0);
	assert_int_equal(cp_insn_store__find(s, &k1)->counts.loads, 2);
	assert_int_equal(cp_insn_store__count(s), 3);
	assert_int_equal(cp_insn_store__dropped(s), 2);
	cp_insn_store__free(s);
}

static void test_top_ranks_by_misses_then_samples(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(16);
	const struct cp_insn *top[8];
	struct { __u64 ip, loads, misses; } in[] = {
		{ 0x10, 100, 1 }, { 0x20, 50, 9 }, { 0x30, 500, 9 }, { 0x40, 1, 0 },
	};

	(void)state;
	for (size_t n = 0; n < 4; n++) {
		struct cp_ip_key k = { .tgid = 1, .ip = in[n].ip };
		struct cp_ip_counts c = counts(in[n].loads, in[n].misses, 0, 0);

		cp_insn_store__add(s, &k, &c);
	}
	assert_int_equal(cp_insn_store__top(s, top, 3), 3);
	/* 9 misses twice: the one with more samples first; then 1 miss */
	assert_int_equal(top[0]->key.ip, 0x30);
	assert_int_equal(top[1]->key.ip, 0x20);
	assert_int_equal(top[2]->key.ip, 0x10);
	cp_insn_store__free(s);
}

static void test_miss_sets_and_addresses(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(8);
	struct cp_ip_key k = { .tgid = 5, .ip = 0x401000 };
	const struct cp_insn *i;

	(void)state;
	/* sets 3, 3, 9, then five more distinct sets: four kept, the rest pooled */
	/* symbolize until located, at the 1st, 2nd, 4th, 8th ... miss */
	assert_int_equal(cp_insn_store__note_miss(s, &k, 0x100c0, 3), 1);
	/* same line: the address is not kept again */
	assert_int_equal(cp_insn_store__note_miss(s, &k, 0x100c8, 3), 1);
	assert_int_equal(cp_insn_store__note_miss(s, &k, 0x20240, 9), 0);
	for (__u32 set = 20; set < 25; set++)
		assert_int_equal(cp_insn_store__note_miss(s, &k, 0x30000 + set * 64, set),
				 set == 20 || set == 24);	/* misses 4 and 8 */
	i = cp_insn_store__find(s, &k);
	assert_non_null(i);
	assert_int_equal(i->fwd_misses, 8);
	assert_int_equal(i->nr_sets, CP_INSN_SETS);
	assert_int_equal(i->sets[0].set, 3);
	assert_int_equal(i->sets[0].misses, 2);
	assert_int_equal(i->sets[1].set, 9);
	/* sets 20 and 21 fill the table; 22, 23, 24 go to the pool */
	assert_int_equal(i->other_set_misses, 3);
	assert_int_equal(i->nr_miss_addrs, CP_INSN_MISS_ADDRS);
	assert_int_equal(i->miss_addrs[0], 0x100c0);
	assert_int_equal(i->miss_addrs[1], 0x20240);
	/* counters drained later add to the same entry */
	struct cp_ip_counts c = counts(10, 4, 0, 0);

	assert_int_equal(cp_insn_store__add(s, &k, &c), 0);
	assert_int_equal(cp_insn_store__count(s), 1);
	assert_int_equal(cp_insn_store__find(s, &k)->fwd_misses, 8);
	/* located: not asked again, even at its 16th miss */
	cp_insn_store__set_located(s, &k);
	for (int m = 9; m <= 16; m++)
		assert_int_equal(cp_insn_store__note_miss(s, &k, 0x100c0, 3), 0);
	cp_insn_store__free(s);
}

static void test_history_keeps_the_latest(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(8);
	struct cp_ip_key k = { .tgid = 5, .ip = 0x401000 }, other = { .tgid = 5, .ip = 0x402000 };
	const struct cp_insn_history *h;

	(void)state;
	/* 70 addresses: the first 6 are overwritten by the last 6 */
	for (__u64 n = 0; n < 70; n++)
		assert_int_equal(cp_insn_store__add_history(s, &k, 0x1000 * n), 0);
	h = cp_insn_store__history(s, cp_insn_store__find(s, &k));
	assert_non_null(h);
	assert_int_equal(h->len, CP_INSN_HISTORY);
	assert_int_equal(h->seen, 70);
	assert_int_equal(h->addrs[0], 0x1000 * 64);
	assert_int_equal(h->addrs[5], 0x1000 * 69);
	assert_int_equal(h->addrs[6], 0x1000 * 6);
	/* an instruction with counters only has no history */
	struct cp_ip_counts c = counts(1, 1, 0, 0);

	cp_insn_store__add(s, &other, &c);
	assert_null(cp_insn_store__history(s, cp_insn_store__find(s, &other)));
	cp_insn_store__free(s);
}

static void test_history_pool_is_bounded(void **state)
{
	struct cp_insn_store *s = cp_insn_store__new(CP_INSN_MAX_HISTORIES + 8);
	struct cp_ip_key k = { .tgid = 1 };

	(void)state;
	for (__u64 n = 0; n < CP_INSN_MAX_HISTORIES; n++) {
		k.ip = 0x1000 + n;
		assert_int_equal(cp_insn_store__add_history(s, &k, 0x5000), 0);
	}
	k.ip = 0x9999999;
	assert_int_equal(cp_insn_store__add_history(s, &k, 0x5000), -ENOSPC);
	assert_int_equal(cp_insn_store__history_dropped(s), 1);
	/* instructions that have one keep adding */
	k.ip = 0x1000;
	assert_int_equal(cp_insn_store__add_history(s, &k, 0x6000), 0);
	cp_insn_store__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accumulates_per_process_and_ip),
		cmocka_unit_test(test_cap_counts_drops),
		cmocka_unit_test(test_time_samples),
		cmocka_unit_test(test_top_ranks_by_misses_then_samples),
		cmocka_unit_test(test_miss_sets_and_addresses),
		cmocka_unit_test(test_history_keeps_the_latest),
		cmocka_unit_test(test_history_pool_is_bounded),
	};

	return cmocka_run_group_tests_name("insn_store", tests, NULL, NULL);
}
