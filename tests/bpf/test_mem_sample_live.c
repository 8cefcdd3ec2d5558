// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The perf_event programs on real events (root). There is no PMU here, but a
 * page-fault software event with sample_period 1 runs the same program with a
 * real data address (DESIGN.md), so both variants are checked end to end:
 * the kfunc one and the compat one must report the faulting addresses, the
 * faulting instruction and this process, with data_src "not available".
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
#include "cacheperf/data_src.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "live/mem_prog.h"

#define PAGES	32

struct seen {
	__u64 base;
	long page;
	__u64 addr[PAGES];
	__u64 ip[PAGES];
	__u64 data_src[PAGES];
	__u32 flags[PAGES];
	__u32 tgid[PAGES], tid[PAGES];
	unsigned int n, others;
};

static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct seen *seen = ctx;

	if (s->addr < seen->base || s->addr >= seen->base + PAGES * seen->page) {
		seen->others++;		/* this process's other faults (stack, heap) */
		return 0;
	}
	if (seen->n < PAGES) {
		seen->addr[seen->n] = s->addr;
		seen->ip[seen->n] = s->ip;
		seen->data_src[seen->n] = s->data_src;
		seen->flags[seen->n] = s->flags;
		seen->tgid[seen->n] = s->tgid;
		seen->tid[seen->n] = s->tid;
	}
	seen->n++;
	return 0;
}

/* One store instruction for every page: every fault has the same ip. */
static __attribute__((noinline)) void touch(volatile char *p)
{
	*p = 1;
}


/*
 * Loads @variant in forward-all (or window) mode for this process only, faults
 * in PAGES fresh pages with the event enabled, and collects what came out.
 */
static void run_variant(enum cp_mem_prog variant, bool forward_all, __u64 sample_type,
			__u64 cookie, struct seen *seen, struct cp_stats *st)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	struct cp_record_ops ops = { .sample = on_sample, .ctx = seen };
	struct bpf_link *link;
	struct cacheperf *skel;
	struct cp_drain *d;
	__u32 self = getpid();
	__u8 one = 1;
	char *mem;
	int pfd;

	memset(seen, 0, sizeof(*seen));
	seen->page = sysconf(_SC_PAGESIZE);
	skel = cacheperf__open();
	assert_non_null(skel);
	skel->rodata->targ_forward_all = forward_all;
	skel->rodata->targ_filter_tgid = true;
	assert_int_equal(cp_mem_prog_force(skel, variant), 0);
	assert_int_equal(cp_mem_prog_size_windows(skel), 0);
	assert_int_equal(cacheperf__load(skel), 0);
	assert_int_equal(bpf_map__update_elem(skel->maps.targ_tgids, &self, sizeof(self),
					      &one, sizeof(one), BPF_ANY), 0);
	d = cp_drain__new(skel, &ops);
	assert_non_null(d);

	mem = mmap(NULL, PAGES * seen->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	seen->base = (__u64)(uintptr_t)mem;
	pfd = cp_test_open_page_faults(sample_type);
	assert_true(pfd >= 0);
	link = bpf_program__attach_perf_event_opts(cp_mem_prog(skel, variant), pfd, &opts);
	assert_non_null(link);
	assert_int_equal(ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0), 0);
	for (int i = 0; i < PAGES; i++)
		touch(mem + i * seen->page + 8 * i);
	assert_int_equal(ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0), 0);
	assert_true(cp_drain__poll(d, 100) >= 0);
	cp_drain__stats(d, st);
	assert_int_equal(cp_drain__malformed(d), 0);

	bpf_link__destroy(link);
	close(pfd);
	munmap(mem, PAGES * seen->page);
	cp_drain__free(d);
	cacheperf__destroy(skel);
}

/* Every page faulted once, in order, from the one store in touch(), by us. */
static void expect_faults(const struct seen *seen, __u64 data_src)
{
	assert_int_equal(seen->n, PAGES);
	for (int i = 0; i < PAGES; i++) {
		assert_int_equal(seen->addr[i], seen->base + i * seen->page + 8 * i);
		assert_int_equal(seen->ip[i], seen->ip[0]);
		assert_int_equal(seen->tgid[i], getpid());
		assert_int_equal(seen->tid[i], getpid());
		assert_int_equal(seen->data_src[i], data_src);
		/* a software event has no op: no store flag; level unknown */
		assert_int_equal(seen->flags[i], CP_SAMPLE_ALL | CP_SAMPLE_NA);
	}
	/* the store is in touch(), not somewhere else */
	assert_true(seen->ip[0] >= (__u64)(uintptr_t)touch &&
		    seen->ip[0] < (__u64)(uintptr_t)touch + 64);
}

static void check_variant(enum cp_mem_prog variant)
{
	struct cp_stats st;
	struct seen seen;

	/* data_src requested: the kernel fills its "not available" value */
	run_variant(variant, true, PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT, 0,
		    &seen, &st);
	expect_faults(&seen, CP_MEM_NA_KERNEL);
	assert_int_equal(st.forwarded, PAGES + seen.others);
	assert_int_equal(st.samples[CP_ACCESS_LOAD], PAGES + seen.others);
	assert_int_equal(st.na[CP_ACCESS_LOAD], PAGES + seen.others);
	assert_int_equal(st.drop_ringbuf, 0);
	/* not requested: the program must not read stale data_src, it says NA itself */
	run_variant(variant, true, PERF_SAMPLE_ADDR, 0, &seen, &st);
	expect_faults(&seen, CP_MEM_NA_KERNEL);
	/* without forward-all, samples without a load/store op are not memory accesses */
	run_variant(variant, false, PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC, 0, &seen, &st);
	assert_int_equal(seen.n, 0);
	assert_int_equal(st.forwarded, 0);
	assert_true(st.not_mem >= PAGES);
	/*
	 * The link's bpf_cookie names the event (what perf_events.c attaches
	 * mem-stores with): the same faults are stores now, of unknown level
	 */
	run_variant(variant, false, PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC, CP_SEV_STORE, &seen,
		    &st);
	assert_int_equal(st.not_mem, 0);
	assert_true(st.samples[CP_ACCESS_STORE] >= PAGES);
	assert_int_equal(st.samples[CP_ACCESS_LOAD], 0);
	assert_int_equal(st.na[CP_ACCESS_STORE], st.samples[CP_ACCESS_STORE]);
}

static void test_kfunc_variant_on_page_faults(void **state)
{
	(void)state;
	REQUIRE_ROOT();
	check_variant(CP_MEM_PROG_KFUNC);
}

static void test_compat_variant_on_page_faults(void **state)
{
	(void)state;
	REQUIRE_ROOT();
	check_variant(CP_MEM_PROG_COMPAT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kfunc_variant_on_page_faults),
		cmocka_unit_test(test_compat_variant_on_page_faults),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
