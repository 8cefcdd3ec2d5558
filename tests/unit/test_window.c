// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The miss-ratio window of cacheperf/window.h in plain C: sequences of hits
 * (H), misses (M) and level-unknown samples (N) around the threshold, and a
 * comparison with a deliberately naive model of the paper's rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cacheperf/window.h"

/* What forwarding did, as the BPF side would have emitted it. */
struct run {
	__u64 fwd[4096];	/* ids of forwarded misses, in emission order */
	unsigned int nfwd;
	unsigned int filtered;
	__u64 next_id;		/* id of the next pushed sample: 1, 2, 3, ... */
};

/* Pushes one sample like bpf/mem_sample.bpf.h does; returns records emitted. */
static unsigned int push(struct cp_window *w, __u32 size, __u32 ppm, char kind, struct run *r)
{
	struct cp_window_verdict v;
	__u32 flags = kind == 'M' ? CP_SAMPLE_MISS : kind == 'N' ? CP_SAMPLE_NA : 0;
	__u32 slot, left, sent = 0;
	__u64 id = ++r->next_id;

	cp_window_push(w, size, ppm, flags, &v);
	r->filtered += v.aged_out;
	assert_true(v.slot < CP_WINDOW_MAX);
	if (kind == 'M')
		w->e[v.slot].ip = id;
	slot = v.fwd_from;
	left = v.fwd_cnt;
	for (int i = 0; i < CP_WINDOW_MAX && left; i++) {
		if (w->e[slot].flags & CP_SAMPLE_MISS) {
			assert_true(r->nfwd < sizeof(r->fwd) / sizeof(r->fwd[0]));
			r->fwd[r->nfwd++] = w->e[slot].ip;
			left--;
			sent++;
		}
		slot = cp_window_next(slot, cp_window_size(size));
	}
	assert_int_equal(left, 0);	/* the verdict never promises more than it holds */
	return sent;
}

static void push_seq(struct cp_window *w, __u32 size, __u32 ppm, const char *seq, struct run *r)
{
	for (; *seq; seq++)
		push(w, size, ppm, *seq, r);
}

static struct cp_window *new_window(void)
{
	struct cp_window *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	return w;
}

static void expect_fwd(const struct run *r, const __u64 *ids, unsigned int n)
{
	assert_int_equal(r->nfwd, n);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(r->fwd[i], ids[i]);
}

static void test_size_knob(void **state)
{
	(void)state;
	assert_int_equal(cp_window_size(0), CP_WINDOW_MAX);
	assert_int_equal(cp_window_size(CP_WINDOW_MAX + 1), CP_WINDOW_MAX);
	assert_int_equal(cp_window_size(8), 8);
	assert_int_equal(cp_window_size(1), 1);
	assert_int_equal(cp_window_next(6, 8), 7);
	assert_int_equal(cp_window_next(7, 8), 0);
}

/*
 * N = 8, 25 %: forwarding needs misses * 10^6 > 250000 * 8, i.e. three misses
 * among the last eight samples.
 */
static void test_crossing_forwards_pending_misses_oldest_first(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	/* ids 1..4: M H H M -> two misses, below: nothing yet */
	push_seq(w, 8, 250000, "MHHM", &r);
	assert_int_equal(r.nfwd, 0);
	/* id 5: the third miss crosses: 1, 4 and 5 go, oldest first */
	assert_int_equal(push(w, 8, 250000, 'M', &r), 3);
	expect_fwd(&r, (const __u64[]){ 1, 4, 5 }, 3);
	/* id 6: still above (4 misses): only the new one */
	assert_int_equal(push(w, 8, 250000, 'M', &r), 1);
	expect_fwd(&r, (const __u64[]){ 1, 4, 5, 6 }, 4);
	/* eight hits push them all out; forwarded misses are not "filtered" */
	push_seq(w, 8, 250000, "HHHHHHHH", &r);
	assert_int_equal(r.filtered, 0);
	assert_int_equal(w->misses, 0);
	/* id 15: a lone miss; seven hits keep it, the eighth ages it out */
	push_seq(w, 8, 250000, "MHHHHHHH", &r);
	assert_int_equal(r.filtered, 0);
	push(w, 8, 250000, 'H', &r);
	assert_int_equal(r.filtered, 1);
	assert_int_equal(r.nfwd, 4);
	free(w);
}

/* Exactly at the threshold is not above it. */
static void test_threshold_is_strict(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	/* 2 misses of 8 at 25 %: 2 * 10^6 > 2 * 10^6 is false */
	push_seq(w, 8, 250000, "MMHHHHHH", &r);
	assert_int_equal(r.nfwd, 0);
	/* one ppm less and the second miss is over it: both go */
	free(w);
	w = new_window();
	memset(&r, 0, sizeof(r));
	push_seq(w, 8, 249999, "MM", &r);
	expect_fwd(&r, (const __u64[]){ 1, 2 }, 2);
	free(w);
}

/*
 * The denominator is N from the start: at 12.5 % of 8 one miss is exactly
 * the threshold, so a fresh window's first miss waits; at 10 % it goes.
 */
static void test_fresh_window_needs_full_window_evidence(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	push(w, 8, 125000, 'M', &r);
	assert_int_equal(r.nfwd, 0);
	push(w, 8, 125000, 'M', &r);
	expect_fwd(&r, (const __u64[]){ 1, 2 }, 2);
	free(w);
	w = new_window();
	memset(&r, 0, sizeof(r));
	push(w, 8, 100000, 'M', &r);
	expect_fwd(&r, (const __u64[]){ 1 }, 1);
	free(w);
}

/* Paper defaults, N = 512 at 0.5 %: three misses in 512 samples are needed. */
static void test_defaults_filter_sporadic_misses(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };
	__u32 n = CP_WINDOW_DEFAULT, ppm = CP_WINDOW_RATIO_DEFAULT_PPM;

	(void)state;
	/* a compulsory miss, then 600 hits: it ages out after 511 of them */
	push(w, n, ppm, 'M', &r);
	for (int i = 0; i < 600; i++)
		push(w, n, ppm, 'H', &r);
	assert_int_equal(r.nfwd, 0);
	assert_int_equal(r.filtered, 1);
	/* ids 602.. : two misses 200 apart wait, the third in range sends all three */
	push(w, n, ppm, 'M', &r);		/* 602 */
	for (int i = 0; i < 200; i++)
		push(w, n, ppm, 'H', &r);	/* 603..802 */
	push(w, n, ppm, 'M', &r);		/* 803 */
	assert_int_equal(r.nfwd, 0);
	for (int i = 0; i < 300; i++)
		push(w, n, ppm, 'H', &r);	/* 804..1103 */
	push(w, n, ppm, 'M', &r);		/* 1104 */
	/* the window now holds ids 593..1104, 602 among them: 3 misses > 2.56 */
	expect_fwd(&r, (const __u64[]){ 602, 803, 1104 }, 3);
	assert_int_equal(r.filtered, 1);
	free(w);
}

/* Ratio 0 is the paper's 0 % setting: every miss goes at once. */
static void test_ratio_zero_forwards_every_miss(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	push_seq(w, 4, 0, "HMHHMMHM", &r);
	expect_fwd(&r, (const __u64[]){ 2, 5, 6, 8 }, 4);
	assert_int_equal(r.filtered, 0);
	free(w);
}

/* 100 % can never be exceeded: every miss ages out, counted. */
static void test_ratio_full_filters_everything(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	push_seq(w, 4, 1000000, "MMMMMMMM", &r);
	assert_int_equal(r.nfwd, 0);
	assert_int_equal(r.filtered, 4);	/* ids 1..4 left; 5..8 are still inside */
	assert_int_equal(w->misses, 4);
	assert_int_equal(w->pending, 4);
	free(w);
}

/* Level-unknown samples take a slot, are never misses, never forwarded. */
static void test_na_samples(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	push_seq(w, 4, 0, "NNNN", &r);
	assert_int_equal(r.nfwd, 0);
	assert_int_equal(w->misses, 0);
	/* at 25 % of 4, two misses are needed; an N between them is just an access */
	free(w);
	w = new_window();
	memset(&r, 0, sizeof(r));
	push_seq(w, 4, 250000, "MNM", &r);
	expect_fwd(&r, (const __u64[]){ 1, 3 }, 2);
	/* N samples age misses out like hits do */
	free(w);
	w = new_window();
	memset(&r, 0, sizeof(r));
	push_seq(w, 4, 250000, "MNNNN", &r);
	assert_int_equal(r.nfwd, 0);
	assert_int_equal(r.filtered, 1);
	free(w);
}

/* The scan start wraps around the end of the slot array. */
static void test_flush_across_wrap(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	/* N = 4 at 25 %: two misses. Id 4 lands in slot 3, id 6 in slot 1. */
	push_seq(w, 4, 250000, "HHHMH", &r);
	assert_int_equal(r.nfwd, 0);
	push(w, 4, 250000, 'M', &r);
	expect_fwd(&r, (const __u64[]){ 4, 6 }, 2);
	free(w);
}

/* A window set up for another size starts afresh (and a zeroed map value too). */
static void test_resize_resets(void **state)
{
	struct cp_window *w = new_window();
	struct run r = { 0 };

	(void)state;
	push_seq(w, 8, 1000000, "MMM", &r);
	assert_int_equal(w->misses, 3);
	push(w, 4, 1000000, 'H', &r);
	assert_int_equal(w->size, 4);
	assert_int_equal(w->seq, 1);
	assert_int_equal(w->misses, 0);
	assert_int_equal(w->pending, 0);
	free(w);
}

/*
 * The naive model: keep the last N samples with a forwarded mark; after every
 * push, if misses * 10^6 > ppm * N, forward every unmarked miss oldest first.
 * It checks after hits too, so it also tests the claim that only a pushed
 * miss can start forwarding.
 */
struct model {
	__u64 id[CP_WINDOW_MAX];
	char kind[CP_WINDOW_MAX];
	bool sent[CP_WINDOW_MAX];
	unsigned int len;
};

static void model_push(struct model *m, __u32 n, __u32 ppm, char kind, struct run *r)
{
	unsigned int misses = 0;
	__u64 id = ++r->next_id;

	if (m->len == n) {
		if (m->kind[0] == 'M' && !m->sent[0])
			r->filtered++;
		memmove(m->id, m->id + 1, (n - 1) * sizeof(m->id[0]));
		memmove(m->kind, m->kind + 1, n - 1);
		memmove(m->sent, m->sent + 1, (n - 1) * sizeof(m->sent[0]));
		m->len--;
	}
	m->id[m->len] = id;
	m->kind[m->len] = kind;
	m->sent[m->len] = false;
	m->len++;
	for (unsigned int i = 0; i < m->len; i++)
		misses += m->kind[i] == 'M';
	if ((__u64)misses * 1000000 <= (__u64)ppm * n)
		return;
	for (unsigned int i = 0; i < m->len; i++) {
		if (m->kind[i] == 'M' && !m->sent[i]) {
			m->sent[i] = true;
			r->fwd[r->nfwd++] = m->id[i];
		}
	}
}

static void test_matches_naive_model(void **state)
{
	static const __u32 sizes[] = { 1, 2, 3, 7, 8, 64, 100, 512 };
	static const __u32 ppms[] = { 0, 5000, 50000, 125000, 250000, 333333, 999999, 1000000 };
	__u64 x = 88172645463325252ULL;

	(void)state;
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (size_t pi = 0; pi < sizeof(ppms) / sizeof(ppms[0]); pi++) {
			struct cp_window *w = new_window();
			struct model *m = calloc(1, sizeof(*m));
			struct run *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
			/* bursty: long runs of one miss rate, then another */
			unsigned int rate = 0;

			assert_non_null(m);
			assert_non_null(a);
			assert_non_null(b);
			for (int i = 0; i < 3000; i++) {
				char k;

				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				if (i % 250 == 0)
					rate = (unsigned int)(x % 5) * 10;	/* 0..40 % */
				k = x % 100 < rate ? 'M' : (x >> 8) % 50 == 0 ? 'N' : 'H';
				push(w, sizes[si], ppms[pi], k, a);
				model_push(m, sizes[si], ppms[pi], k, b);
			}
			assert_int_equal(a->nfwd, b->nfwd);
			assert_memory_equal(a->fwd, b->fwd, a->nfwd * sizeof(a->fwd[0]));
			assert_int_equal(a->filtered, b->filtered);
			free(w);
			free(m);
			free(a);
			free(b);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_knob),
		cmocka_unit_test(test_crossing_forwards_pending_misses_oldest_first),
		cmocka_unit_test(test_threshold_is_strict),
		cmocka_unit_test(test_fresh_window_needs_full_window_evidence),
		cmocka_unit_test(test_defaults_filter_sporadic_misses),
		cmocka_unit_test(test_ratio_zero_forwards_every_miss),
		cmocka_unit_test(test_ratio_full_filters_everything),
		cmocka_unit_test(test_na_samples),
		cmocka_unit_test(test_flush_across_wrap),
		cmocka_unit_test(test_resize_resets),
		cmocka_unit_test(test_matches_naive_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
