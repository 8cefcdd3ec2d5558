// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The diff report (report/report_diff.h): what a user reads after a fix,
 * in text and JSON: the issue gone, each pair's change and verdict, how a
 * loose pair was made, and the refusals and warnings about what does not
 * compare.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report_diff.h"

#define MAX 4

/* A diff of two runs and the storage its classifications point to. */
struct fixture {
	struct cp_diff d;
	struct cp_issue is[CP_DIFF_RUNS][MAX];
	struct cp_issue_pair pairs[2 * MAX];
};

static void at(struct cp_issue *is, enum cp_issue_type type, double score, __u64 misses,
	       const char *file, __u32 line, const char *fn, const char *site_fn, __u32 site_line)
{
	memset(is, 0, sizeof(*is));
	is->type = type;
	is->origin = CP_ORIGIN_APPLICATION;
	is->score = score;
	is->samples = is->misses = misses;
	is->nr_insns = 1;
	is->insns[0].have_loc = true;
	snprintf(is->insns[0].loc.file, sizeof(is->insns[0].loc.file), "/src/%s", file);
	snprintf(is->insns[0].loc.function, sizeof(is->insns[0].loc.function), "%s", fn);
	is->insns[0].loc.line = line;
	is->nr_objects = 1;
	is->objects[0].kind = CP_OBJ_HEAP;
	is->objects[0].nr_frames = 1;
	snprintf(is->objects[0].alloc_stack[0].function,
		 sizeof(is->objects[0].alloc_stack[0].function), "%s", site_fn);
	snprintf(is->objects[0].alloc_stack[0].file, sizeof(is->objects[0].alloc_stack[0].file),
		 "/src/%s", file);
	is->objects[0].alloc_stack[0].line = site_line;
}

static void run(struct fixture *fx, int r, const char *path, const char *source, size_t n)
{
	struct cp_diff_run *dr = &fx->d.run[r];

	dr->path = path;
	dr->source = source;
	dr->duration_s = 2;
	dr->issues.issues = fx->is[r];
	dr->issues.nr_issues = n;
	dr->issues.soft = !strcmp(source, "soft");
	dr->issues.time_samples = 4000;
	dr->issues.sampled_misses = 1000;
	/* this VM's caches (test_soft_classes' runs): L1D 32K, L2 1M, LLC 32M */
	dr->geo.slot[CP_CACHE_L1D] = (struct cp_cache_level){ .size_bytes = 32 << 10, .ways = 8,
							      .line_bytes = 64 };
	dr->geo.slot[CP_CACHE_L2] = (struct cp_cache_level){ .size_bytes = 1 << 20, .ways = 16,
							     .line_bytes = 64 };
	dr->geo.slot[CP_CACHE_LLC] = (struct cp_cache_level){ .size_bytes = 32 << 20, .ways = 16,
							      .line_bytes = 64 };
}

static void pair_up(struct fixture *fx)
{
	fx->d.pairs = fx->pairs;
	fx->d.unchanged_ppm = 10000;
	assert_int_equal(cp_issue_match(fx->is[0], fx->d.run[0].issues.nr_issues, fx->is[1],
					fx->d.run[1].issues.nr_issues, fx->pairs, &fx->d.nr_pairs),
			 0);
}

/* The text (@json: the JSON) of @d as a string to free(). */
static char *render(const struct cp_diff *d, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (json)
		assert_int_equal(cp_diff_json(d, f), 0);
	else
		cp_diff_print(d, f);
	fclose(f);
	return buf;
}

static void expect(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing '%s' in:\n%s", want, text);
}

static void expect_not(const char *text, const char *unwanted)
{
	if (strstr(text, unwanted))
		fail_msg("unexpected '%s' in:\n%s", unwanted, text);
}

/* The fixed twin: its false sharing is gone, nothing is new. */
static void test_gone(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct cp_diff_counts c;
	char *text, *json;

	(void)state;
	at(&fx->is[0][0], CP_ISSUE_FALSE_SHARING, 0.639, 2658, "false_sharing.c", 50, "worker",
	   "main", 100);
	run(fx, CP_DIFF_BEFORE, "fs.cprec", "soft", 1);
	run(fx, CP_DIFF_AFTER, "padded.cprec", "soft", 0);
	pair_up(fx);
	cp_diff_count(&fx->d, &c);
	assert_int_equal(c.gone, 1);
	assert_int_equal(c.added + c.both, 0);
	text = render(&fx->d, false);
	expect(text, "  before:   fs.cprec\n            soft, 2.0 s, 4000 time samples, 1 issue\n");
	expect(text, "  after:    padded.cprec\n            soft, 2.0 s, 4000 time samples, 0 "
		     "issues\n");
	expect(text, "  impact:   share of the time samples; a change under 1.00 pp counts as none\n");
	expect(text, "  note:     pattern-based, no PMU");
	expect(text, "\nIn both runs (0)\n  none\n");
	expect(text, "\nGone (1): reported before, not after (fixed, or now below the filters)\n"
		     "  application's false sharing  false_sharing.c:50 (worker)  heap object from "
		     "main (false_sharing.c:100)  was 63.9 % (2658 samples)\n");
	expect(text, "\nNew (0): reported after, not before\n  none\n");
	expect(text, "\nSummary: 1 gone, 0 new, 0 in both (0 better, 0 worse, 0 unchanged)\n");
	expect_not(text, "warning");
	json = render(&fx->d, true);
	expect(json, "\"impact\": \"time_share\"");
	expect(json, "\"both\": [],\n  \"gone\": [\n    {\n      \"rank\": 1,\n"
		     "      \"type\": \"false_sharing\",");
	expect(json, "\"location\": \"false_sharing.c:50\"");
	expect(json, "\"object\": \"heap object from main (false_sharing.c:100)\"");
	expect(json, "\"score\": 0.6390");
	expect(json, "\"new\": []");
	expect(json, "\"warnings\": []");
	expect(json, "\"gone\": 1,\n    \"new\": 0\n");
	free(text);
	free(json);
	free(fx);
}

/*
 * PMU runs: one issue better by 20 pp, one moved by padding and within the
 * 1 pp that counts as no change, one of another type and worse, one new.
 */
static void test_changes(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct cp_issue *b = fx->is[0], *a = fx->is[1];
	char *text, *json;

	(void)state;
	at(&b[0], CP_ISSUE_CAPACITY, 0.50, 500, "a.c", 10, "f", "main", 5);
	at(&b[1], CP_ISSUE_FALSE_SHARING, 0.20, 200, "b.c", 40, "g", "main", 30);
	at(&b[2], CP_ISSUE_CAPACITY_OR_CONFLICT, 0.05, 50, "c.c", 7, "h", "setup", 3);
	b[0].misses_per_s = 1e6;
	at(&a[0], CP_ISSUE_CAPACITY, 0.30, 300, "a.c", 10, "f", "main", 5);
	a[0].misses_per_s = 6e5;
	at(&a[1], CP_ISSUE_FALSE_SHARING, 0.205, 205, "b.c", 43, "g", "main", 31);
	at(&a[2], CP_ISSUE_CONFLICT, 0.10, 100, "c.c", 7, "h", "setup", 3);
	at(&a[3], CP_ISSUE_TRUE_SHARING, 0.02, 20, "d.c", 1, "k", "main", 2);
	run(fx, CP_DIFF_BEFORE, "old.cprec", "pebs", 3);
	run(fx, CP_DIFF_AFTER, "new.cprec", "pebs", 4);
	pair_up(fx);
	text = render(&fx->d, false);
	expect(text, "pebs, 2.0 s, 1000 sampled misses, 3 issues\n");
	expect(text, "impact:   share of the sampled misses;");
	expect_not(text, "note:");
	expect(text, "\nIn both runs (3)\n");
	/* 50 % -> 30 %: 20 points down; the counts and the estimated rates behind them */
	expect(text, "a.c:10 (f)");
	expect(text, " 50.0 % \u2192  30.0 %  -20.0 pp better  (500 \u2192 300 misses, ~1e+06 "
		     "\u2192 ~6e+05 misses/s)\n");
	/* 20 % -> 20.5 %: less than 1 point, no change; the row names the new place */
	expect(text, "b.c:43 (g)");
	expect(text, " 20.0 % \u2192  20.5 %   +0.5 pp unchanged  (200 \u2192 205 misses)\n"
		     "      moved: before at b.c:40 (g), heap object from main (b.c:30)\n");
	expect(text, "  5.0 % \u2192  10.0 %   +5.0 pp worse  (50 \u2192 100 misses)\n"
		     "      type changed: before application's capacity or conflict\n");
	expect(text, "\nGone (0)");
	expect(text, "\nNew (1): reported after, not before\n  application's true sharing  ");
	expect(text, "d.c:1 (k)");
	expect(text, "now 2.0 % (20 misses)\n");
	expect(text, "Summary: 0 gone, 1 new, 3 in both (1 better, 1 worse, 1 unchanged; 1 moved, "
		     "1 of another type)\n");
	json = render(&fx->d, true);
	expect(json, "\"impact\": \"miss_share\"");
	expect(json, "\"match\": \"same\",\n      \"change\": -0.2000,\n      \"verdict\": "
		     "\"better\"");
	expect(json, "\"match\": \"moved\",\n      \"change\": 0.0050,\n      \"verdict\": "
		     "\"unchanged\"");
	expect(json, "\"match\": \"type_changed\"");
	expect(json, "\"new\": [\n    {\n      \"rank\": 4,\n      \"type\": \"true_sharing\"");
	expect(json, "\"better\": 1,\n    \"worse\": 1,\n    \"unchanged\": 1,\n    \"moved\": 1,\n"
		     "    \"type_changed\": 1,\n    \"gone\": 0,\n    \"new\": 1\n");
	free(text);
	free(json);
	free(fx);
}

/* Impacts of different measures are refused; other PMUs and other caches are warned about. */
static void test_comparable(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char err[512], *text, *json;

	(void)state;
	run(fx, CP_DIFF_BEFORE, "a.cprec", "soft", 0);
	run(fx, CP_DIFF_AFTER, "b.cprec", "pebs", 0);
	assert_int_equal(cp_diff_comparable(&fx->d, err, sizeof(err)), -EINVAL);
	expect(err, "a.cprec was recorded with --source soft (impact: share of the time samples), "
		    "b.cprec with --source pebs (share of the sampled misses)");
	expect(err, "record both runs with the same --source");
	fx->d.run[0].source = "faults";
	assert_int_equal(cp_diff_comparable(&fx->d, err, sizeof(err)), -EINVAL);
	fx->d.run[1].source = "faults";
	assert_int_equal(cp_diff_comparable(&fx->d, err, sizeof(err)), 0);
	/* PEBS against IBS: both sampled misses, said; and a machine with other caches */
	fx->d.run[0].source = "pebs";
	fx->d.run[1].source = "ibs";
	assert_int_equal(cp_diff_comparable(&fx->d, err, sizeof(err)), 0);
	fx->d.run[1].geo.slot[CP_CACHE_L1D].size_bytes = 48 << 10;
	fx->d.run[1].geo.slot[CP_CACHE_L1D].ways = 12;
	pair_up(fx);
	text = render(&fx->d, false);
	expect(text, "  warning:  before was sampled with pebs, after with ibs");
	expect(text, "  warning:  the machines' caches differ: before "
		     "L1D=32K:8:64,L2=1M:16:64,LLC=32M:16:64, after "
		     "L1D=48K:12:64,L2=1M:16:64,LLC=32M:16:64");
	json = render(&fx->d, true);
	expect(json, "\"sources_differ\": true,\n  \"geometry_differs\": true,\n"
		     "  \"warnings\": [\n    \"before was sampled with pebs");
	free(text);
	free(json);
	/* a run the application filter silenced says so: its issues are not "gone" for a fix */
	fx->d.run[1].source = "pebs";
	fx->d.run[1].geo = fx->d.run[0].geo;
	fx->d.run[1].issues.app_filter_applies = true;
	text = render(&fx->d, false);
	expect(text, "  warning:  after reports no issue at all: its miss ratios are below the "
		     "application filter");
	expect_not(text, "caches differ");
	free(text);
	free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_comparable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
