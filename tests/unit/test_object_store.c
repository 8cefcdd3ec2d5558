// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Object store: every level's boundaries, frees, the cap, stale overlaps,
 * realloc, a randomized differential run against a linear list, and the
 * replay's hints changing no answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "objects/object_store.h"

#define PAGE	(1ull << CP_OBJ_PAGE_SHIFT)
#define CHUNK	(1ull << CP_OBJ_CHUNK_SHIFT)
#define BASE	0x7f3a00000000ull	/* chunk-aligned, like a glibc arena */

static struct cp_object obj(__u64 start, __u64 size, __u32 tid)
{
	struct cp_object o = {
		.start = start, .size = size, .tid = tid, .kind = CP_OBJ_HEAP,
		.callsite = 1000 + tid, .alloc_ns = tid,
	};

	return o;
}

static struct cp_object_store_stats stats(const struct cp_object_store *s)
{
	struct cp_object_store_stats st;

	cp_object_store__stats(s, &st);
	return st;
}

/* find() must give the object starting at @start (0: nothing) */
#define assert_finds(s, addr, want_start)					\
	do {									\
		const struct cp_object *_o = cp_object_store__find(s, addr);	\
		if (want_start)							\
			assert_non_null(_o);					\
		if (_o)								\
			assert_int_equal(_o->start, (want_start));		\
		else								\
			assert_int_equal(0, (want_start));			\
	} while (0)

static void test_kind_names(void **state)
{
	static const struct { enum cp_obj_kind k; const char *name; } cases[] = {
		{ CP_OBJ_UNKNOWN, "unknown" }, { CP_OBJ_HEAP, "heap" },
		{ CP_OBJ_MAPPING, "mapping" }, { CP_OBJ_GLOBAL, "global" },
		{ CP_OBJ_TLS, "tls" }, { CP_OBJ_STACK, "stack" }, { CP_OBJ_KIND_NR, "?" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(cp_object_kind_name(cases[i].k), cases[i].name);
}

/*
 * One object per row, alone in a store: its first and last byte find it,
 * the byte before and the byte one past the end do not.
 */
static void test_boundaries_per_level(void **state)
{
	static const struct { const char *what; __u64 start, size; } cases[] = {
		{ "inside one page", BASE + 0x1010, 48 },
		{ "fills a page exactly", BASE + PAGE, PAGE },
		{ "ends on the page's last byte", BASE + 2 * PAGE - 16, 16 },
		{ "spans two pages", BASE + PAGE - 8, 16 },
		{ "spans many pages in a chunk", BASE + 0x1800, 40 * PAGE },
		{ "fills a chunk exactly", BASE + CHUNK, CHUNK },
		{ "spans two chunks", BASE + CHUNK - 64, 128 },
		{ "huge (8 MiB)", BASE + 3 * CHUNK + 0x40, 8 * CHUNK },
		{ "size 0 occupies one byte", BASE + 0x2000, 0 },
		{ "ends at the top of the address space", UINT64_MAX - 0xfff, 0x1000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_object_store *s = cp_object_store__new(0);
		__u64 st = cases[i].start, last = st + (cases[i].size ? cases[i].size : 1) - 1;
		struct cp_object o = obj(st, cases[i].size, 7);

		print_message("# %s\n", cases[i].what);
		assert_int_equal(cp_object_store__add(s, &o), 0);
		assert_finds(s, st, st);
		assert_finds(s, last, st);
		assert_finds(s, st + (last - st) / 2, st);
		assert_finds(s, st - 1, 0);
		if (last != UINT64_MAX)
			assert_finds(s, last + 1, 0);
		assert_int_equal(stats(s).lookup_misses, last != UINT64_MAX ? 2 : 1);
		assert_int_equal(cp_object_store__find(s, st)->tid, 7);
		assert_int_equal(cp_object_store__find(s, st)->callsite, 1007);
		cp_object_store__free(s);
	}
}

/* Neighbours on every level side by side: each byte belongs to exactly one. */
static void test_adjacent_objects_across_levels(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct { __u64 start, size; } objs[] = {
		{ BASE, 64 },			/* page */
		{ BASE + 64, PAGE - 64 },	/* page, ends on its boundary */
		{ BASE + PAGE, 2 * PAGE + 1 },	/* chunk */
		{ BASE + 3 * PAGE + 1, CHUNK },	/* huge: crosses into the next chunk */
		{ BASE + CHUNK + 3 * PAGE + 1, 31 },	/* page, right after the huge one */
	};
	size_t n = sizeof(objs) / sizeof(objs[0]);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		struct cp_object o = obj(objs[i].start, objs[i].size, i + 1);

		assert_int_equal(cp_object_store__add(s, &o), 0);
	}
	for (size_t i = 0; i < n; i++) {
		__u64 last = objs[i].start + objs[i].size - 1;

		assert_finds(s, objs[i].start, objs[i].start);
		assert_finds(s, last, objs[i].start);
	}
	assert_finds(s, BASE + CHUNK + 3 * PAGE + 32, 0);
	assert_int_equal(cp_object_store__count(s), n);
	assert_int_equal(stats(s).replaced, 0);
	cp_object_store__free(s);
}

static void test_free_then_reuse_address(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct cp_object a = obj(BASE + 0x100, 64, 1), b = obj(BASE + 0x100, 32, 2), out;

	(void)state;
	assert_int_equal(cp_object_store__add(s, &a), 0);
	assert_int_equal(cp_object_store__remove(s, a.start, &out), 0);
	assert_int_equal(out.tid, 1);
	assert_int_equal(out.size, 64);
	assert_finds(s, a.start, 0);
	assert_int_equal(cp_object_store__add(s, &b), 0);
	assert_int_equal(cp_object_store__find(s, a.start + 10)->tid, 2);
	assert_finds(s, a.start + 40, 0);	/* inside the old object, past the new one */
	assert_int_equal(stats(s).replaced, 0);	/* a real free, nothing stale */
	assert_int_equal(stats(s).removed, 1);
	assert_int_equal(stats(s).live, 1);
	cp_object_store__free(s);
}

/*
 * Lookups remember the last object found per page: a second lookup must
 * still see a removal, a replacement, and the other objects of the page.
 */
static void test_recent_lookups_follow_changes(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct cp_object a = obj(BASE + 0x100, 64, 1), b = obj(BASE + 0x140, 64, 2);
	struct cp_object c = obj(BASE + 0x100, 16, 3);

	(void)state;
	assert_int_equal(cp_object_store__add(s, &a), 0);
	assert_int_equal(cp_object_store__add(s, &b), 0);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(cp_object_store__find(s, a.start + 8)->tid, 1);
		assert_int_equal(cp_object_store__find(s, b.start + 8)->tid, 2);
		assert_int_equal(cp_object_store__find(s, a.start + 63)->tid, 1);
		assert_finds(s, a.start - 1, 0);	/* same page, no object */
	}
	assert_int_equal(cp_object_store__remove(s, a.start, NULL), 0);
	assert_finds(s, a.start + 8, 0);
	assert_int_equal(cp_object_store__find(s, b.start)->tid, 2);
	assert_int_equal(cp_object_store__add(s, &c), 0);	/* a's node, reused */
	assert_int_equal(cp_object_store__find(s, a.start + 8)->tid, 3);
	assert_finds(s, a.start + 40, 0);	/* in old a, past c */
	cp_object_store__clear(s);
	assert_finds(s, a.start + 8, 0);
	assert_finds(s, b.start, 0);
	cp_object_store__free(s);
}

static void test_unknown_frees_are_counted(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct cp_object a = obj(BASE, 3 * CHUNK, 1);

	(void)state;
	assert_int_equal(cp_object_store__add(s, &a), 0);
	assert_int_equal(cp_object_store__remove(s, BASE + 8, NULL), -ENOENT);	/* interior */
	assert_int_equal(cp_object_store__remove(s, BASE - PAGE, NULL), -ENOENT);	/* unseen */
	assert_int_equal(stats(s).unknown_frees, 2);
	assert_finds(s, BASE + 2 * CHUNK, BASE);	/* untouched */
	assert_int_equal(cp_object_store__remove(s, BASE, NULL), 0);
	assert_int_equal(cp_object_store__remove(s, BASE, NULL), -ENOENT);	/* double free */
	assert_int_equal(stats(s).unknown_frees, 3);
	assert_int_equal(cp_object_store__count(s), 0);
	cp_object_store__free(s);
}

static void test_cap_evicts_oldest(void **state)
{
	struct cp_object_store *s = cp_object_store__new(4);
	__u64 sizes[] = { 16, 2 * PAGE, 2 * CHUNK, 32, 64, 128 };

	(void)state;
	/* objects of every level, 4 MiB apart, inserted oldest first */
	for (size_t i = 0; i < 6; i++) {
		struct cp_object o = obj(BASE + i * 4 * CHUNK, sizes[i], i);

		assert_int_equal(cp_object_store__add(s, &o), 0);
	}
	assert_int_equal(cp_object_store__count(s), 4);
	assert_int_equal(stats(s).evicted, 2);
	assert_finds(s, BASE, 0);
	assert_finds(s, BASE + 4 * CHUNK + PAGE, 0);
	for (size_t i = 2; i < 6; i++)
		assert_finds(s, BASE + i * 4 * CHUNK, BASE + i * 4 * CHUNK);

	/* a free makes room: the next insert evicts nothing */
	assert_int_equal(cp_object_store__remove(s, BASE + 3 * 4 * CHUNK, NULL), 0);
	struct cp_object o = obj(BASE + 100 * CHUNK, 8, 9);
	assert_int_equal(cp_object_store__add(s, &o), 0);
	assert_int_equal(stats(s).evicted, 2);
	/* the oldest left is now #2: it goes next */
	o = obj(BASE + 101 * CHUNK, 8, 10);
	assert_int_equal(cp_object_store__add(s, &o), 0);
	assert_int_equal(stats(s).evicted, 3);
	assert_finds(s, BASE + 2 * 4 * CHUNK, 0);
	assert_finds(s, BASE + 4 * 4 * CHUNK, BASE + 4 * 4 * CHUNK);
	assert_int_equal(stats(s).live, 4);
	cp_object_store__free(s);
}

/* An insert over live objects means their frees were missed: they go. */
static void test_overlapping_insert_replaces_stale(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct cp_object o;

	(void)state;
	for (int i = 0; i < 8; i++) {	/* eight 64-byte objects in one page */
		o = obj(BASE + i * 64, 64, 1);
		assert_int_equal(cp_object_store__add(s, &o), 0);
	}
	o = obj(BASE + PAGE - 8, 64, 1);	/* chunk level */
	assert_int_equal(cp_object_store__add(s, &o), 0);
	o = obj(BASE + 2 * CHUNK, 2 * CHUNK, 1);	/* huge */
	assert_int_equal(cp_object_store__add(s, &o), 0);
	o = obj(BASE + 8 * CHUNK, 16, 1);	/* far away: must survive */
	assert_int_equal(cp_object_store__add(s, &o), 0);

	/* a new small object over the last byte of #1 and the first of #2 */
	o = obj(BASE + 127, 2, 2);
	assert_int_equal(cp_object_store__add(s, &o), 0);
	assert_int_equal(stats(s).replaced, 2);
	assert_finds(s, BASE + 64, 0);
	assert_finds(s, BASE + 128, BASE + 127);
	assert_finds(s, BASE + 129, 0);
	assert_finds(s, BASE + 192, BASE + 192);

	/* a 3 MiB mapping over all the rest of the first 4 MiB */
	o = obj(BASE + 100, 3 * CHUNK, 3);
	assert_int_equal(cp_object_store__add(s, &o), 0);
	assert_int_equal(stats(s).replaced, 2 + 1 + 5 + 1 + 1);
	assert_finds(s, BASE, BASE);	/* below the new range: kept */
	assert_finds(s, BASE + PAGE, BASE + 100);
	assert_finds(s, BASE + 3 * CHUNK, BASE + 100);
	assert_int_equal(cp_object_store__find(s, BASE + 2 * CHUNK)->tid, 3);
	assert_finds(s, BASE + 3 * CHUNK + 200, 0);	/* the stale huge one's tail went too */
	assert_finds(s, BASE + 8 * CHUNK, BASE + 8 * CHUNK);
	assert_int_equal(cp_object_store__count(s), 3);
	cp_object_store__free(s);
}

static void test_realloc_moves_grows_and_frees(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct cp_object a = obj(BASE, 100, 1), b;

	(void)state;
	/* realloc(NULL, n) is a malloc */
	assert_int_equal(cp_object_store__realloc(s, 0, &a), 0);
	assert_finds(s, BASE + 99, BASE);
	/* grows in place across a page */
	b = obj(BASE, 2 * PAGE, 2);
	b.flags = CP_OBJ_F_REALLOC;
	assert_int_equal(cp_object_store__realloc(s, BASE, &b), 0);
	assert_int_equal(cp_object_store__find(s, BASE + PAGE)->flags, CP_OBJ_F_REALLOC);
	/* moves to a huge mapping */
	b = obj(BASE + 16 * CHUNK, 3 * CHUNK, 3);
	assert_int_equal(cp_object_store__realloc(s, BASE, &b), 0);
	assert_finds(s, BASE, 0);
	assert_finds(s, BASE + 18 * CHUNK, BASE + 16 * CHUNK);
	/* realloc(p, 0) frees */
	b = obj(0, 0, 4);
	assert_int_equal(cp_object_store__realloc(s, BASE + 16 * CHUNK, &b), 0);
	assert_int_equal(cp_object_store__count(s), 0);
	assert_int_equal(stats(s).removed, 3);
	assert_int_equal(stats(s).inserted, 3);
	assert_int_equal(stats(s).replaced, 0);
	/* realloc of a pointer we never saw: counted, new object still stored */
	b = obj(BASE + PAGE, 8, 5);
	assert_int_equal(cp_object_store__realloc(s, BASE + 64 * CHUNK, &b), 0);
	assert_int_equal(stats(s).unknown_frees, 1);
	assert_finds(s, BASE + PAGE, BASE + PAGE);
	cp_object_store__free(s);
}

static void test_wrapping_range_rejected_and_clear(void **state)
{
	struct cp_object_store *s = cp_object_store__new(0);
	struct cp_object bad = obj(UINT64_MAX - 10, 100, 1), ok = obj(BASE, 4 * CHUNK, 1);

	(void)state;
	assert_int_equal(cp_object_store__add(s, &bad), -EINVAL);
	assert_int_equal(cp_object_store__add(s, &ok), 0);
	ok = obj(BASE - 64, 8, 1);
	assert_int_equal(cp_object_store__add(s, &ok), 0);
	cp_object_store__clear(s);
	assert_int_equal(cp_object_store__count(s), 0);
	assert_finds(s, BASE, 0);
	assert_finds(s, BASE - 60, 0);
	assert_int_equal(stats(s).inserted, 2);
	assert_int_equal(cp_object_store__add(s, &ok), 0);	/* usable after clear */
	assert_finds(s, BASE - 60, BASE - 64);
	cp_object_store__free(s);
}

/* ---- differential test against a linear list with the same contract ---- */

#define DIFF_OPS	60000
#define DIFF_CAP	700
#define DIFF_SPAN	(256 * CHUNK)	/* dense enough that overlaps happen */

struct naive {
	struct cp_object o[DIFF_CAP];
	__u64 seq[DIFF_CAP];	/* insertion order: eviction takes the lowest */
	size_t nr;
	__u64 next_seq;
	struct cp_object_store_stats st;
};

static __u64 naive_last(const struct cp_object *o)
{
	return o->start + (o->size ? o->size : 1) - 1;
}

static void naive_del(struct naive *n, size_t i)
{
	n->o[i] = n->o[n->nr - 1];
	n->seq[i] = n->seq[n->nr - 1];
	n->nr--;
}

static void naive_add(struct naive *n, const struct cp_object *o)
{
	for (size_t i = 0; i < n->nr;) {
		if (n->o[i].start <= naive_last(o) && naive_last(&n->o[i]) >= o->start) {
			naive_del(n, i);
			n->st.replaced++;
		} else {
			i++;
		}
	}
	if (n->nr == DIFF_CAP) {
		size_t old = 0;

		for (size_t i = 1; i < n->nr; i++)
			if (n->seq[i] < n->seq[old])
				old = i;
		naive_del(n, old);
		n->st.evicted++;
	}
	n->o[n->nr] = *o;
	n->seq[n->nr++] = n->next_seq++;
	n->st.inserted++;
}

static int naive_remove(struct naive *n, __u64 start)
{
	for (size_t i = 0; i < n->nr; i++) {
		if (n->o[i].start == start) {
			naive_del(n, i);
			n->st.removed++;
			return 0;
		}
	}
	n->st.unknown_frees++;
	return -ENOENT;
}

static const struct cp_object *naive_find(const struct naive *n, __u64 addr)
{
	for (size_t i = 0; i < n->nr; i++)
		if (n->o[i].start <= addr && addr <= naive_last(&n->o[i]))
			return &n->o[i];
	return NULL;
}

static __u64 rnd(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Mostly small objects, as the paper observes; some medium, a few huge. */
static __u64 random_size(__u64 *x)
{
	__u64 r = rnd(x) % 100;

	if (r < 75)
		return rnd(x) % 512;
	if (r < 95)
		return PAGE / 2 + rnd(x) % (16 * PAGE);
	return CHUNK / 2 + rnd(x) % (3 * CHUNK);
}

static void test_differential_against_linear_list(void **state)
{
	struct cp_object_store *s = cp_object_store__new(DIFF_CAP);
	struct naive *n = calloc(1, sizeof(*n));
	struct cp_object_store_stats st;
	__u64 x = 0x5eed1234abcdull;

	(void)state;
	assert_non_null(n);
	for (__u32 op = 0; op < DIFF_OPS; op++) {
		__u64 r = rnd(&x) % 100, addr = BASE + rnd(&x) % DIFF_SPAN;

		if (r < 50) {
			/* small objects cluster at 16-byte alignment like malloc's */
			struct cp_object o = obj(addr & ~15ull, random_size(&x), op);

			assert_int_equal(cp_object_store__add(s, &o), 0);
			naive_add(n, &o);
		} else if (r < 62 && n->nr) {
			__u64 start = n->o[rnd(&x) % n->nr].start;

			if (rnd(&x) % 8 == 0)
				start += 1 + rnd(&x) % 16;	/* interior or unknown pointer */
			assert_int_equal(cp_object_store__remove(s, start, NULL),
					 naive_remove(n, start));
		} else {
			const struct cp_object *want, *got;

			/* half the probes at an object's first or last byte +-1 */
			if (r % 2 && n->nr) {
				const struct cp_object *t = &n->o[rnd(&x) % n->nr];

				addr = (rnd(&x) & 1 ? t->start : naive_last(t)) + rnd(&x) % 3 - 1;
			}
			want = naive_find(n, addr);
			got = cp_object_store__find(s, addr);
			if (!want) {
				assert_null(got);
				continue;
			}
			assert_non_null(got);
			assert_int_equal(got->start, want->start);
			assert_int_equal(got->size, want->size);
			assert_int_equal(got->tid, want->tid);
		}
	}
	cp_object_store__stats(s, &st);
	print_message("# %llu inserted, %llu replaced, %llu evicted, %llu unknown frees\n",
		      (unsigned long long)st.inserted, (unsigned long long)st.replaced,
		      (unsigned long long)st.evicted, (unsigned long long)st.unknown_frees);
	assert_int_equal(st.live, n->nr);
	assert_int_equal(st.inserted, n->st.inserted);
	assert_int_equal(st.removed, n->st.removed);
	assert_int_equal(st.replaced, n->st.replaced);
	assert_int_equal(st.evicted, n->st.evicted);
	assert_int_equal(st.unknown_frees, n->st.unknown_frees);
	/* the run must have exercised every path it claims to test */
	assert_true(st.replaced > 100);
	assert_true(st.evicted > 100);
	assert_true(st.unknown_frees > 100);
	assert_true(st.lookup_hits > 1000 && st.lookup_misses > 1000);
	free(n);
	cp_object_store__free(s);
}

/*
 * A replay hints lookups a few records ahead (cp_object_store__hint()), the
 * last stage finding the object and remembering it; adds and frees may come
 * in between. Two stores get the same adds, frees and lookups, one of them
 * also hints at random stages for addresses looked up soon after, and for
 * others: every lookup answers the same, and the lookup counts are equal.
 */
static void test_hints_change_no_answer(void **state)
{
	struct cp_object_store *s = cp_object_store__new(DIFF_CAP);
	struct cp_object_store *h = cp_object_store__new(DIFF_CAP);
	struct cp_object_store_stats a, b;
	__u64 x = 0xfeedbeef1234ull, soon[8] = { 0 };
	__u32 changed_after_hint = 0;

	(void)state;
	for (__u32 op = 0; op < DIFF_OPS; op++) {
		__u64 r = rnd(&x) % 100, addr = BASE + rnd(&x) % DIFF_SPAN;
		__u64 *next = &soon[op % 8];

		/* the address hinted now is looked up a few operations later */
		cp_object_store__hint(h, *next ? *next : addr, (int)(rnd(&x) % CP_OBJ_HINT_STAGES));
		if (r < 45) {
			struct cp_object o = obj(addr & ~15ull, random_size(&x), op);

			assert_int_equal(cp_object_store__add(s, &o), 0);
			assert_int_equal(cp_object_store__add(h, &o), 0);
			changed_after_hint++;
		} else if (r < 57) {
			assert_int_equal(cp_object_store__remove(s, *next & ~15ull, NULL),
					 cp_object_store__remove(h, *next & ~15ull, NULL));
		} else {
			const struct cp_object *want, *got;

			if (*next)
				addr = *next;
			want = cp_object_store__find(s, addr);
			got = cp_object_store__find(h, addr);
			assert_true(!want == !got);
			if (want)
				assert_int_equal(got->start, want->start);
			*next = 0;
			if (r % 2)
				*next = BASE + rnd(&x) % DIFF_SPAN;
		}
	}
	a = stats(s);
	b = stats(h);
	assert_true(changed_after_hint > 1000);
	assert_true(a.lookup_hits > 1000 && a.lookup_misses > 1000);
	assert_int_equal(b.lookup_hits, a.lookup_hits);
	assert_int_equal(b.lookup_misses, a.lookup_misses);
	assert_int_equal(b.live, a.live);
	cp_object_store__free(s);
	cp_object_store__free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_boundaries_per_level),
		cmocka_unit_test(test_adjacent_objects_across_levels),
		cmocka_unit_test(test_free_then_reuse_address),
		cmocka_unit_test(test_recent_lookups_follow_changes),
		cmocka_unit_test(test_unknown_frees_are_counted),
		cmocka_unit_test(test_cap_evicts_oldest),
		cmocka_unit_test(test_overlapping_insert_replaces_stale),
		cmocka_unit_test(test_realloc_moves_grows_and_frees),
		cmocka_unit_test(test_wrapping_range_rejected_and_clear),
		cmocka_unit_test(test_differential_against_linear_list),
		cmocka_unit_test(test_hints_change_no_answer),
	};

	return cmocka_run_group_tests_name("object_store", tests, NULL, NULL);
}
