// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The no-PMU source's pure parts: which ticks are user mode, the data_src a
 * soft sample carries, what is installed for a decoded instruction, the
 * decode order, and the registry that lets an exec or exit remove a
 * process's descriptors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cacheperf/soft_tick.h"
#include "decode/decode.h"
#include "decode/soft_decide.h"

static void test_user_mode(void **state)
{
	(void)state;
	assert_true(cp_soft_user_mode(0x33));	/* __USER_CS */
	assert_true(cp_soft_user_mode(0x23));	/* __USER32_CS */
	assert_false(cp_soft_user_mode(0x10));	/* __KERNEL_CS */
	assert_false(cp_soft_user_mode(0));
}

/* Reads are loads, writes and read-modify-writes stores; never a level. */
static void test_data_src(void **state)
{
	static const struct { __u8 access; __u8 op; } cases[] = {
		{ CP_OPND_READ, CP_OP_LOAD },
		{ CP_OPND_WRITE, CP_OP_STORE },
		{ CP_OPND_RMW, CP_OP_STORE },
	};
	struct cp_data_src d;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cp_data_src_decode(cp_soft_data_src(cases[i].access), &d);
		assert_int_equal(d.op, cases[i].op);
		assert_int_equal(d.lvl, CP_LVL_NA);
		assert_false(d.miss);
		assert_int_equal(d.snoop, CP_SNOOP_NA);
	}
}

static void test_decide(void **state)
{
	/* movq %rcx,(%rdi,%rax,8) and add $1,%rax */
	static const __u8 store[] = { 0x48, 0x89, 0x0c, 0xc7 }, add[] = { 0x48, 0x83, 0xc0, 0x01 };
	struct cp_operand op;
	struct cp_soft_insn v;

	(void)state;
	cp_decode_operand(store, sizeof(store), &op);
	assert_int_equal(cp_soft_decide(0, 0, &op, NULL, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.status, CP_OPND_OK);
	assert_int_equal(v.op.access, CP_OPND_WRITE);
	assert_int_equal(v.op.size, 8);
	assert_int_equal(v.mm, 0x1234);

	cp_decode_operand(add, sizeof(add), &op);
	assert_int_equal(cp_soft_decide(0, 0, &op, NULL, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.status, CP_OPND_NO_MEMORY);	/* a marker: time only */

	/* no mapping holds the ip: a marker too, or it would be queued at every tick */
	assert_int_equal(cp_soft_decide(0, -ENOENT, &op, NULL, 0x99, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.status, CP_OPND_UNREADABLE);
	assert_int_equal(v.mm, 0x99);

	/* the process is gone: nothing */
	assert_int_equal(cp_soft_decide(-ESRCH, 0, &op, NULL, 0x99, &v), CP_SOFT_GONE);
}

/*
 * Skid: an instruction without a memory operand whose predecessor is a
 * chargeable access (user/decode/skid.h) gets that access's operand and ip; one
 * with an access of its own keeps it; without a predecessor, a marker.
 */
static void test_decide_skid(void **state)
{
	/* movq (%rcx),%rdi; add %rdi,%rsi; movq %rcx,(%rdi,%rax,8) */
	static const __u8 load[] = { 0x48, 0x8b, 0x39 }, add[] = { 0x48, 0x01, 0xfe },
			  store[] = { 0x48, 0x89, 0x0c, 0xc7 },
			  frame_inc[] = { 0x48, 0x83, 0x45, 0xf8, 0x01 };
	struct cp_soft_prev prev = { .ip = 0x4012b7 };
	struct cp_operand op;
	struct cp_soft_insn v;

	(void)state;
	cp_decode_operand(load, sizeof(load), &prev.op);
	cp_decode_operand(add, sizeof(add), &op);
	assert_int_equal(cp_soft_decide(0, 0, &op, &prev, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.status, CP_OPND_OK);
	assert_int_equal(v.op.base, CP_REG_RCX);
	assert_int_equal(v.op.access, CP_OPND_READ);
	assert_int_equal(v.charge_ip, 0x4012b7);
	assert_int_equal(v.mm, 0x1234);

	/* no chargeable access before it: the marker, charged to nothing */
	assert_int_equal(cp_soft_decide(0, 0, &op, NULL, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.status, CP_OPND_NO_MEMORY);
	assert_int_equal(v.charge_ip, 0);

	/* an access of its own: its operand, whatever came before */
	cp_decode_operand(store, sizeof(store), &op);
	assert_int_equal(cp_soft_decide(0, 0, &op, &prev, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.access, CP_OPND_WRITE);
	assert_int_equal(v.op.base, CP_REG_RDI);
	assert_int_equal(v.charge_ip, 0);

	/* addq $1,-8(%rbp), whose ticks the caller found are the access's before (past_access) */
	cp_decode_operand(frame_inc, sizeof(frame_inc), &op);
	assert_int_equal(op.base, CP_REG_RBP);
	prev.past_access = true;
	assert_int_equal(cp_soft_decide(0, 0, &op, &prev, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.base, CP_REG_RCX);
	assert_int_equal(v.charge_ip, 0x4012b7);
	/* ... and without past_access, its own operand */
	prev.past_access = false;
	assert_int_equal(cp_soft_decide(0, 0, &op, &prev, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.base, CP_REG_RBP);
	assert_int_equal(v.charge_ip, 0);

	/* unreadable: a marker even with a predecessor */
	assert_int_equal(cp_soft_decide(0, -ENOENT, &op, &prev, 0x1234, &v), CP_SOFT_INSTALL);
	assert_int_equal(v.op.status, CP_OPND_UNREADABLE);
	assert_int_equal(v.charge_ip, 0);
}

static void test_sort(void **state)
{
	struct cp_soft_item it[4] = {
		{ .key = { .tgid = 7, .ip = 0x30 } }, { .key = { .tgid = 3, .ip = 0x50 } },
		{ .key = { .tgid = 7, .ip = 0x10 } }, { .key = { .tgid = 3, .ip = 0x20 } },
	};

	(void)state;
	cp_soft_items_sort(it, 4);
	assert_int_equal(it[0].key.tgid, 3);
	assert_int_equal(it[0].key.ip, 0x20);
	assert_int_equal(it[1].key.ip, 0x50);
	assert_int_equal(it[2].key.tgid, 7);
	assert_int_equal(it[2].key.ip, 0x10);
	assert_int_equal(it[3].key.ip, 0x30);
}

static void test_registry(void **state)
{
	struct cp_soft_registry r;
	struct cp_ip_key k, out[2];
	size_t n, total = 0;

	(void)state;
	assert_int_equal(cp_soft_registry_init(&r, 4), 0);
	for (__u64 ip = 1; ip <= 3; ip++) {
		k = (struct cp_ip_key){ .tgid = 10, .ip = ip };
		assert_int_equal(cp_soft_registry_add(&r, &k), 0);
	}
	k = (struct cp_ip_key){ .tgid = 10, .ip = 2 };
	assert_int_equal(cp_soft_registry_add(&r, &k), 1);	/* replaced in place */
	k = (struct cp_ip_key){ .tgid = 20, .ip = 1 };
	assert_int_equal(cp_soft_registry_add(&r, &k), 0);
	k = (struct cp_ip_key){ .tgid = 20, .ip = 2 };
	assert_int_equal(cp_soft_registry_add(&r, &k), -ENOSPC);	/* bounded */

	/* process 10 exec'd: its three keys come out, two at a time */
	while ((n = cp_soft_registry_take_tgid(&r, 10, out, 2)) > 0) {
		for (size_t i = 0; i < n; i++)
			assert_int_equal(out[i].tgid, 10);
		total += n;
	}
	assert_int_equal(total, 3);
	assert_int_equal(r.nr, 1);
	assert_int_equal(r.keys[0].tgid, 20);
	assert_int_equal(cp_soft_registry_take_tgid(&r, 10, out, 2), 0);
	/* room again */
	assert_int_equal(cp_soft_registry_add(&r, &k), 0);
	cp_soft_registry_free(&r);
}

/* How long a process's maps snapshot serves its next instructions. */
static void test_maps_reuse(void **state)
{
	const __u64 t = 50000000000ull, age = CP_SOFT_MAPS_MAX_AGE_NS;

	(void)state;
	assert_true(cp_soft_maps_reuse(t, t, true));		/* this tick's */
	assert_true(cp_soft_maps_reuse(t, t + age - 1, true));
	assert_false(cp_soft_maps_reuse(t, t + age, true));	/* too old: read again */
	assert_false(cp_soft_maps_reuse(t, t + 1, false));	/* the ip mapped since */
	assert_false(cp_soft_maps_reuse(t, t - 1, true));	/* a clock that went back */
}

/*
 * An instruction is decoded at its second tick, within
 * CP_SOFT_SEEN_MAX_AGE_NS of its first; one that finds its slot held by
 * another's young first sighting is decoded at once and takes nothing.
 */
static void test_seen_again(void **state)
{
	const __u64 t = 50000000000ull, age = CP_SOFT_SEEN_MAX_AGE_NS;
	struct cp_soft_seen_slot *slots = calloc(CP_SOFT_SEEN_SLOTS, sizeof(*slots));
	struct cp_ip_key a = {.tgid = 100, .ip = 0x401000}, b = {.tgid = 100};
	struct cp_ip_key other_pid = {.tgid = 101, .ip = 0x401000};
	bool found = false;

	(void)state;
	assert_non_null(slots);
	assert_false(cp_soft_seen_again(slots, &a, t));		/* first tick: left */
	assert_false(cp_soft_seen_again(slots, &other_pid, t)); /* its own: another process */
	assert_true(cp_soft_seen_again(slots, &a, t + 1));	/* second: decoded */
	assert_true(cp_soft_seen_again(slots, &other_pid, t + 1));
	/* a first sighting too old counts no more: it starts again */
	assert_false(cp_soft_seen_again(slots, &a, t));
	assert_false(cp_soft_seen_again(slots, &a, t + age));
	assert_true(cp_soft_seen_again(slots, &a, t + age + 1));
	/* a clock that went back: a first sighting again */
	assert_false(cp_soft_seen_again(slots, &a, t));
	assert_false(cp_soft_seen_again(slots, &a, t - 1));
	assert_true(cp_soft_seen_again(slots, &a, t));

	/* another ip whose slot is a's: found by trying, each try's own slot freed again */
	assert_false(cp_soft_seen_again(slots, &a, t));
	for (__u64 ip = 0x500000; ip < 0x500000 + (1ull << 24) && !found; ip++) {
		b.ip = ip;
		if (cp_soft_seen_again(slots, &b, t))
			found = true; /* the only slot held is a's */
		else
			assert_true(cp_soft_seen_again(slots, &b, t));
	}
	assert_true(found);
	assert_true(cp_soft_seen_again(slots, &b, t + 1)); /* decoded at once, again */
	assert_true(cp_soft_seen_again(slots, &a, t + 2)); /* a kept its slot */
	/* once a's first sighting is old, b's takes the slot */
	assert_false(cp_soft_seen_again(slots, &a, t));
	assert_false(cp_soft_seen_again(slots, &b, t + age));
	assert_true(cp_soft_seen_again(slots, &b, t + age + 1));
	free(slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_mode),
		cmocka_unit_test(test_data_src),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_skid),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_maps_reuse),
		cmocka_unit_test(test_seen_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
