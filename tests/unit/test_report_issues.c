// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The issues section of the text report: the paper's Figs. 5-9 wording, evidence, summary. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/issues_text.h"

static void loc(struct cp_src_loc *l, const char *file, __u32 line, const char *function)
{
	snprintf(l->module, sizeof(l->module), "/usr/bin/linear_regression");
	snprintf(l->file, sizeof(l->file), "/src/%s", file);
	snprintf(l->function, sizeof(l->function), "%s", function);
	l->line = line;
}

/* Fig. 8: one instruction, one heap object, the per-thread bytes of the line. */
static void test_false_sharing_like_fig8(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_issue is = {
		.type = CP_ISSUE_FALSE_SHARING, .origin = CP_ORIGIN_APPLICATION, .tgid = 42,
		.score = 0.625, .misses_per_s = 1.5e6, .nr_insns = 1, .nr_objects = 1,
		.sharing = { .line_addr = 0x10000, .line_bytes = 64, .nr_lines = 1,
			     .line_misses = 400, .nr_threads = 2,
			     .thr = { { 101, 200, 0, 0xffff, 0, 0 }, { 102, 200, 0xff, 0xfff0ull << 48, 0, 0 } } },
	};
	struct cp_classification c = { .issues = &is, .nr_issues = 1, .app_filter_applies = true,
				       .app_filter_passed = true };
	char *text;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	is.insns[0] = (struct cp_issue_insn){ .tgid = 42, .ip = 0x4011a0, .samples = 400,
					      .misses = 400, .nr_ips = 1, .have_loc = true };
	loc(&is.insns[0].loc, "linear_regression-pthread.c", 94, "linear_regression_pthread");
	is.objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .size = 1056,
						  .nr_objects = 1, .nr_frames = 1, .nr_tids = 1,
						  .alloc_tids = { 40 } };
	loc(&is.objects[0].alloc_stack[0], "linear_regression-pthread.c", 155, "main");
	snprintf(is.hint, sizeof(is.hint), "pad it");
	text = render(&c, &cfg);
	expect(text, "Issues (1)");
	expect(text, "#1 Application's false sharing, accessed by the instruction at:\n"
		     "    - linear_regression-pthread.c: 94 (linear_regression_pthread)\n");
	expect(text, "  Related to the heap object (1056 bytes) allocated by thread 40 at "
		     "main (linear_regression-pthread.c:155)\n");
	expect(text, "62.5 % of sampled misses, ~1.5e+06 misses/s (process 42)");
	/* thread 101 wrote bytes 0-15; thread 102 wrote 52-63 and read 0-7 */
	expect(text, "thread 101: wrote 0-15, read - (200 misses)");
	expect(text, "thread 102: wrote 52-63, read 0-7 (200 misses)");
	expect(text, "  Hint: pad it\n");
	expect(text, "\n0 minor issues suppressed\n");
	free(text);
}

/* Figs. 6 and 9: several source lines; objects of one site by different threads. */
static void test_allocator_issues(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_issue is[2] = {
		{ .type = CP_ISSUE_CONFLICT, .origin = CP_ORIGIN_ALLOCATOR, .tgid = 7, .score = 0.5,
		  .nr_insns = 2, .nr_objects = 1,
		  .conflict = { .set = 3, .ways = 8, .accesses = 16, .history = 64,
				.distinct_lines = 16 } },
		{ .type = CP_ISSUE_FALSE_SHARING, .origin = CP_ORIGIN_ALLOCATOR, .tgid = 7,
		  .score = 0.2, .nr_insns = 1, .nr_objects = 1,
		  .sharing = { .line_addr = 0x20000, .nr_lines = 3, .line_misses = 9 } },
	};
	struct cp_classification c = { .issues = is, .nr_issues = 2, .suppressed = 4 };
	char *text;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	/* insert() inlined into fill(), itself inlined into main(): each at its call's line */
	is[0].insns[0] = (struct cp_issue_insn){ .ip = 0x1, .misses = 30, .nr_ips = 1,
						 .have_loc = true,
						 .callers = { .nr = 2, .c = { { "fill", "tree.cc", 12 },
									     { "main", "tree.cc", 40 } } } };
	loc(&is[0].insns[0].loc, "stl_tree.h", 1875, "insert");
	/* no location: listed by address */
	is[0].insns[1] = (struct cp_issue_insn){ .ip = 0x401234, .misses = 20, .nr_ips = 2 };
	is[0].objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .size = 48,
						     .nr_objects = 16, .nr_tids = 1,
						     .alloc_tids = { 7 } };
	is[1].insns[0] = (struct cp_issue_insn){ .ip = 0x2, .misses = 9, .have_loc = true };
	loc(&is[1].insns[0].loc, "cache-scratch.cpp", 84, "worker");
	is[1].objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .size = 8,
						     .nr_objects = 2, .nr_frames = 1, .nr_tids = 2,
						     .alloc_tids = { 101, 102 } };
	loc(&is[1].objects[0].alloc_stack[0], "cache-scratch.cpp", 81, "worker");
	text = render(&c, &cfg);
	expect(text, "#1 Allocator's conflict misses, accessed by:\n"
		     "    #0 instruction at: stl_tree.h: 1875 (insert) \u2190 tree.cc: 12 (fill) "
		     "\u2190 tree.cc: 40 (main)  (30 misses)\n"
		     "    #1 instruction at: 0x401234  (20 misses, 2 instructions)\n");
	expect(text, "Related to 16 heap objects (48 bytes) allocated by thread 7\n");
	expect(text, "Access history: 16 of 64 accesses on L1 set 3, 16 distinct lines for 8 ways");
	expect(text, "#2 Allocator's false sharing, accessed by the instruction at:");
	expect(text, "Related to 2 heap objects (8 bytes) allocated by different threads "
		     "(101, 102) at worker (cache-scratch.cpp:81)\n");
	expect(text, "Line 0x20000 (9 misses; 3 shared lines in all)");
	/* the ranking is the caller's: #1 precedes #2 in the text */
	assert_true(strstr(text, "#1 Allocator's conflict") < strstr(text, "#2 Allocator's false"));
	expect(text, "4 minor issues suppressed");
	free(text);
}

/*
 * A deep allocation stack: innermost first, joined by arrows; an unknown
 * frame by its module; more frames than kept end in an ellipsis.
 */
static void test_alloc_stack_chain(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_issue is = { .type = CP_ISSUE_CAPACITY, .origin = CP_ORIGIN_APPLICATION,
			       .tgid = 5, .score = 0.9, .nr_insns = 1, .nr_objects = 1 };
	struct cp_classification c = { .issues = &is, .nr_issues = 1 };
	struct cp_issue_object *o = &is.objects[0];
	char *text;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	is.insns[0] = (struct cp_issue_insn){ .ip = 0x1, .misses = 30, .nr_ips = 1 };
	*o = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .size = 4096, .nr_objects = 1,
				       .nr_frames = 3 };
	/* inner inlined into middle: its own frame, then middle's at the call's line */
	o->nr_frames = 4;
	loc(&o->alloc_stack[0], "a.h", 3, "inner");
	o->alloc_stack[0].inlined = true;
	loc(&o->alloc_stack[1], "a.c", 7, "middle");
	loc(&o->alloc_stack[2], "a.c", 9, "outer");
	snprintf(o->alloc_stack[3].function, sizeof(o->alloc_stack[3].function), "start");
	snprintf(o->alloc_stack[3].module, sizeof(o->alloc_stack[3].module), "/lib/libc.so.6");
	text = render(&c, &cfg);
	expect(text, "Related to the heap object (4096 bytes) allocated at inner (a.h:3) \u2190 "
		     "middle (a.c:7) \u2190 outer (a.c:9) \u2190 start in libc.so.6\n");
	free(text);
	o->more_frames = true;
	text = render(&c, &cfg);
	expect(text, "\u2190 start in libc.so.6 \u2190 \u2026\n");
	free(text);
}

/*
 * A callers source: 3 paths into the line, 60 + 30 + 10 misses, of which
 * the report asks for @max; the first has more frames than fit.
 */
static int three_paths(void *ctx, const struct cp_issue_insn *in, unsigned int max,
		       struct cp_insn_callers *out)
{
	static const __u64 counts[3] = { 60, 30, 10 };

	(*(int *)ctx)++;
	assert_int_equal(in->ip, 0x1);
	out->unit = "misses";
	out->total = 100;
	out->nr_paths = 3;
	out->nr = max < 3 ? max : 3;
	for (__u32 i = 0; i < out->nr; i++) {
		struct cp_caller_path *p = &out->paths[i];

		memset(p, 0, sizeof(*p));
		p->count = counts[i];
		p->nr_frames = 2;
		loc(&p->frames[0], "a.c", 10 + i, i ? "other" : "inner");
		loc(&p->frames[1], "a.c", 50, "main");
		p->more = i == 0;
	}
	return 0;
}

/* --callers N: the N paths most counted under the instruction, with their shares. */
static void test_callers_under_instructions(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_issue is = { .type = CP_ISSUE_CAPACITY, .origin = CP_ORIGIN_APPLICATION,
			       .tgid = 5, .score = 0.9, .nr_insns = 1 };
	struct cp_classification c = { .issues = &is, .nr_issues = 1 };
	int calls = 0;
	struct cp_callers_view v = { .top = 2, .fn = three_paths, .ctx = &calls };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	is.insns[0] = (struct cp_issue_insn){ .ip = 0x1, .misses = 30, .nr_ips = 1,
					       .have_loc = true };
	loc(&is.insns[0].loc, "a.c", 5, "touch");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	cp_report_issues_print(&c, &cfg, &v, f);
	fclose(f);
	expect(buf, "    - a.c: 5 (touch)\n"
		    "      called from (2 of 3 paths; 100 misses with a stack):\n"
		    "         60.0 %  inner (a.c:10) \u2190 main (a.c:50) \u2190 \u2026\n"
		    "         30.0 %  other (a.c:11) \u2190 main (a.c:50)\n"
		    "  Impact");
	assert_int_equal(calls, 1);
	free(buf);
	/* --callers 0 (and no source): not asked */
	v.top = 0;
	buf = NULL;
	f = open_memstream(&buf, &len);
	cp_report_issues_print(&c, &cfg, &v, f);
	fclose(f);
	assert_null(strstr(buf, "called from"));
	assert_int_equal(calls, 1);
	free(buf);
}

/* Below the application thresholds: say why nothing is reported, and what was suppressed. */
static void test_app_filter_and_top(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_classification c = {
		.app_filter_applies = true, .app_filter_passed = false,
		.load_miss_ratio = 0.02, .store_miss_ratio = 0.005, .suppressed = 3,
	};
	char *text;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	text = render(&c, &cfg);
	expect(text, "Issues (0)\n  none reported: load misses are 2.00 % of sampled loads "
		     "(below 3.00 %) and store misses 0.50 % of sampled stores (below 1.00 %)");
	expect(text, "3 minor issues suppressed");
	free(text);

	c.app_filter_passed = true;
	c.beyond_top = 2;
	cfg.top = 1;
	text = render(&c, &cfg);
	expect(text, "none: no instruction or line has 1.00 % of the misses");
	expect(text, "2 more serious issues beyond --top 1");
	free(text);
}

/* Globals, thread-locals and unknown memory are named as such. */
static void test_object_kinds(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_issue is = { .type = CP_ISSUE_TRUE_SHARING, .nr_insns = 1, .nr_objects = 3 };
	struct cp_classification c = { .issues = &is, .nr_issues = 1 };
	char *text;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	is.insns[0].ip = 0x10;
	is.objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_GLOBAL, .size = 8, .name = "hits" };
	is.objects[1] = (struct cp_issue_object){ .kind = CP_OBJ_TLS, .size = 4, .name = "tcount" };
	is.objects[2] = (struct cp_issue_object){ .kind = CP_OBJ_UNKNOWN, .name = "[heap]" };
	text = render(&c, &cfg);
	expect(text, "Application's true sharing");
	expect(text, "Related to multiple objects:\n");
	expect(text, "# 0 the global variable hits (8 bytes)\n");
	expect(text, "# 1 the thread-local variable tcount (4 bytes)\n");
	expect(text, "# 2 memory [heap] with no allocation seen\n");
	free(text);
}

/*
 * Objects no probe saw: one read from glibc's chunk headers (its address,
 * usable size, no call site; before attach or in a launched command), and
 * memory of an allocator whose metadata is not read.
 */
static void test_objects_without_probe(void **state)
{
	struct cp_classify_cfg cfg;
	struct cp_issue is = { .type = CP_ISSUE_FALSE_SHARING, .nr_insns = 1, .nr_objects = 3 };
	struct cp_classification c = { .issues = &is, .nr_issues = 1 };
	char *text;

	(void)state;
	cp_classify_cfg_defaults(&cfg);
	is.insns[0].ip = 0x10;
	is.objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .start = 0x5555555592a0,
						  .size = 104, .nr_objects = 1,
						  .flags = CP_OBJ_F_CHUNK, .before_attach = true };
	is.objects[1] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .start = 0x555555559400,
						  .size = 40, .nr_objects = 1,
						  .flags = CP_OBJ_F_CHUNK };
	is.objects[2] = (struct cp_issue_object){ .kind = CP_OBJ_UNKNOWN, .name = "[anon]",
						  .allocator = "jemalloc" };
	text = render(&c, &cfg);
	expect(text, "# 0 the heap object at 0x5555555592a0 (104 bytes, glibc chunk) allocated "
		     "before profiling began, call site unknown\n");
	expect(text, "# 1 the heap object at 0x555555559400 (40 bytes, glibc chunk) allocated "
		     "where no probe saw it, call site unknown\n");
	expect(text, "# 2 memory [anon] with no allocation seen (jemalloc: its metadata is not "
		     "read, so no object is named)\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_false_sharing_like_fig8),
		cmocka_unit_test(test_objects_without_probe),
		cmocka_unit_test(test_allocator_issues),
		cmocka_unit_test(test_alloc_stack_chain),
		cmocka_unit_test(test_app_filter_and_top),
		cmocka_unit_test(test_object_kinds),
		cmocka_unit_test(test_callers_under_instructions),
	};

	return cmocka_run_group_tests_name("report_issues", tests, NULL, NULL);
}
