// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The decoded-operand cache: keys by code, not by process; bounded with LRU
 * replacement; and a real read of this test's own labelled instruction
 * through /proc/self (no root needed for one's own memory).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "decode/decode_cache.h"
#include "lib/open_fds.h"

/* A load this test decodes from its own text: mov 0x18(%rdi,%rsi,8),%rax. */
extern const char cp_test_decode_insn[];
__attribute__((noinline, used)) static long labelled_load(const long *p, long i)
{
	long v;

	asm volatile(".globl cp_test_decode_insn\n"
		     "cp_test_decode_insn:\n\t"
		     "movq 0x18(%1,%2,8), %0" : "=r"(v) : "r"(p), "r"(i) : "memory");
	return v;
}

static struct cp_operand op_with_disp(__s64 disp)
{
	struct cp_operand op = { .status = CP_OPND_OK, .base = CP_REG_RAX, .disp = disp };

	return op;
}

static void test_key_by_code(void **state)
{
	struct cp_map lib = { .start = 0x7f0000001000, .end = 0x7f0000005000, .offset = 0x3000,
			      .inode = 1234, .dev_major = 8, .dev_minor = 1, .kind = CP_MAP_FILE };
	struct cp_map other = lib;
	struct cp_map jit = { .start = 0x10000, .end = 0x20000, .kind = CP_MAP_ANON };
	struct cp_decode_key a, b;

	(void)state;
	cp_decode_key_of(100, &lib, 0x7f0000001010, &a);
	assert_int_equal(a.dev, (8ull << 32) | 1);
	assert_int_equal(a.ino, 1234);
	assert_int_equal(a.off, 0x3010);
	/* another process maps the same file elsewhere: the same key */
	other.start = 0x7e0000001000;
	other.end = 0x7e0000005000;
	cp_decode_key_of(200, &other, 0x7e0000001010, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	/* anonymous code belongs to its process */
	cp_decode_key_of(100, &jit, 0x10040, &a);
	cp_decode_key_of(200, &jit, 0x10040, &b);
	assert_int_equal(a.dev, 0);
	assert_int_equal(a.ino, 100);
	assert_int_equal(a.off, 0x10040);
	assert_memory_not_equal(&a, &b, sizeof(a));
}

/* Capacity 4 is one set of 4 ways: the fifth key evicts the least recently used. */
static void test_bounded_lru(void **state)
{
	struct cp_decode_cache *c = cp_decode_cache__new(4);
	struct cp_decode_cache_stats st;
	struct cp_decode_key k[5];
	const struct cp_operand *got;

	(void)state;
	assert_non_null(c);
	for (int i = 0; i < 5; i++)
		k[i] = (struct cp_decode_key){ .dev = 1, .ino = 2, .off = 0x100 * (__u64)i };
	for (int i = 0; i < 4; i++) {
		struct cp_operand op = op_with_disp(i);

		cp_decode_cache__insert(c, &k[i], &op);
	}
	/* use 0: 1 is now the least recently used */
	assert_non_null(cp_decode_cache__lookup(c, &k[0]));
	{
		struct cp_operand op = op_with_disp(4);

		cp_decode_cache__insert(c, &k[4], &op);
	}
	assert_null(cp_decode_cache__lookup(c, &k[1]));
	for (int i = 0; i < 5; i++) {
		if (i == 1)
			continue;
		got = cp_decode_cache__lookup(c, &k[i]);
		assert_non_null(got);
		assert_int_equal(got->disp, i);
	}
	/* re-inserting a cached key replaces it in place */
	{
		struct cp_operand op = op_with_disp(40);

		cp_decode_cache__insert(c, &k[4], &op);
	}
	assert_int_equal(cp_decode_cache__lookup(c, &k[4])->disp, 40);
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.hits, 1 + 4 + 1);
	cp_decode_cache__free(c);
}

/*
 * The [vdso] is the kernel's one image in every process, wherever it is
 * mapped: its decoded instructions are shared by offset, and a process's
 * exit leaves them to the others.
 */
static void test_vdso_shared(void **state)
{
	struct cp_map a = { .start = 0x7ffd10000000, .end = 0x7ffd10002000, .kind = CP_MAP_VDSO };
	struct cp_map b = { .start = 0x7fff20000000, .end = 0x7fff20002000, .kind = CP_MAP_VDSO };
	struct cp_map small = { .start = 0xf7f00000, .end = 0xf7f01000, .kind = CP_MAP_VDSO };
	struct cp_decode_cache *c = cp_decode_cache__new(0);
	struct cp_operand op = op_with_disp(7);
	struct cp_decode_key ka, kb, ks;

	(void)state;
	assert_non_null(c);
	cp_decode_key_of(100, &a, a.start + 0x9a0, &ka);
	cp_decode_key_of(200, &b, b.start + 0x9a0, &kb);
	/* another image (a 32-bit process's): another size, another key */
	cp_decode_key_of(300, &small, small.start + 0x9a0, &ks);
	assert_memory_equal(&ka, &kb, sizeof(ka));
	assert_memory_not_equal(&ka, &ks, sizeof(ka));
	cp_decode_cache__insert(c, &ka, &op);
	assert_non_null(cp_decode_cache__lookup(c, &kb));
	assert_null(cp_decode_cache__lookup(c, &ks));
	cp_decode_cache__forget(c, 100);
	assert_non_null(cp_decode_cache__lookup(c, &kb));
	cp_decode_cache__free(c);
}

/*
 * Many processes with code of no file (JIT code), more than
 * the cache's bits for pids, so that pids share bits: each exit takes
 * exactly its own entries, with exits and new entries interleaved, since
 * an exit's look sets the bits again from what it leaves.
 */
static void test_forget_many_pids(void **state)
{
	struct cp_map jit = { .start = 0x7ffd0000, .end = 0x7ffd2000, .kind = CP_MAP_ANON };
	struct cp_decode_cache *c = cp_decode_cache__new(1 << 16);
	struct cp_operand op = op_with_disp(7);
	enum { PIDS = 9000, LIVE = 700 };
	struct cp_decode_key k;
	int dropped = 0;

	(void)state;
	assert_non_null(c);
	for (int pid = 1; pid <= PIDS + LIVE; pid++) {
		if (pid <= PIDS) {
			cp_decode_key_of(pid, &jit, 0x7ffd0000 + (__u64)(pid % 512) * 8, &k);
			cp_decode_cache__insert(c, &k, &op);
		}
		if (pid <= LIVE)
			continue;
		/* the process started LIVE before exits: its entry goes, the younger ones' stay */
		cp_decode_key_of(pid - LIVE, &jit, 0x7ffd0000 + (__u64)((pid - LIVE) % 512) * 8,
				 &k);
		if (!cp_decode_cache__lookup(c, &k))
			dropped++; /* evicted by a set's newer keys: nothing to check */
		cp_decode_cache__forget(c, pid - LIVE);
		assert_null(cp_decode_cache__lookup(c, &k));
		for (int young = pid - LIVE + 1; young <= pid && young <= PIDS; young += 97) {
			cp_decode_key_of(young, &jit, 0x7ffd0000 + (__u64)(young % 512) * 8, &k);
			assert_non_null(cp_decode_cache__lookup(c, &k));
		}
	}
	/* the sets hold these keys: a check that checked nothing would pass */
	assert_true(dropped < PIDS / 100);
	cp_decode_cache__free(c);
}

/*
 * A process exits (or execs) and another takes its pid: the old anonymous
 * code's operands go with it; the file's stay, other processes' too.
 */
static void test_forget_pid(void **state)
{
	struct cp_map jit = { .start = 0x10000, .end = 0x20000, .kind = CP_MAP_ANON };
	struct cp_map lib = { .start = 0x7f0000001000, .end = 0x7f0000005000, .offset = 0x3000,
			      .inode = 100, .dev_major = 8, .dev_minor = 1, .kind = CP_MAP_FILE };
	struct cp_decode_cache *c = cp_decode_cache__new(0);
	struct cp_operand op = op_with_disp(7);
	struct cp_decode_key mine, other, file;

	(void)state;
	assert_non_null(c);
	cp_decode_key_of(100, &jit, 0x10040, &mine);
	cp_decode_key_of(200, &jit, 0x10040, &other);
	/* a file whose inode is the pid's number: still the file's */
	cp_decode_key_of(100, &lib, 0x7f0000001010, &file);
	cp_decode_cache__insert(c, &mine, &op);
	cp_decode_cache__insert(c, &other, &op);
	cp_decode_cache__insert(c, &file, &op);
	cp_decode_cache__forget(c, 100);
	assert_null(cp_decode_cache__lookup(c, &mine));
	assert_non_null(cp_decode_cache__lookup(c, &other));
	assert_non_null(cp_decode_cache__lookup(c, &file));
	/* the cache counts its entries of pids, to skip the look when it has none: one left */
	cp_decode_cache__forget(c, 200);
	assert_null(cp_decode_cache__lookup(c, &other));
	assert_non_null(cp_decode_cache__lookup(c, &file));
	cp_decode_cache__free(c);
}

/*
 * A function's sweep is kept by its entry's key: asked again (another
 * instruction, another process of the file) it is the same, not swept
 * again; a pid's anonymous code's sweeps go with the pid; at most
 * CP_CODE_WALKS are kept, the least recently used going.
 */
static void test_walk_kept(void **state)
{
	/* mov (%rdi),%rax; test %rax,%rax; jne -5 (to the mov); ret */
	static const __u8 loop[] = { 0x48, 0x8b, 0x07, 0x48, 0x85, 0xc0, 0x75, 0xf8, 0xc3 };
	struct cp_map jit = { .start = 0x10000, .end = 0x20000, .kind = CP_MAP_ANON };
	struct cp_map lib = { .start = 0x7f0000000000, .end = 0x7f0000100000, .inode = 100,
			      .dev_major = 8, .dev_minor = 1, .kind = CP_MAP_FILE };
	struct cp_decode_cache *c = cp_decode_cache__new(0);
	const struct cp_code_walk *w, *again;
	struct cp_decode_cache_stats st;
	struct cp_decode_key k, anon;

	(void)state;
	assert_non_null(c);
	cp_decode_key_of(1, &lib, 0x7f0000000100, &k);
	w = cp_decode_cache__walk(c, &k, loop, sizeof(loop));
	assert_non_null(w);
	assert_int_equal(w->nr_starts, 4);
	assert_int_equal(w->starts[3], 8);
	assert_int_equal(w->decoded, sizeof(loop));
	assert_int_equal(w->nr_targets, 1);
	assert_true(cp_code_walk_target(w, 0));
	assert_int_equal(cp_code_walk_prev(w, 6), 3);
	assert_int_equal(cp_code_walk_prev(w, 7), -1);	/* inside the jne */
	assert_int_equal(cp_code_walk_prev(w, 0), -1);
	/* another process of the same file: the same sweep */
	cp_decode_key_of(2, &lib, 0x7f0000000100, &k);
	again = cp_decode_cache__walk(c, &k, loop, sizeof(loop));
	assert_ptr_equal(again, w);
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.walks, 1);
	assert_int_equal(st.walk_hits, 1);
	/* anonymous code's sweep is its pid's */
	cp_decode_key_of(7, &jit, 0x10000, &anon);
	assert_non_null(cp_decode_cache__walk(c, &anon, loop, sizeof(loop)));
	cp_decode_cache__forget(c, 7);
	assert_non_null(cp_decode_cache__walk(c, &anon, loop, sizeof(loop)));
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.walks, 3);
	/* CP_CODE_WALKS other functions push the first out, as the oldest */
	for (int i = 1; i <= CP_CODE_WALKS; i++) {
		struct cp_decode_key f;

		cp_decode_key_of(1, &lib, 0x7f0000000100 + (__u64)i * 64, &f);
		assert_non_null(cp_decode_cache__walk(c, &f, loop, sizeof(loop)));
	}
	cp_decode_key_of(1, &lib, 0x7f0000000100, &k);
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.walks, 3 + CP_CODE_WALKS);
	assert_non_null(cp_decode_cache__walk(c, &k, loop, sizeof(loop)));
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.walks, 4 + CP_CODE_WALKS);
	cp_decode_cache__free(c);
}

/*
 * The same function's key with other bytes (a file rewritten in place) is
 * swept again; a sweep that stops at an undecodable byte still gives the
 * instruction ending there.
 */
static void test_walk_of_the_bytes(void **state)
{
	/* mov (%rdi),%rax; ret / nop; nop; nop; nop */
	static const __u8 one[] = { 0x48, 0x8b, 0x07, 0xc3 };
	static const __u8 other[] = { 0x90, 0x90, 0x90, 0x90 };
	/* mov (%rdi),%rax, then 0x0f 0xff: no instruction */
	static const __u8 cut[] = { 0x48, 0x8b, 0x07, 0x0f, 0xff };
	struct cp_map lib = { .start = 0x7f0000000000, .end = 0x7f0000100000, .inode = 100,
			      .dev_major = 8, .dev_minor = 1, .kind = CP_MAP_FILE };
	struct cp_decode_cache *c = cp_decode_cache__new(0);
	const struct cp_code_walk *w;
	struct cp_decode_key k;

	(void)state;
	assert_non_null(c);
	cp_decode_key_of(1, &lib, 0x7f0000000100, &k);
	w = cp_decode_cache__walk(c, &k, one, sizeof(one));
	assert_int_equal(w->nr_starts, 2);
	w = cp_decode_cache__walk(c, &k, other, sizeof(other));
	assert_int_equal(w->nr_starts, 4);
	assert_int_equal(cp_code_walk_prev(w, 3), 2);
	cp_decode_key_of(1, &lib, 0x7f0000000200, &k);
	w = cp_decode_cache__walk(c, &k, cut, sizeof(cut));
	assert_int_equal(w->decoded, 3);
	assert_int_equal(w->nr_starts, 1);
	assert_int_equal(cp_code_walk_prev(w, 3), 0);
	assert_int_equal(cp_code_walk_prev(w, 4), -1);
	cp_decode_cache__free(c);
}

/*
 * The soft source's charge of an instruction is the code's: kept with its
 * operand, found by another process of the same file, gone when the
 * operand's entry is (evicted, or a pid's anonymous code forgotten), never
 * kept without an operand, and not carried to the key that takes the slot.
 */
static void test_charge_kept_with_operand(void **state)
{
	struct cp_map lib = { .start = 0x7f0000001000, .end = 0x7f0000005000, .offset = 0x3000,
			      .inode = 77, .dev_major = 8, .dev_minor = 1, .kind = CP_MAP_FILE };
	struct cp_map there = lib;
	struct cp_map jit = { .start = 0x10000, .end = 0x20000, .kind = CP_MAP_ANON };
	struct cp_decode_charge ch = { .to_prev = true, .back = 4, .op = op_with_disp(0x18) };
	struct cp_decode_charge got;
	struct cp_decode_cache *c = cp_decode_cache__new(4);
	struct cp_operand op = op_with_disp(7);
	struct cp_decode_key k, k2, anon;
	struct cp_decode_cache_stats st;

	(void)state;
	assert_non_null(c);
	there.start = 0x5000000;
	there.end = 0x5004000;
	cp_decode_key_of(100, &lib, 0x7f0000001010, &k);
	/* no operand, no charge: nothing to keep it with */
	cp_decode_cache__set_charge(c, &k, &ch);
	assert_false(cp_decode_cache__charge(c, &k, &got));
	cp_decode_cache__insert(c, &k, &op);
	assert_false(cp_decode_cache__charge(c, &k, &got));
	cp_decode_cache__set_charge(c, &k, &ch);
	/* process 200 maps the same file elsewhere: the same charge */
	cp_decode_key_of(200, &there, 0x5000010, &k2);
	assert_true(cp_decode_cache__charge(c, &k2, &got));
	assert_true(got.to_prev);
	assert_int_equal(got.back, 4);
	assert_int_equal(got.op.disp, 0x18);
	/* decoded again (the same code): the charge stays */
	cp_decode_cache__insert(c, &k, &op);
	assert_true(cp_decode_cache__charge(c, &k, &got));
	/* a pid's anonymous code: its charge goes with it */
	cp_decode_key_of(100, &jit, 0x10040, &anon);
	cp_decode_cache__insert(c, &anon, &op);
	cp_decode_cache__set_charge(c, &anon, &ch);
	cp_decode_cache__forget(c, 100);
	cp_decode_cache__insert(c, &anon, &op);
	assert_false(cp_decode_cache__charge(c, &anon, &got));
	/* one set of 4 ways: four newer keys evict the file's entry, its charge too */
	for (__u64 i = 1; i <= 4; i++) {
		struct cp_decode_key n = k;

		n.off += i;
		cp_decode_cache__insert(c, &n, &op);
	}
	assert_null(cp_decode_cache__lookup(c, &k));
	assert_false(cp_decode_cache__charge(c, &k, &got));
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.charge_hits, 2);
	cp_decode_cache__free(c);
}

static void test_decodes_own_text_once(void **state)
{
	__u64 ip = (__u64)(uintptr_t)cp_test_decode_insn;
	struct cp_decode_cache *c = cp_decode_cache__new(0);
	struct cp_decode_cache_stats st;
	struct cp_maps *maps = NULL;
	struct cp_operand op;

	(void)state;
	assert_non_null(c);
	assert_int_equal(cp_maps__read(NULL, getpid(), &maps), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cp_decode_cache__get(c, getpid(), maps, ip, &op), 0);
		assert_int_equal(op.status, CP_OPND_OK);
		assert_int_equal(op.disp, 0x18);
		assert_int_equal(op.scale, 8);
		assert_int_equal(op.access, CP_OPND_READ);
		assert_int_equal(op.size, 8);
	}
	cp_decode_cache__stats(c, &st);
	assert_int_equal(st.decodes, 1);
	assert_int_equal(st.hits, 2);
	/* nothing maps page 0 */
	assert_int_equal(cp_decode_cache__get(c, getpid(), maps, 16, &op), -ENOENT);
	cp_maps__free(maps);
	cp_decode_cache__free(c);
	(void)labelled_load;
}

/*
 * The code of this test's own file, read through its mapping: the bytes
 * are the file's at the mapping's offset (read here with plain pread), the
 * file is opened once for every read after the first (one descriptor
 * held), and freeing the cache closes it. Without a cache each read opens
 * and closes it.
 */
static void test_code_file_held(void **state)
{
	__u64 ip = (__u64)(uintptr_t)cp_test_decode_insn;
	struct cp_decode_cache *c = cp_decode_cache__new(0);
	struct cp_maps *maps = NULL;
	const struct cp_map *m;
	__u8 got[16], want[16];
	int fd, before;

	(void)state;
	assert_non_null(c);
	assert_int_equal(cp_maps__read(NULL, getpid(), &maps), 0);
	m = cp_maps__find(maps, ip);
	assert_non_null(m);
	assert_int_equal(m->kind, CP_MAP_FILE);
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, want, sizeof(want), (off_t)(m->offset + (ip - m->start))),
			 sizeof(want));
	close(fd);

	before = count_fds();
	assert_int_equal(cp_insn_read(NULL, getpid(), m, ip, got, sizeof(got)), sizeof(got));
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(count_fds(), before);
	for (int i = 0; i < 3; i++) {
		memset(got, 0, sizeof(got));
		assert_int_equal(cp_insn_read(c, getpid(), m, ip + (__u64)i, got, sizeof(got) - 3),
				 sizeof(got) - 3);
		assert_memory_equal(got, want + i, sizeof(got) - 3);
		assert_int_equal(count_fds(), before + 1);
	}
	cp_decode_cache__free(c);
	assert_int_equal(count_fds(), before);
	cp_maps__free(maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_by_code),
		cmocka_unit_test(test_bounded_lru),
		cmocka_unit_test(test_forget_pid),
		cmocka_unit_test(test_forget_many_pids),
		cmocka_unit_test(test_vdso_shared),
		cmocka_unit_test(test_walk_kept),
		cmocka_unit_test(test_walk_of_the_bytes),
		cmocka_unit_test(test_charge_kept_with_operand),
		cmocka_unit_test(test_decodes_own_text_once),
		cmocka_unit_test(test_code_file_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
