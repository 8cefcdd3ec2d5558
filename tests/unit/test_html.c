// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTML report's pieces: escaping of hostile names, the line byte map
 * of a known struct, padding offsets, hot sets, access-history strides,
 * the flame graph's layout of multi-frame stacks (callers named at pc - 1),
 * the timeline store, and the page around them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/timeline.h"
#include "report/html_flame.h"
#include "report/html_out.h"
#include "report/html_report.h"
#include "report/html_svg.h"

#define HOSTILE "<script>alert(\"x\")</script>'\x1b[2J"

/* What @fn wrote into a string (free() it). */
static char *capture(void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

/* not inlined: gcc 12 takes open_memstream()'s buffer for a dangling pointer */
__attribute__((noinline)) static int count(const char *hay, const char *needle)
{
	size_t at = 0, len = strlen(hay);
	int n = 0;

	while (at < len) {
		const char *hit = strstr(hay + at, needle);

		if (!hit)
			break;
		n++;
		at = (size_t)(hit - hay) + 1;
	}
	return n;
}

/* The part of @text from @from up to the next @to. */
static char *between(const char *text, const char *from, const char *to)
{
	const char *a = strstr(text, from), *b;

	assert_non_null(a);
	b = strstr(a, to);
	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

static void esc_hostile(FILE *f, const void *arg)
{
	(void)arg;
	cp_html_esc(f, HOSTILE);
}

/* A name a tenant chose can neither open an element nor end an attribute. */
static void test_escape(void **state)
{
	char *s = capture(esc_hostile, NULL);

	(void)state;
	assert_string_equal(s, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;?[2J");
	free(s);
}

static void esc_reordering(FILE *f, const void *arg)
{
	(void)arg;
	/* RLO (U+202E), an 8-bit CSI (U+009B), a stray byte, then é */
	cp_html_esc(f, "hot\xe2\x80\xae<x\xc2\x9b\xff caf\xc3\xa9");
}

/*
 * A name cannot draw the page's own text after it backwards (a right-to-left
 * override made "(138 samples" read "(selpmas 831"): one '?' for each
 * character the text report replaces, other characters kept whole.
 */
static void test_escape_reordering(void **state)
{
	char *s = capture(esc_reordering, NULL);

	(void)state;
	assert_string_equal(s, "hot?&lt;x?? caf\xc3\xa9");
	free(s);
}

/*
 * tests/workloads/false_sharing.c: struct counters is one long (8 bytes)
 * per thread, 8 bytes apart, in a 128-byte object aligned to the line.
 * Thread 101 reads and writes bytes 0-7, thread 102 bytes 8-15.
 */
static struct cp_issue fs_issue(void)
{
	struct cp_issue is = {
		.type = CP_ISSUE_FALSE_SHARING, .tgid = 7, .nr_objects = 1,
		.sharing = { .line_addr = 0x5000, .line_bytes = 64, .nr_lines = 1,
			     .object_start = 0x5000, .object_size = 128, .nr_threads = 2,
			     .thr = { { 101, 50, 0xff, 0xff, 0, 0 }, { 102, 40, 0xff00, 0xff00, 0, 0 } } },
	};

	is.objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .size = 128 };
	return is;
}

static void line_map(FILE *f, const void *arg)
{
	cp_svg_line_map(f, "lm", arg, true);
}

static void test_line_map_cells(void **state)
{
	struct cp_issue is = fs_issue();
	char *s = capture(line_map, &is), *t1, *t2, cell[64];

	(void)state;
	t1 = between(s, "data-tid=\"101\"", "</g>");
	t2 = between(s, "data-tid=\"102\"", "</g>");
	for (int b = 0; b < 16; b++) {
		snprintf(cell, sizeof(cell), "class=\"cell wr\" data-byte=\"%d\"", b);
		assert_int_equal(count(t1, cell), b < 8);
		assert_int_equal(count(t2, cell), b >= 8);
		snprintf(cell, sizeof(cell), "class=\"cell rd\" data-byte=\"%d\"", b);
		assert_int_equal(count(t1, cell), b < 8);
		assert_int_equal(count(t2, cell), b >= 8);
	}
	assert_int_equal(count(s, "class=\"cell "), 32);
	/* offsets in the object, where each thread's bytes start */
	assert_non_null(strstr(t1, ">+0</text>"));
	assert_non_null(strstr(t2, ">+8</text>"));
	/* the object begins at the line's first byte and ends past it: no edge inside */
	assert_non_null(strstr(s, "class=\"obj\" data-first=\"0\" data-end=\"128\""));
	assert_int_equal(count(s, "class=\"objedge\""), 0);
	/* the hint's padding: before thread 102's field */
	assert_non_null(strstr(s, "<g class=\"pad\" data-byte=\"8\">"));
	assert_int_equal(count(s, "class=\"pad\""), 1);
	/* a text alternative saying the same */
	assert_non_null(strstr(s, "role=\"img\""));
	assert_non_null(strstr(s, "thread 101 wrote 0-7, read 0-7 (50 samples)"));
	free(t1);
	free(t2);
	free(s);
}

/* A global with a hostile name, in the middle of the line: named, escaped, edges drawn. */
static void test_line_map_global_hostile(void **state)
{
	struct cp_issue is = fs_issue();
	char *s;

	(void)state;
	is.type = CP_ISSUE_TRUE_SHARING;
	is.sharing.object_start = 0x5000 + 16;
	is.sharing.object_size = 16;
	is.objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_GLOBAL, .size = 16 };
	snprintf(is.objects[0].name, sizeof(is.objects[0].name), "%s", HOSTILE);
	s = capture(line_map, &is);
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "\x1b"));
	assert_non_null(strstr(s, "global &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
	assert_non_null(strstr(s, "class=\"objedge\" data-byte=\"16\""));
	assert_non_null(strstr(s, "class=\"objedge\" data-byte=\"32\""));
	/* bytes before the object: negative offsets in it */
	assert_non_null(strstr(s, ">+-16</text>"));
	/* true sharing: padding cannot help, none drawn */
	assert_null(strstr(s, "class=\"pad\""));
	free(s);
}

static void test_pad_offsets(void **state)
{
	struct {
		__u64 masks[3];
		__u64 other_part;
		int nr;
		__u32 want[3];
	} cases[] = {
		{ { 0xff, 0xff00, 0 }, 0, 1, { 8 } },
		/* the order of the threads does not matter: the lowest bytes stay */
		{ { 0xff00, 0xff, 0 }, 0, 1, { 8 } },
		{ { 0xf0, 0xf00000, 0xf000000000ull }, 0, 2, { 20, 36 } },
		/* two threads starting at the same byte: one offset */
		{ { 0xf, 0xf0, 0xf0 }, 0, 1, { 4 } },
		/* the false part of a mixed line: the shared total at 0-7 stays, each counter moves */
		{ { 0xff00, 0xff0000, 0 }, 0xff, 2, { 8, 16 } },
		/* ... a total after the counters moves away from them */
		{ { 0xff, 0xff00, 0 }, 0xff0000, 2, { 8, 16 } },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct cp_issue_sharing sh = { .line_bytes = 64, .nr_threads = 3,
					       .other_part = cases[c].other_part };
		__u32 out[4];
		int n;

		for (int i = 0; i < 3; i++)
			sh.thr[i].write_mask = cases[c].masks[i];
		n = cp_svg_pad_offsets(&sh, out, 4);
		assert_int_equal(n, cases[c].nr);
		for (int i = 0; i < n; i++)
			assert_int_equal(out[i], cases[c].want[i]);
	}
}

static void test_hot_sets(void **state)
{
	__u64 counts[8] = { 0, 5, 9, 5, 0, 1, 9, 0 };
	__u32 out[3];

	(void)state;
	assert_int_equal(cp_svg_hot_sets(counts, 8, out, 3), 3);
	/* most first, the lower set on ties */
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 6);
	assert_int_equal(out[2], 1);
	memset(counts, 0, sizeof(counts));
	assert_int_equal(cp_svg_hot_sets(counts, 8, out, 3), 0);
}

struct heat {
	const __u64 *counts;
	__u32 nr;
	long mark;
};

static void heatmap(FILE *f, const void *arg)
{
	const struct heat *h = arg;

	cp_svg_set_heatmap(f, "hm", "L1D", h->counts, h->nr, h->mark, false);
}

/* The issue's set is outlined and labelled even when it is not among the hottest. */
static void test_heatmap_marks(void **state)
{
	__u64 counts[64] = { 0 };
	struct heat h = { counts, 64, 40 };
	char *s;

	(void)state;
	counts[3] = 100;
	counts[4] = 50;
	counts[5] = 25;
	counts[6] = 10;
	counts[40] = 1;
	s = capture(heatmap, &h);
	for (int set = 3; set <= 6; set++) {
		char cell[48];

		snprintf(cell, sizeof(cell), "class=\"set%s\" data-set=\"%d\"",
			 set == 6 ? "" : " hot", set);
		assert_non_null(strstr(s, cell));
	}
	assert_non_null(strstr(s, "class=\"set hot\" data-set=\"40\""));
	assert_non_null(strstr(s, "set 40: 0.5 % (this issue)"));
	/* sets with nothing are the background, not cells */
	assert_int_equal(count(s, "data-set=\"") - count(s, "class=\"hotlbl\""), 5);
	free(s);
}

/* tests/workloads/conflict.c: a column walk, rows 4096 bytes apart, from byte 16 of a page. */
static void test_history_column_walk(void **state)
{
	__u64 addrs[40];
	__u32 lines[64];
	struct cp_svg_history h = { .nr_sets = 64, .lines = lines };

	(void)state;
	for (int i = 0; i < 40; i++)
		addrs[i] = 0x7f0000000010ull + (__u64)i * 4096;
	cp_svg_history_of(addrs, 40, 64, &h);
	assert_int_equal(h.len, 40);
	assert_int_equal(h.stride, 4096);
	assert_int_equal(h.stride_count, 39);
	/* 0x...010 / 64 is line 0 of its page: set 0; each row another line of it */
	assert_int_equal(h.top_set, 0);
	assert_int_equal(lines[0], 40);
	for (int s = 1; s < 64; s++)
		assert_int_equal(lines[s], 0);
	/* the same line twice is one line */
	addrs[1] = addrs[0] + 8;
	cp_svg_history_of(addrs, 40, 64, &h);
	assert_int_equal(lines[0], 39);
}

/* Names the synthetic frames: only the pc a frame should be asked at has a name. */
static int synth_name(void *ctx, __u32 tgid, __u64 pc, bool leaf, char *buf, size_t sz)
{
	static const struct {
		__u64 pc;
		bool leaf;
		const char *name;
	} names[] = {
		{ 0x100, true, "leaf_a" }, { 0x110, true, "leaf_b" }, { 0x200, false, "mid" },
		{ 0x300, false, "main" },  { 0x400, false, "other" },
	};

	(void)ctx;
	assert_int_equal(tgid, 9);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].pc == pc && names[i].leaf == leaf) {
			snprintf(buf, sz, "%s", names[i].name);
			return 0;
		}
	return -1;
}

/*
 * Three stacks, callers as return addresses (the call + 1):
 *   leaf_a <- mid <- main  x5,  leaf_b <- mid <- main  x3,  leaf_a <- other <- main  x2.
 * The graph: all 10; main 10; under it mid 8 (leaf_a 5, leaf_b 3) then other 2 (leaf_a 2).
 */
static void test_flame_layout(void **state)
{
	const __u64 a[] = { 0x100, 0x201, 0x301 }, b[] = { 0x110, 0x201, 0x301 },
		    c[] = { 0x100, 0x401, 0x301 };
	struct {
		const char *name;
		__u32 depth;
		__u64 start, value;
	} want[] = {
		{ "all", 0, 0, 10 },    { "main", 1, 0, 10 },  { "mid", 2, 0, 8 },
		{ "leaf_a", 3, 0, 5 },  { "leaf_b", 3, 5, 3 }, { "other", 2, 8, 2 },
		{ "leaf_a", 3, 8, 2 },
	};
	struct cp_flame_rect r[16];
	struct cp_flame *f = cp_flame__new();
	size_t n;

	(void)state;
	assert_non_null(f);
	/* in another order than the graph's: the layout does not depend on it */
	assert_int_equal(cp_flame__add_stack(f, 9, c, 3, 2, synth_name, NULL), 0);
	assert_int_equal(cp_flame__add_stack(f, 9, b, 3, 3, synth_name, NULL), 0);
	assert_int_equal(cp_flame__add_stack(f, 9, a, 3, 5, synth_name, NULL), 0);
	assert_int_equal(cp_flame__total(f), 10);
	n = cp_flame__layout(f, r, 16);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(r[i].name, want[i].name);
		assert_int_equal(r[i].depth, want[i].depth);
		assert_int_equal(r[i].start, want[i].start);
		assert_int_equal(r[i].value, want[i].value);
	}
	cp_flame__free(f);
}

static void flame_svg(FILE *out, const void *arg)
{
	cp_flame_svg(out, "fg", arg, "samples");
}

/* An unknown frame is shown by its address; a hostile name is escaped; leaves are marked. */
static void test_flame_svg(void **state)
{
	const __u64 unknown[] = { 0x100, 0x555 };
	const char *hostile[] = { "main", HOSTILE };
	struct cp_flame *f = cp_flame__new();
	char *s;

	(void)state;
	cp_flame__add_stack(f, 9, unknown, 2, 4, synth_name, NULL);
	cp_flame__add(f, hostile, 2, 4);
	s = capture(flame_svg, f);
	/* the caller's return address as given, not the pc - 1 it was looked up at */
	assert_non_null(strstr(s, ">0x555</text>"));
	assert_null(strstr(s, "<script"));
	assert_non_null(strstr(s, "&lt;script&gt;"));
	assert_int_equal(count(s, "class=\"frame leaf\""), 2);
	assert_int_equal(count(s, "class=\"frame root\""), 1);
	assert_non_null(strstr(s, "8 samples in 5 frames"));
	free(s);
	cp_flame__free(f);
}

static struct cp_insn counted(__u64 ip, __u64 misses, __u64 loads)
{
	struct cp_insn v = { .key = { .tgid = 1, .ip = ip } };

	v.counts.load_misses = misses;
	v.counts.loads = loads;
	return v;
}

/* Batches with no sample between them are one interval; a full timeline halves. */
static void test_timeline(void **state)
{
	struct cp_timeline *t = cp_timeline__new(false);
	struct cp_insn v[2] = { counted(0x10, 3, 10), counted(0x20, 1, 10) };
	const struct cp_tl_interval *iv;
	__u64 misses = 0;

	(void)state;
	cp_timeline__add(t, v, 1, 5, 1000);
	cp_timeline__add(t, v + 1, 1, 5, 1000);
	assert_int_equal(cp_timeline__count(t), 1);
	iv = cp_timeline__get(t, 0);
	assert_int_equal(iv->nr, 2);
	assert_int_equal(iv->total.misses, 4);
	assert_int_equal(iv->end_ns, 1000);
	cp_timeline__add(t, v, 2, 6, 2000);
	assert_int_equal(cp_timeline__count(t), 2);
	/* 120 kept: the 121st merges neighbours, each slot then spans two */
	for (__u64 k = 7; k < 7 + 119; k++)
		cp_timeline__add(t, v, 2, k, k * 1000);
	assert_int_equal(cp_timeline__count(t), 61);
	for (__u32 i = 0; i < cp_timeline__count(t); i++)
		misses += cp_timeline__get(t, i)->total.misses;
	assert_int_equal(misses, 4 * 121);
	iv = cp_timeline__get(t, 0);
	assert_int_equal(iv->spans, 2);
	assert_int_equal(iv->total.misses, 8);
	assert_int_equal(iv->end_ns, 2000);
	assert_int_equal(cp_timeline__get(t, 60)->spans, 1);
	cp_timeline__free(t);
}

static void page(FILE *f, const void *arg)
{
	assert_int_equal(cp_html_report_write(arg, f), 0);
}

/* The page: offline by construction, a hostile process name escaped, one section per issue. */
static void test_page(void **state)
{
	struct cp_report_target tgt = { .pid = 7 };
	struct cp_issue is = fs_issue();
	struct cp_classification c = { .issues = &is, .nr_issues = 1, .soft = true };
	struct cp_classify_cfg cfg;
	double share[2] = { 0.25, -1 }, end_s[2] = { 1, 2 };
	struct cp_html_issue x = { .share = share };
	struct cp_report r = { .source = "soft", .duration_s = 2, .targets = &tgt, .nr_targets = 1,
			       .issues = &c, .classify_cfg = &cfg };
	struct cp_html_input in = { .r = &r, .nr_intervals = 2, .end_s = end_s, .issue = &x };
	char *s;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	snprintf(tgt.comm, sizeof(tgt.comm), "<script>x");
	snprintf(is.hint, sizeof(is.hint), "pad \"it\" <b>");
	s = capture(page, &in);
	assert_true(strncmp(s, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(s, "content=\"default-src 'none'; style-src 'unsafe-inline'\""));
	/* nothing to fetch: no source, no stylesheet link, no script */
	assert_null(strstr(s, "src="));
	assert_null(strstr(s, "<link"));
	assert_null(strstr(s, "<script"));
	assert_non_null(strstr(s, "7 (&lt;script&gt;x)"));
	assert_non_null(strstr(s, "pad &quot;it&quot; &lt;b&gt;"));
	assert_non_null(strstr(s, CP_SOFT_NOTE));
	assert_int_equal(count(s, "<section class=\"issue\""), 1);
	assert_non_null(strstr(s, "data-type=\"false_sharing\""));
	assert_int_equal(count(s, "class=\"linemap\""), 1);
	assert_non_null(strstr(s, "data-i=\"0\" data-share=\"0.2500\""));
	assert_non_null(strstr(s, "2.0 s: no samples"));
	/* every figure has a text alternative */
	assert_int_equal(count(s, "role=\"img\""), count(s, "<desc id="));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_reordering),
		cmocka_unit_test(test_line_map_cells),
		cmocka_unit_test(test_line_map_global_hostile),
		cmocka_unit_test(test_pad_offsets),
		cmocka_unit_test(test_hot_sets),
		cmocka_unit_test(test_heatmap_marks),
		cmocka_unit_test(test_history_column_walk),
		cmocka_unit_test(test_flame_layout),
		cmocka_unit_test(test_flame_svg),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
