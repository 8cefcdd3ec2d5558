// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The samples' call stacks on real events (root): on_mem_sample on a
 * page-fault software event (sample_period 1) of this process, whose one
 * faulting store sits at the end of a known chain. Each fault must be
 * counted once on the stack that made it, with the chain's return
 * addresses in order; two paths into the store must give two stacks with
 * the faults each made; and the sweep must empty the stack map once no
 * counter uses its stacks, so it never fills on a long run. The walk's rules
 * are tried on frame chains built here: where it follows, where it stops,
 * and what a bucket taken by another stack does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/page_faults.h"
#include "lib/require_root.h"

#include "cacheperf/abi.h"
#include "cacheperf/stack_walk.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "live/mem_prog.h"
#include "live/stack_drain.h"

#define PAGES 48

static volatile int depth; /* work after each call: no tail calls, frames kept */
/* the return address each chain function was last called with: the frames to expect */
static void *volatile ret_touch, *volatile ret_c, *volatile ret_b, *volatile ret_a,
									   *volatile ret_other;

/*
 * The tests build with -O2, which omits frame pointers, turns a last call
 * into a jump and sets a frame up only on the path that needs one: the
 * chain keeps its frames, as the workloads' -O1 -fno-omit-frame-pointer do.
 */
#define CHAIN                                                                                      \
	__attribute__((noinline, optimize("no-omit-frame-pointer", "no-optimize-sibling-calls",    \
					  "no-shrink-wrap")))

/* Not a leaf, so it sets up its frame: the walk then finds its caller. */
static CHAIN void note(void)
{
	depth++;
}

static CHAIN void touch(char *mem, long page, int pages)
{
	ret_touch = __builtin_return_address(0);
	for (int i = 0; i < pages; i++)
		((volatile char *)mem)[i * page] = 1;
	note();
}

static CHAIN void chain_c(char *mem, long page, int pages)
{
	ret_c = __builtin_return_address(0);
	touch(mem, page, pages);
	depth++;
}

static CHAIN void chain_b(char *mem, long page, int pages)
{
	ret_b = __builtin_return_address(0);
	chain_c(mem, page, pages);
	depth++;
}

static CHAIN void chain_a(char *mem, long page, int pages)
{
	ret_a = __builtin_return_address(0);
	chain_b(mem, page, pages);
	depth++;
}

/* A second way in: other_path -> chain_c -> touch. */
static CHAIN void other_path(char *mem, long page, int pages)
{
	ret_other = __builtin_return_address(0);
	chain_c(mem, page, pages);
	depth++;
}

struct env {
	struct cacheperf *skel;
	struct bpf_link *link;
	struct cp_stack_drain *sd;
	int pfd;
	long page;
};

static void env_open(struct env *e)
{
	__u32 self = getpid();
	__u8 one = 1;
	int variant;

	memset(e, 0, sizeof(*e));
	e->page = sysconf(_SC_PAGESIZE);
	e->skel = cacheperf__open();
	assert_non_null(e->skel);
	e->skel->rodata->targ_forward_all = true;
	e->skel->rodata->targ_filter_tgid = true;
	variant = cp_mem_prog_select(e->skel);
	assert_true(variant == CP_MEM_PROG_KFUNC || variant == CP_MEM_PROG_COMPAT);
	assert_int_equal(cp_mem_prog_size_windows(e->skel), 0);
	assert_int_equal(cacheperf__load(e->skel), 0);
	assert_int_equal(bpf_map__update_elem(e->skel->maps.targ_tgids, &self, sizeof(self), &one,
					      sizeof(one), BPF_ANY),
			 0);
	e->sd = cp_stack_drain__new(e->skel);
	assert_non_null(e->sd);
	e->pfd = cp_test_open_page_faults(PERF_SAMPLE_ADDR);
	assert_true(e->pfd >= 0);
	e->link = bpf_program__attach_perf_event(cp_mem_prog(e->skel, variant), e->pfd);
	assert_non_null(e->link);
}

static void env_close(struct env *e)
{
	bpf_link__destroy(e->link);
	close(e->pfd);
	cp_stack_drain__free(e->sd);
	cacheperf__destroy(e->skel);
}

/* Runs @fn over @pages fresh pages with the event on. */
static void fault_through(struct env *e, void (*fn)(char *, long, int), int pages)
{
	char *mem = mmap(NULL, pages * e->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	assert_true(mem != MAP_FAILED);
	assert_int_equal(ioctl(e->pfd, PERF_EVENT_IOC_ENABLE, 0), 0);
	fn(mem, e->page, pages);
	assert_int_equal(ioctl(e->pfd, PERF_EVENT_IOC_DISABLE, 0), 0);
	munmap(mem, pages * e->page);
}

/* The return address @p as a frame. */
static __u64 pc(void *p)
{
	return (__u64)(uintptr_t)p;
}

/* True when @ip is one of touch()'s instructions: its code lies before chain_c()'s. */
static bool in_touch(__u64 ip)
{
	return ip > pc((void *)touch) && ip < pc((void *)chain_c);
}

/* The entries taken whose first frame is in touch(): the store's stacks. */
static size_t take_touch(struct env *e, struct cp_stack_sample *out, size_t cap)
{
	static struct cp_stack_sample all[256];
	size_t moved, n = 0;

	assert_true(cp_stack_drain__take(e->sd, all, 256, &moved) >= 0);
	for (size_t i = 0; i < moved; i++)
		if (in_touch(all[i].pcs[0]) && n < cap)
			out[n++] = all[i];
	return n;
}

static void test_chain_of_a_fault(void **state)
{
	struct cp_stack_sample got[4];
	struct cp_stats st;
	struct env e;
	size_t n;

	(void)state;
	REQUIRE_ROOT();
	env_open(&e);
	fault_through(&e, chain_a, PAGES);
	n = take_touch(&e, got, 4);
	/* one store, one stack: every fault counted on it once */
	assert_int_equal(n, 1);
	assert_int_equal(got[0].tgid, getpid());
	assert_int_equal(got[0].c.samples, PAGES);
	assert_int_equal(got[0].c.ticks, 0);
	assert_int_equal(got[0].c.bp_hits, 0);
	/* the return addresses, innermost first: touch's caller, then up the chain */
	assert_true(got[0].nr >= 5);
	assert_int_equal(got[0].pcs[1], pc(ret_touch));
	assert_int_equal(got[0].pcs[2], pc(ret_c));
	assert_int_equal(got[0].pcs[3], pc(ret_b));
	assert_int_equal(got[0].pcs[4], pc(ret_a));
	memcpy(&st, &e.skel->bss->stats, sizeof(st));
	assert_int_equal(st.drop_stack_map, 0);
	assert_int_equal(st.drop_stack_counts, 0);
	env_close(&e);
}

static void test_two_paths_two_stacks(void **state)
{
	struct cp_stack_sample got[4];
	struct env e;
	size_t n, a, b;

	(void)state;
	REQUIRE_ROOT();
	env_open(&e);
	__u64 via_b, via_other;

	fault_through(&e, chain_a, PAGES);
	via_b = pc(ret_c); /* chain_c's return into chain_b */
	fault_through(&e, other_path, PAGES / 2);
	via_other = pc(ret_c); /* ... and into other_path */
	assert_int_not_equal(via_b, via_other);
	n = take_touch(&e, got, 4);
	assert_int_equal(n, 2);
	a = got[0].pcs[2] == via_b ? 0 : 1;
	b = 1 - a;
	assert_int_equal(got[a].pcs[2], via_b);
	assert_int_equal(got[a].pcs[3], pc(ret_b));
	assert_int_equal(got[a].c.samples, PAGES);
	assert_int_equal(got[b].pcs[1], pc(ret_touch));
	assert_int_equal(got[b].pcs[2], via_other);
	assert_int_equal(got[b].pcs[3], pc(ret_other));
	assert_int_equal(got[b].c.samples, PAGES / 2);
	env_close(&e);
}

static unsigned int stack_map_entries(struct env *e)
{
	int fd = bpf_map__fd(e->skel->maps.sample_stacks);
	unsigned int n = 0;
	__u32 id[2];

	while (n < CP_MAX_SAMPLE_STACKS &&
	       !bpf_map_get_next_key(fd, n ? &id[(n - 1) & 1] : NULL, &id[n & 1]))
		n++;
	return n;
}

static void test_sweep_empties_the_stack_map(void **state)
{
	struct cp_stack_sample got[4];
	struct env e;

	(void)state;
	REQUIRE_ROOT();
	env_open(&e);
	fault_through(&e, chain_a, PAGES);
	assert_int_equal(take_touch(&e, got, 4), 1);
	/* the interval used the stack: it stays, its frames known */
	cp_stack_drain__sweep(e.sd);
	assert_true(stack_map_entries(&e) >= 1);
	/* the same stack again: the same id, counted without a new read */
	fault_through(&e, chain_a, PAGES);
	assert_int_equal(take_touch(&e, got, 4), 1);
	assert_int_equal(got[0].c.samples, PAGES);
	assert_int_equal(got[0].pcs[3], pc(ret_b));
	cp_stack_drain__sweep(e.sd);
	/* one interval with no sample spares it (see below), a second one does not */
	assert_int_equal(cp_stack_drain__sweep(e.sd), 0);
	assert_true(cp_stack_drain__sweep(e.sd) >= 1);
	assert_int_equal(stack_map_entries(&e), 0);
	assert_int_equal(cp_stack_drain__lost(e.sd), 0);
	env_close(&e);
}

/*
 * A stack BPF makes after an interval's take and before its sweep: its
 * counter waits for the next take, so the sweep must not delete it. It
 * did, and every sample of that stack was lost ("gone from the stack map
 * when taken"): test_callers' second path, 256 faults, in a CI run beside
 * two CPU hogs.
 */
static void test_sweep_spares_a_stack_made_after_the_take(void **state)
{
	struct cp_stack_sample got[4];
	struct env e;

	(void)state;
	REQUIRE_ROOT();
	env_open(&e);
	assert_int_equal(take_touch(&e, got, 4), 0);
	fault_through(&e, chain_a, PAGES);
	cp_stack_drain__sweep(e.sd);
	assert_int_equal(take_touch(&e, got, 4), 1);
	assert_int_equal(got[0].c.samples, PAGES);
	assert_int_equal(got[0].pcs[3], pc(ret_b));
	assert_int_equal(cp_stack_drain__lost(e.sd), 0);
	env_close(&e);
}

/* The walk tests' fixture: the skeleton with test_stack_walk loaded, nothing attached. */
static int walk_setup(void **state)
{
	struct cacheperf *skel;

	*state = NULL;
	if (geteuid() != 0)
		return 0; /* the test skips */
	skel = cacheperf__open();
	if (!skel || bpf_program__set_autoload(skel->progs.test_stack_walk, true) ||
	    cp_mem_prog_size_windows(skel) || cacheperf__load(skel)) {
		cacheperf__destroy(skel);
		return -1;
	}
	*state = skel;
	return 0;
}

static int walk_teardown(void **state)
{
	cacheperf__destroy(*state);
	return 0;
}

/* Walks from @ip, @fp, @sp in this process: cp_stack_stored()'s answer. */
static long walk(struct cacheperf *skel, __u64 ip, void *fp, void *sp)
{
	__u64 args[3] = {ip, pc(fp), pc(sp)};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	assert_int_equal(
		bpf_prog_test_run_opts(bpf_program__fd(skel->progs.test_stack_walk), &opts), 0);
	return (int)opts.retval;
}

/* The frames stored under @id, and how many there are before the first zero. */
static int stored(struct cacheperf *skel, long id, __u64 pcs[CP_STACK_DEPTH])
{
	__u32 key = (__u32)id;
	int n = 0;

	memset(pcs, 0, CP_STACK_DEPTH * sizeof(*pcs));
	assert_true(id >= 0 && id < CP_MAX_SAMPLE_STACKS);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.sample_stacks), &key, pcs), 0);
	while (n < CP_STACK_DEPTH && pcs[n])
		n++;
	for (int i = n; i < CP_STACK_DEPTH; i++)
		assert_int_equal(pcs[i], 0);
	return n;
}

/* Frame record @i of @f links to record @next (-1: a null frame pointer), returning to @ret. */
static void link_frame(struct cp_fp_frame *f, int i, int next, __u64 ret)
{
	f[i].next = next < 0 ? 0 : pc(&f[next]);
	f[i].ret = ret;
}

/* Records @at[0] -> @at[1] -> ... -> null, returning to @ret, @ret + 0x1111, ... */
static void link_chain(struct cp_fp_frame *f, const int *at, int n, __u64 ret)
{
	for (int i = 0; i < n; i++)
		link_frame(f, at[i], i + 1 < n ? at[i + 1] : -1, ret + i * 0x1111);
}

/*
 * A chain of frame records up the stack, ending in a null frame pointer:
 * every return address in order after the pc, and nothing past the null.
 * The same walk again is the same id.
 */
static void test_walk_follows_a_chain(void **state)
{
	struct cacheperf *skel = ROOT_FIXTURE(struct cacheperf, state);
	struct cp_fp_frame f[8];
	__u64 pcs[CP_STACK_DEPTH];
	long id;

	link_chain(f, (const int[]){1, 3, 4}, 3, 0x401111);
	id = walk(skel, 0x400123, &f[1], &f[0]);
	assert_int_equal(stored(skel, id, pcs), 4);
	assert_int_equal(pcs[0], 0x400123);
	assert_int_equal(pcs[1], 0x401111);
	assert_int_equal(pcs[2], 0x402222);
	assert_int_equal(pcs[3], 0x403333);
	assert_int_equal(walk(skel, 0x400123, &f[1], &f[0]), id);
}

/*
 * Where a frame pointer cannot be one, the walk stops before reading it: a
 * link down the stack (which the kernel's walk follows into a loop), a
 * misaligned one, a first frame below the stack pointer, and no more than
 * CP_STACK_DEPTH frames of a longer chain.
 */
static void test_walk_stops_where_a_frame_cannot_be(void **state)
{
	struct cacheperf *skel = ROOT_FIXTURE(struct cacheperf, state);
	struct cp_fp_frame f[48];
	__u64 pcs[CP_STACK_DEPTH];
	int i;

	/* 2 -> 5 -> back down to 3 (a record with a return address) -> 6 */
	link_chain(f, (const int[]){2, 5, 3, 6}, 4, 0x411111);
	assert_int_equal(stored(skel, walk(skel, 0x410000, &f[2], &f[0]), pcs), 3);
	assert_int_equal(pcs[2], 0x412222);
	/* misaligned: the record at 6, one byte on */
	f[5].next = pc(&f[6]) + 1;
	assert_int_equal(stored(skel, walk(skel, 0x410000, &f[2], &f[0]), pcs), 3);
	/* the first record below the stack pointer: the pc alone */
	assert_int_equal(stored(skel, walk(skel, 0x410000, &f[2], &f[3]), pcs), 1);
	/* a null frame pointer: the pc alone */
	assert_int_equal(stored(skel, walk(skel, 0x410001, NULL, &f[0]), pcs), 1);
	/* 47 records up the stack: the pc and 31 return addresses, the innermost */
	for (i = 0; i < 47; i++)
		link_frame(f, i, i + 1 < 47 ? i + 1 : -1, 0x420000 + i);
	assert_int_equal(stored(skel, walk(skel, 0x41ffff, &f[0], &f[0]), pcs), CP_STACK_DEPTH);
	assert_int_equal(pcs[1], 0x420000);
	assert_int_equal(pcs[CP_STACK_DEPTH - 1], 0x420000 + CP_STACK_DEPTH - 2);
}

/* Another one-frame stack after @prev whose first bucket is @home's (one pc in 16384 is). */
static __u64 same_home(__u64 prev, __u64 home_pc)
{
	__u64 a[CP_STACK_DEPTH] = {home_pc}, b[CP_STACK_DEPTH] = {prev + 1};

	while (cp_stack_bucket(b, CP_MAX_SAMPLE_STACKS) != cp_stack_bucket(a, CP_MAX_SAMPLE_STACKS))
		b[0]++;
	return b[0];
}

/*
 * Stacks whose frames hash to one bucket: the first keeps it, each next
 * one takes the next free bucket of its CP_STACK_PROBES (its id), and the
 * same walk again finds its own; with all of them held by other stacks a
 * walk is refused (-EEXIST, counted by cp_stack_counted() as a full stack
 * map) and the others keep their ids and frames. No pc at all is no stack
 * (-EFAULT).
 */
static void test_walk_bucket_taken(void **state)
{
	struct cacheperf *skel = ROOT_FIXTURE(struct cacheperf, state);
	__u64 pcs[CP_STACK_DEPTH], same[CP_STACK_PROBES + 1] = {0x500000};
	long id[CP_STACK_PROBES];

	for (int k = 1; k <= CP_STACK_PROBES; k++)
		same[k] = same_home(same[k - 1], same[0]);
	for (int k = 0; k < CP_STACK_PROBES; k++) {
		id[k] = walk(skel, same[k], NULL, NULL);
		assert_int_equal(id[k], cp_stack_probe((__u32)id[0], k, CP_MAX_SAMPLE_STACKS));
		assert_int_equal(stored(skel, id[k], pcs), 1);
		assert_int_equal(pcs[0], same[k]);
	}
	assert_int_equal(walk(skel, same[CP_STACK_PROBES], NULL, NULL), -EEXIST);
	for (int k = CP_STACK_PROBES - 1; k >= 0; k--) {
		assert_int_equal(walk(skel, same[k], NULL, NULL), id[k]);
		assert_int_equal(stored(skel, id[k], pcs), 1);
		assert_int_equal(pcs[0], same[k]);
	}
	assert_int_equal(walk(skel, 0, NULL, NULL), -EFAULT);
}

/*
 * A path whose bucket an earlier stack holds loses none of its samples: the
 * same faults through chain_a, in a fresh skeleton, once as they come and
 * once with the bucket of their stack taken first by another. With one
 * bucket a stack, every fault of the path was a drop: test_callers' path_a
 * (512 faults, the whole of its share) in a CI run, one in ~270 runs.
 */
static void test_taken_bucket_loses_no_path(void **state)
{
	__u64 home_pcs[CP_STACK_DEPTH] = {0}, other[CP_STACK_DEPTH] = {0x7000, 0x7001};
	struct cp_stack_sample got[4];
	struct cp_stats st;
	__u32 home = 0;
	struct env e;

	(void)state;
	REQUIRE_ROOT();
	for (int round = 0; round < 2; round++) {
		env_open(&e);
		if (round)
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(e.skel->maps.sample_stacks),
							     &home, other, BPF_NOEXIST),
					 0);
		/* one call site for both rounds: the same frames, the same bucket */
		fault_through(&e, chain_a, PAGES);
		assert_int_equal(take_touch(&e, got, 4), 1);
		assert_int_equal(got[0].c.samples, PAGES);
		assert_int_equal(got[0].pcs[3], pc(ret_b));
		memcpy(&st, &e.skel->bss->stats, sizeof(st));
		assert_int_equal(st.drop_stack_map, 0);
		assert_int_equal(cp_stack_drain__lost(e.sd), 0);
		/* the path walked into the bucket taken: the very frames of the first round */
		if (round)
			assert_memory_equal(home_pcs, got[0].pcs, got[0].nr * sizeof(got[0].pcs[0]));
		memcpy(home_pcs, got[0].pcs, got[0].nr * sizeof(got[0].pcs[0]));
		home = cp_stack_bucket(home_pcs, CP_MAX_SAMPLE_STACKS);
		env_close(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_of_a_fault),
		cmocka_unit_test(test_two_paths_two_stacks),
		cmocka_unit_test(test_sweep_empties_the_stack_map),
		cmocka_unit_test(test_sweep_spares_a_stack_made_after_the_take),
		cmocka_unit_test(test_taken_bucket_loses_no_path),
		cmocka_unit_test_setup_teardown(test_walk_follows_a_chain, walk_setup,
						walk_teardown),
		cmocka_unit_test_setup_teardown(test_walk_stops_where_a_frame_cannot_be, walk_setup,
						walk_teardown),
		cmocka_unit_test_setup_teardown(test_walk_bucket_taken, walk_setup, walk_teardown),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
