// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Object store throughput and footprint with a million live objects.
 *
 * Addresses are laid out the way a bump/size-class allocator would hand
 * them out (16-byte aligned, packed, with occasional gaps), sizes drawn
 * from a mix dominated by small objects as the paper observes (§3.4), plus
 * two extremes: all 64-byte objects (page level only) and all 2 MiB objects
 * (huge level only). Prints inserts/s, lookups/s (hits inside objects and
 * random probes), removes/s, evicting inserts/s, and bytes per object both
 * as the store counts them and as malloc reports them (mallinfo2).
 *
 * usage: object_store_bench [NR_OBJECTS]   (default 1048576)
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "objects/object_store.h"
#include "objects/objects.h"

#define BASE	0x7f0000000000ull

enum mix { MIX_REAL, MIX_SMALL, MIX_HUGE };

static __u64 size_for(enum mix mix, __u64 *x)
{
	__u64 r = rnd(x) % 1000;

	switch (mix) {
	case MIX_SMALL:
		return 64;
	case MIX_HUGE:
		return 2ull << 20;
	default:
		if (r < 800)
			return 16 + rnd(x) % 241;		/* 16..256 B */
		if (r < 970)
			return 257 + rnd(x) % 8000;		/* up to ~8 KiB */
		if (r < 999)
			return 8192 + rnd(x) % (256 << 10);	/* up to 264 KiB */
		return (1 << 20) + rnd(x) % (8 << 20);		/* 1-9 MiB */
	}
}

/* Packed like an allocator's heap: 16-byte aligned, 1 in 64 followed by a gap. */
static void layout(struct cp_object *objs, size_t n, enum mix mix, __u64 seed)
{
	__u64 x = seed, at = BASE;

	for (size_t i = 0; i < n; i++) {
		objs[i].start = at;
		objs[i].size = size_for(mix, &x);
		objs[i].tid = (__u32)(i % 64);
		objs[i].kind = CP_OBJ_HEAP;
		objs[i].callsite = i % 4096 + 1;
		objs[i].alloc_ns = i;
		at += (objs[i].size + 15) & ~15ull;
		if (rnd(&x) % 64 == 0)
			at += 16 * (1 + rnd(&x) % 256);
	}
}

static void shuffle(struct cp_object *objs, size_t n, __u64 seed)
{
	__u64 x = seed;

	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rnd(&x) % (i + 1);
		struct cp_object t = objs[i];

		objs[i] = objs[j];
		objs[j] = t;
	}
}

static int run(const char *name, enum mix mix, size_t n)
{
	struct cp_object *objs = malloc(n * sizeof(*objs));
	__u64 *probes = malloc(n * sizeof(*probes));
	struct cp_object_store *s;
	struct mallinfo2 before, after;
	__u64 x = 0x1234567, found = 0, span;
	double t0, t_ins, t_hit, t_rand, t_rm, t_evict;
	size_t mem;

	if (!objs || !probes)
		return 1;
	layout(objs, n, mix, 42);
	span = objs[n - 1].start + objs[n - 1].size - BASE;
	/* allocation order is not address order in a real heap */
	shuffle(objs, n, 7);

	before = mallinfo2();
	s = cp_object_store__new(n);
	if (!s)
		return 1;
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		if (cp_object_store__add(s, &objs[i]))
			return 1;
	t_ins = now_s() - t0;
	after = mallinfo2();
	mem = cp_object_store__mem_bytes(s);

	for (size_t i = 0; i < n; i++) {
		const struct cp_object *o = &objs[rnd(&x) % n];

		probes[i] = o->start + rnd(&x) % o->size;
	}
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		found += cp_object_store__find(s, probes[i]) != NULL;
	t_hit = now_s() - t0;
	if (found != n) {
		fprintf(stderr, "%s: %llu of %zu hits found\n", name, (unsigned long long)found, n);
		return 1;
	}

	for (size_t i = 0; i < n; i++)
		probes[i] = BASE + rnd(&x) % span;
	found = 0;
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		found += cp_object_store__find(s, probes[i]) != NULL;
	t_rand = now_s() - t0;

	/* past the cap: every insert evicts the oldest object */
	for (size_t i = 0; i < n; i++)
		objs[i].start += span + (1ull << 30);
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		if (cp_object_store__add(s, &objs[i]))
			return 1;
	t_evict = now_s() - t0;

	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		if (cp_object_store__remove(s, objs[i].start, NULL))
			return 1;
	t_rm = now_s() - t0;

	printf("%-22s %9.2f %9.2f %9.2f %9.2f %9.2f %8.1f %8.1f %6.1f%%\n", name,
	       n / t_ins / 1e6, n / t_hit / 1e6, n / t_rand / 1e6, n / t_evict / 1e6,
	       n / t_rm / 1e6, (double)mem / n,
	       (double)(after.uordblks + after.hblkhd - before.uordblks - before.hblkhd) / n,
	       100.0 * found / n);
	cp_object_store__free(s);
	free(objs);
	free(probes);
	return 0;
}

static int bench_global[1024];

/*
 * The classifier's entry point on this process: a tracked heap object, a
 * global (module + symbol search) and a before-attach heap address (all
 * levels miss, then maps). Includes copying the name strings out.
 */
static int run_resolve(size_t n)
{
	struct cp_objects *o = cp_objects__new(NULL);
	char *early = malloc(4096);
	struct cp_object obj = { .start = BASE, .size = 64, .kind = CP_OBJ_HEAP, .tid = 1 };
	const struct { const char *what; __u64 addr; enum cp_obj_kind kind; } cases[] = {
		{ "tracked heap object", BASE + 8, CP_OBJ_HEAP },
		{ "global variable", (__u64)(uintptr_t)&bench_global[100], CP_OBJ_GLOBAL },
		{ "heap before attach", (__u64)(uintptr_t)early, CP_OBJ_UNKNOWN },
	};

	if (!o || !early || cp_objects__on_alloc(o, getpid(), &obj))
		return 1;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct cp_resolved r;
		double t0 = now_s(), t;

		for (size_t i = 0; i < n; i++)
			cp_objects__resolve(o, getpid(), cases[c].addr, &r);
		t = now_s() - t0;
		if (r.kind != cases[c].kind) {
			fprintf(stderr, "%s resolved as %s\n", cases[c].what,
				cp_object_kind_name(r.kind));
			return 1;
		}
		printf("resolve %-22s %9.2f M/s  (%.0f ns)\n", cases[c].what, n / t / 1e6,
		       t / n * 1e9);
	}
	free(early);
	cp_objects__free(o);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (1u << 20);

	if (n < 2) {
		fprintf(stderr, "usage: %s [NR_OBJECTS >= 2]\n", argv[0]);
		return 2;
	}
	printf("object store, %zu live objects; rates in millions per second, "
	       "memory in bytes per object\n", n);
	printf("%-22s %9s %9s %9s %9s %9s %8s %8s %7s\n", "mix", "insert", "find-hit",
	       "find-rand", "ins+evict", "remove", "B/obj", "malloc", "rand-hit");
	return run("realistic (80% <=256B)", MIX_REAL, n) ||
	       run("all 64 B (page level)", MIX_SMALL, n) ||
	       run("all 2 MiB (huge tree)", MIX_HUGE, n) || run_resolve(n);
}
