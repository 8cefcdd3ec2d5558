// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cache geometry: the fake sysfs trees in tests/data/cache, the sanity
 * checks, every --cache error, rendering and the set-index helper.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "machine/geometry.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* tests/run.sh sets CP_ROOT; running a test binary by hand from the tree works too */
static const char *tree(const char *name, char *buf, size_t sz)
{
	const char *root = getenv("CP_ROOT");

	snprintf(buf, sz, "%s/tests/data/cache/%s", root ? root : ".", name);
	return buf;
}

static void dump_warnings(const struct cp_geometry *g)
{
	for (unsigned int i = 0; i < g->nr_warnings; i++)
		print_message("# warning %u: %s\n", i, g->warnings[i]);
}

/* True when some warning contains every non-NULL string of @subs. */
static bool has_warning(const struct cp_geometry *g, const char *const *subs)
{
	for (unsigned int i = 0; i < g->nr_warnings; i++) {
		bool all = true;

		for (int s = 0; s < 4 && subs[s]; s++)
			all &= strstr(g->warnings[i], subs[s]) != NULL;
		if (all)
			return true;
	}
	return false;
}

struct slot_want {
	enum cp_geo_source source;
	int level;
	__u64 size;
	__u32 ways, sets, line;
};

struct tree_case {
	const char *tree;
	int from_sysfs;				/* cp_geometry_read_sysfs() result */
	struct slot_want slot[CP_CACHE_NR_SLOTS];
	unsigned int nr_warnings;
	const char *warn[4][4];			/* each: substrings of one warning */
};

#define SYSFS(lvl, sz, w, s)	{ CP_GEO_SYSFS, lvl, sz, w, s, 64 }
#define FB_L1D			{ CP_GEO_FALLBACK, 1, 32 * KiB, 8, 64, 64 }
#define FB_L2			{ CP_GEO_FALLBACK, 2, 1 * MiB, 16, 1024, 64 }
#define FB_LLC			{ CP_GEO_FALLBACK, 3, 32 * MiB, 16, 32768, 64 }

static const struct tree_case tree_cases[] = {
	{ "vm-epyc-2vcpu", 3,
	  { SYSFS(1, 48 * KiB, 12, 64), SYSFS(2, 1 * MiB, 16, 1024),
	    SYSFS(3, 32 * MiB, 16, 32768) },
	  0, { { NULL } } },
	{ "skylake-sp", 3,
	  { SYSFS(1, 32 * KiB, 8, 64), SYSFS(2, 1 * MiB, 16, 1024), SYSFS(3, 22 * MiB, 11, 32768) },
	  0, { { NULL } } },
	{ "skylake-sp-28c", 2,
	  { SYSFS(1, 32 * KiB, 8, 64), SYSFS(2, 1 * MiB, 16, 1024), FB_LLC },
	  1, { { "index3 (L3 Unified)", "39424 KiB, 11-way, 64 B lines, 57344 sets",
		 "57344 sets is not a power of two", "--cache LLC=SIZE:WAYS:LINE" } } },
	{ "missing-index", 2,
	  { SYSFS(1, 32 * KiB, 8, 64), FB_L2, SYSFS(3, 22 * MiB, 11, 32768) },
	  1, { { "no level-2 cache in",
		 "tests/data/cache/missing-index/sys/devices/system/cpu/cpu0/cache",
		 "fallback L2 model 1 MiB, 16-way, 64 B lines, 1024 sets", "--cache L2=" } } },
	{ "vm-bogus-l3", 2,
	  { SYSFS(1, 48 * KiB, 12, 64), SYSFS(2, 2 * MiB, 16, 2048), FB_LLC },
	  1, { { "reports 480 MiB, 16-way, 64 B lines, 491520 sets",
		 "491520 sets is not a power of two",
		 "fallback LLC model 32 MiB, 16-way, 64 B lines, 32768 sets", "--cache LLC=" } } },
	{ "no-l3", 3,
	  { SYSFS(1, 24 * KiB, 6, 64), SYSFS(2, 1 * MiB, 16, 1024), SYSFS(2, 1 * MiB, 16, 1024) },
	  0, { { NULL } } },
	{ "broken", 0,
	  { FB_L1D, FB_L2, FB_LLC },
	  4, { { "index4 has level 'x', not a 32-bit number; ignored" },
	       { "index0 (L1 Data)",
		 "size 64 KiB is not sets x ways x line (64 x 8 x 64 B = 32 KiB)",
		 "fallback L1D model" },
	       { "index2 (L2 Unified) has no number_of_sets file", "fallback L2 model" },
	       { "index3 (L3 Unified)", "line size 48 B is not a power of two from 16 to 256",
		 "fallback LLC model" } } },
	{ "does-not-exist", 0,
	  { FB_L1D, FB_L2, FB_LLC },
	  1, { { "cannot read ", "does-not-exist/sys/devices/system/cpu/cpu0/cache",
		 "No such file or directory", "fallback model for L1D, L2 and LLC" } } },
};

static void test_sysfs_trees(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(tree_cases) / sizeof(tree_cases[0]); c++) {
		const struct tree_case *tc = &tree_cases[c];
		struct cp_geometry g;
		char root[4096];
		int n;

		print_message("# tree %s\n", tc->tree);
		n = cp_geometry_read_sysfs(&g, tree(tc->tree, root, sizeof(root)));
		if (g.nr_warnings != tc->nr_warnings)
			dump_warnings(&g);
		assert_int_equal(g.nr_warnings, tc->nr_warnings);
		assert_int_equal(n, tc->from_sysfs);
		for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
			const struct slot_want *w = &tc->slot[s];
			const struct cp_cache_level *l = &g.slot[s];

			assert_int_equal(g.source[s], w->source);
			assert_int_equal(l->level, w->level);
			assert_int_equal(l->size_bytes, w->size);
			assert_int_equal(l->ways, w->ways);
			assert_int_equal(l->sets, w->sets);
			assert_int_equal(l->line_bytes, w->line);
			assert_true(l->valid);	/* the classifier may divide by every slot */
		}
		for (unsigned int i = 0; i < tc->nr_warnings; i++) {
			if (!has_warning(&g, tc->warn[i])) {
				dump_warnings(&g);
				fail_msg("no warning with '%s'", tc->warn[i][0]);
			}
		}
	}
}

struct index_case {
	struct cp_cache_index_text t;
	bool valid;
	const char *problem;	/* substring, when invalid */
};

#define IDX(lv, ty, sz, w, s, l) { lv, ty, sz, w, s, l }

static const struct index_case index_cases[] = {
	{ IDX("1\n", "Data\n", "48K\n", "12\n", "64\n", "64\n"), true, NULL },
	/* no newline, M suffix: the parser must not depend on the trailing newline */
	{ IDX("3", "Unified", "32M", "16", "32768", "64"), true, NULL },
	{ IDX(NULL, "Data\n", "48K\n", "12\n", "64\n", "64\n"), false, "has no level file" },
	{ IDX("0\n", "Data\n", "48K\n", "12\n", "64\n", "64\n"), false, "has level 0, not 1 to 9" },
	{ IDX("1\n", NULL, "48K\n", "12\n", "64\n", "64\n"), false, "has no type file" },
	{ IDX("1\n", "Trace\n", "48K\n", "12\n", "64\n", "64\n"), false,
	  "has type 'Trace', not Data, Instruction or Unified" },
	{ IDX("1\n", "Data\n", NULL, "12\n", "64\n", "64\n"), false, "has no size file" },
	{ IDX("1\n", "Data\n", "48Q\n", "12\n", "64\n", "64\n"), false,
	  "has size '48Q', not a number with an optional K, M or G" },
	{ IDX("1\n", "Data\n", "48K\n", NULL, "64\n", "64\n"), false,
	  "has no ways_of_associativity file" },
	{ IDX("1\n", "Data\n", "48K\n", "12\n", "64\n\n", "64\n"), false,
	  "has number_of_sets '64?', not a 32-bit number" },	/* no raw newline in messages */
	{ IDX("1\n", "Data\n", "48K\n", "12\n", "64\n", "4294967296\n"), false,
	  "has coherency_line_size '4294967296', not a 32-bit number" },
	{ IDX("1\n", "Data\n", "0K\n", "0\n", "64\n", "64\n"), false, "reports 0 B, 0-way" },
	{ IDX("3\n", "Unified\n", "491520K\n", "16\n", "491520\n", "64\n"), false,
	  "reports 480 MiB, 16-way, 64 B lines, 491520 sets: 491520 sets is not a power of two" },
};

static void test_index_parse(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(index_cases) / sizeof(index_cases[0]); c++) {
		const struct index_case *ic = &index_cases[c];
		struct cp_cache_level l;

		cp_cache_index_parse(&ic->t, 7, &l);
		print_message("# case %zu: valid %d problem '%s'\n", c, l.valid, l.problem);
		assert_int_equal(l.index, 7);
		assert_int_equal(l.valid, ic->valid);
		if (ic->problem)
			assert_non_null(strstr(l.problem, ic->problem));
	}
}

struct check_case {
	__u64 size;
	__u32 ways, sets, line;
	const char *problem;	/* NULL: valid */
};

static const struct check_case check_cases[] = {
	{ 48 * KiB, 12, 64, 64, NULL },
	{ 256, 1, 1, 256, NULL },			/* smallest legal shapes */
	{ 16, 1, 1, 16, NULL },
	{ 32 * KiB, 0, 64, 64, "0 ways" },
	{ 32 * KiB, 8, 64, 0, "line size 0 B is not a power of two from 16 to 256" },
	{ 32 * KiB, 8, 64, 8, "line size 8 B" },
	{ 32 * KiB, 8, 64, 512, "line size 512 B" },
	{ 32 * KiB, 8, 64, 96, "line size 96 B" },
	{ 32 * KiB, 8, 0, 64, "0 sets" },
	{ 3 * 8 * 64, 8, 3, 64, "3 sets is not a power of two" },
	{ 33 * KiB, 8, 64, 64, "size 33 KiB is not sets x ways x line (64 x 8 x 64 B = 32 KiB)" },
	/* 2^31 x (2^32 - 1) x 256 overflows 64 bits: must be refused, not wrapped */
	{ 1ULL << 63, 0xffffffffu, 1u << 31, 256, "is not sets x ways x line" },
};

static void test_level_check(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(check_cases) / sizeof(check_cases[0]); c++) {
		const struct check_case *cc = &check_cases[c];
		struct cp_cache_level l = { .level = 1, .size_bytes = cc->size, .ways = cc->ways,
					    .sets = cc->sets, .line_bytes = cc->line };

		print_message("# case %zu\n", c);
		assert_int_equal(cp_cache_level_check(&l), cc->problem == NULL);
		assert_int_equal(l.valid, cc->problem == NULL);
		if (cc->problem) {
			print_message("# problem: %s\n", l.problem);
			assert_non_null(strstr(l.problem, cc->problem));
		}
	}
}

static void test_fallback_model_is_sane(void **state)
{
	static const __u32 sets[] = { 64, 1024, 32768 };

	(void)state;
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
		struct cp_cache_level l = cp_cache_fallback(s);

		assert_true(cp_cache_level_check(&l));
		assert_int_equal(l.sets, sets[s]);
		assert_int_equal(l.line_bytes, 64);
		assert_int_equal(l.index, -1);
	}
}

struct size_case {
	const char *text;
	int ret;
	__u64 bytes;
};

static const struct size_case size_cases[] = {
	{ "32K", 0, 32 * KiB },
	{ "1024K", 0, 1 * MiB },
	{ "32M", 0, 32 * MiB },
	{ "2G", 0, 2 * GiB },
	{ "48k", 0, 48 * KiB },
	{ "512", 0, 512 },
	{ "0", 0, 0 },
	{ "18446744073709551615", 0, ~0ULL },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },		/* 2^34 GiB = 2^64 */
	{ "17179869183G", 0, 17179869183ULL * GiB },
	{ "", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "32KB", -EINVAL, 0 },
	{ "32KiB", -EINVAL, 0 },
	{ "32 K", -EINVAL, 0 },
	{ " 32K", -EINVAL, 0 },
	{ "-32K", -EINVAL, 0 },
	{ "32T", -EINVAL, 0 },
	{ "32K\n", -EINVAL, 0 },	/* callers strip sysfs newlines first */
};

static void test_parse_size(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(size_cases) / sizeof(size_cases[0]); c++) {
		__u64 v = 12345;

		print_message("# '%s'\n", size_cases[c].text);
		assert_int_equal(cp_cache_parse_size(size_cases[c].text, &v), size_cases[c].ret);
		if (!size_cases[c].ret)
			assert_int_equal(v, size_cases[c].bytes);
		else
			assert_int_equal(v, 12345);	/* untouched on error */
	}
}

static void test_override_all_levels(void **state)
{
	struct cp_geometry g;
	char err[256] = "", root[4096];

	(void)state;
	cp_geometry_read_sysfs(&g, tree("vm-bogus-l3", root, sizeof(root)));
	assert_int_equal(g.nr_warnings, 1);
	assert_int_equal(cp_geometry_apply_override(&g, "L1D=48K:12:64,L2=1280K:20:64,"
						    "llc=256m:16:64", err, sizeof(err)), 0);
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
		assert_int_equal(g.source[s], CP_GEO_OVERRIDE);
		assert_true(g.slot[s].valid);
	}
	assert_int_equal(g.slot[CP_CACHE_L1D].sets, 64);
	assert_int_equal(g.slot[CP_CACHE_L2].size_bytes, 1280 * KiB);
	assert_int_equal(g.slot[CP_CACHE_L2].ways, 20);
	assert_int_equal(g.slot[CP_CACHE_L2].sets, 1024);
	/* 480 MiB / (16 x 64) = 491520, not a power of two: refused even as an override */
	assert_int_equal(cp_geometry_apply_override(&g, "LLC=480M:16:64", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "gives 491520 sets"));
	assert_int_equal(g.slot[CP_CACHE_LLC].size_bytes, 256 * MiB);	/* unchanged */
	assert_int_equal(cp_geometry_apply_override(&g, "LLC=512M:16:64", err, sizeof(err)), 0);
	assert_int_equal(g.slot[CP_CACHE_LLC].sets, 524288);
	assert_int_equal(g.slot[CP_CACHE_LLC].level, 3);
}

static void test_override_subset_keeps_sysfs(void **state)
{
	struct cp_geometry g;
	char err[256] = "", root[4096];

	(void)state;
	cp_geometry_read_sysfs(&g, tree("skylake-sp", root, sizeof(root)));
	assert_int_equal(cp_geometry_apply_override(&g, "L2=2M:16:128", err, sizeof(err)), 0);
	assert_int_equal(g.source[CP_CACHE_L1D], CP_GEO_SYSFS);
	assert_int_equal(g.source[CP_CACHE_L2], CP_GEO_OVERRIDE);
	assert_int_equal(g.source[CP_CACHE_LLC], CP_GEO_SYSFS);
	assert_int_equal(g.slot[CP_CACHE_L2].sets, 1024);
	assert_int_equal(g.slot[CP_CACHE_L2].line_bytes, 128);
	assert_int_equal(g.slot[CP_CACHE_LLC].size_bytes, 22528 * KiB);
}

struct override_error {
	const char *spec;
	int ret;
	const char *message;	/* substring the user must see */
};

static const struct override_error override_errors[] = {
	{ "", -EINVAL, "--cache: empty; expected LEVEL=SIZE:WAYS:LINE" },
	{ "L1D", -EINVAL, "--cache 'L1D': expected LEVEL=SIZE:WAYS:LINE, e.g. L1D=48K:12:64" },
	{ "L1I=32K:8:64", -EINVAL, "unknown level 'L1I' in 'L1I=32K:8:64'; use L1D, L2 or LLC" },
	{ "L3=32M:16:64", -EINVAL, "unknown level 'L3'" },
	{ "=32M:16:64", -EINVAL, "unknown level ''" },
	{ "L1D=", -EINVAL, "--cache L1D=: missing the size" },
	{ "L1D=48K", -EINVAL, "--cache L1D=48K: missing the ways" },
	{ "L1D=48K:12", -EINVAL, "--cache L1D=48K:12: missing the line size" },
	{ "L1D=:12:64", -EINVAL, "missing the size; expected SIZE:WAYS:LINE, e.g. 48K:12:64" },
	{ "L1D=48K::64", -EINVAL, "missing the ways" },
	{ "L1D=48K:12:", -EINVAL, "missing the line size" },
	{ "L1D=0:12:64", -EINVAL, "--cache L1D=0:12:64: size must not be zero" },
	{ "L1D=0K:12:64", -EINVAL, "size must not be zero" },
	{ "L1D=48K:0:64", -EINVAL, "ways must be at least 1" },
	{ "L1D=48K:12:0", -EINVAL, "line size 0 must be a power of two from 16 to 256" },
	{ "L1D=48K:12:48", -EINVAL, "line size 48 must be a power of two" },
	{ "L1D=48K:12:512", -EINVAL, "line size 512 must be a power of two from 16 to 256" },
	{ "L1D=48K:16:64", -EINVAL,
	  "gives 48 sets (48 KiB / (16 ways x 64 B)), not a power of two" },
	{ "L1D=48K:10:64", -EINVAL,
	  "48 KiB is not a whole number of sets of 10 ways x 64 B lines" },
	{ "L1D=32K:64:1024", -EINVAL, "line size 1024" },
	{ "L1D=99999999999999999999:8:64", -ERANGE,
	  "size '99999999999999999999' is too large" },
	{ "L1D=17179869184G:8:64", -ERANGE, "size '17179869184G' is too large" },
	{ "L1D=32K:4294967296:64", -ERANGE, "ways '4294967296' is too large" },
	{ "L1D=32K:8:99999999999", -ERANGE, "line size '99999999999' is too large" },
	{ "LLC=1024G:1:16", -ERANGE, "gives 68719476736 sets, too many" },
	{ "L1D=48K:12:64:1", -EINVAL,
	  "--cache L1D=48K:12:64:1: unexpected ':1' after the line size" },
	{ "L1D=48K:12:64x", -EINVAL, "line size '64x' is not a number" },
	{ "L1D=48K:12x:64", -EINVAL, "ways '12x' is not a number" },
	{ "L1D=48KB:12:64", -EINVAL,
	  "size '48KB' is not a number with an optional K, M or G suffix" },
	{ "L1D=-48K:12:64", -EINVAL, "size '-48K' is not a number" },
	{ "L1D=48K:+12:64", -EINVAL, "ways '+12' is not a number" },
	{ "L1D=48K:12:64 ", -EINVAL, "line size '64 ' is not a number" },
	{ "L1D=48K:12:64,", -EINVAL, "empty entry (a stray ',')" },
	{ ",L1D=48K:12:64", -EINVAL, "empty entry" },
	{ "L1D=48K:12:64,,L2=1M:16:64", -EINVAL, "empty entry" },
	{ "L2=1M:16:64,l2=2M:16:64", -EINVAL, "--cache: L2 given twice" },
	/* a bad second entry must not leave the first one applied */
	{ "L1D=64K:16:64,L2=1M:16:48", -EINVAL, "line size 48" },
	{ "L1D=48K:12:640000000000000000000000000000000000000000000000000000000000000000000",
	  -EINVAL, "is too long" },
};

static void test_override_errors(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(override_errors) / sizeof(override_errors[0]); c++) {
		const struct override_error *oe = &override_errors[c];
		struct cp_geometry g, before;
		char err[256] = "";

		cp_geometry_init(&g);
		before = g;
		print_message("# '%s'\n", oe->spec);
		assert_int_equal(cp_geometry_apply_override(&g, oe->spec, err, sizeof(err)),
				 oe->ret);
		if (!strstr(err, oe->message))
			fail_msg("'%s': got \"%s\", want \"%s\"", oe->spec, err, oe->message);
		assert_memory_equal(&g, &before, sizeof(g));
	}
}

static void test_override_null_spec(void **state)
{
	struct cp_geometry g;
	char err[128];

	(void)state;
	cp_geometry_init(&g);
	assert_int_equal(cp_geometry_apply_override(&g, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
}

static void test_render(void **state)
{
	struct cp_geometry g;
	char line[160], root[4096], *out = NULL;
	size_t out_sz = 0;
	FILE *f;

	(void)state;
	cp_geometry_read_sysfs(&g, tree("vm-epyc-2vcpu", root, sizeof(root)));
	cp_geometry_format(&g, CP_CACHE_L1D, line, sizeof(line));
	assert_string_equal(line, "L1D 48 KiB, 12-way, 64 B lines, 64 sets (sysfs)");
	cp_geometry_format(&g, CP_CACHE_L2, line, sizeof(line));
	assert_string_equal(line, "L2 1 MiB, 16-way, 64 B lines, 1024 sets (sysfs)");
	cp_geometry_format(&g, CP_CACHE_LLC, line, sizeof(line));
	assert_string_equal(line, "LLC 32 MiB, 16-way, 64 B lines, 32768 sets (sysfs L3)");

	cp_geometry_read_sysfs(&g, tree("no-l3", root, sizeof(root)));
	cp_geometry_format(&g, CP_CACHE_LLC, line, sizeof(line));
	assert_string_equal(line, "LLC 1 MiB, 16-way, 64 B lines, 1024 sets (sysfs L2)");

	cp_geometry_read_sysfs(&g, tree("vm-bogus-l3", root, sizeof(root)));
	assert_int_equal(cp_geometry_apply_override(&g, "L2=1280K:20:64", line, sizeof(line)), 0);
	f = open_memstream(&out, &out_sz);
	assert_non_null(f);
	cp_geometry_print(&g, f);
	fclose(f);
	print_message("%s", out);
	assert_non_null(strstr(out, "L1D 48 KiB, 12-way, 64 B lines, 64 sets (sysfs)\n"
				    "L2 1280 KiB, 20-way, 64 B lines, 1024 sets (--cache)\n"
				    "LLC 32 MiB, 16-way, 64 B lines, 32768 sets (fallback model)\n"
				    "warning: sysfs index3 (L3 Unified) reports 480 MiB"));
	free(out);
}

static void test_too_many_warnings_are_counted(void **state)
{
	struct cp_cache_level idx[CP_GEO_MAX_WARNINGS + 3];
	struct cp_cache_index_text bad = { "x\n", "Data\n", "32K\n", "8\n", "64\n", "64\n" };
	struct cp_geometry g;

	(void)state;
	for (int i = 0; i < CP_GEO_MAX_WARNINGS + 3; i++)
		cp_cache_index_parse(&bad, i, &idx[i]);
	cp_geometry_from_indexes(&g, idx, CP_GEO_MAX_WARNINGS + 3, "/fake");
	/* 11 ignored indexes + 3 missing levels, 8 kept */
	assert_int_equal(g.nr_warnings, CP_GEO_MAX_WARNINGS);
	assert_int_equal(g.warnings_dropped, CP_GEO_MAX_WARNINGS + 3 + 3 - CP_GEO_MAX_WARNINGS);
}

struct set_case {
	enum cp_cache_slot slot;
	__u64 addr;
	__u32 set;
	__u64 line;
};

static void test_set_index(void **state)
{
	/* vm-epyc-2vcpu: L1D 64 sets, L2 1024 sets, LLC 32768 sets, 64 B lines */
	static const struct set_case cases[] = {
		{ CP_CACHE_L1D, 0, 0, 0 },
		{ CP_CACHE_L1D, 63, 0, 0 },
		{ CP_CACHE_L1D, 64, 1, 1 },
		{ CP_CACHE_L1D, 4095, 63, 63 },
		/* addresses 4 KiB apart share an L1D set: the classic conflict stride */
		{ CP_CACHE_L1D, 4096, 0, 64 },
		{ CP_CACHE_L1D, 0x7ffd12345678ULL, 0x19, 0x7ffd12345678ULL >> 6 },
		{ CP_CACHE_L2, 64 * KiB, 0, 1024 },
		{ CP_CACHE_L2, 64 * KiB + 64, 1, 1025 },
		{ CP_CACHE_LLC, 2 * MiB - 64, 32767, 32767 },
		{ CP_CACHE_LLC, 2 * MiB, 0, 32768 },
		{ CP_CACHE_LLC, ~0ULL, 32767, ~0ULL >> 6 },
	};
	struct cp_geometry g;
	char root[4096], err[128];

	(void)state;
	cp_geometry_read_sysfs(&g, tree("vm-epyc-2vcpu", root, sizeof(root)));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct cp_cache_level *l = &g.slot[cases[c].slot];

		print_message("# case %zu\n", c);
		assert_int_equal(cp_cache_set_of(l, cases[c].addr), cases[c].set);
		assert_int_equal(cp_cache_line_of(l, cases[c].addr), cases[c].line);
	}
	/* 128 B lines halve the line number and move the set with it */
	assert_int_equal(cp_geometry_apply_override(&g, "L1D=32K:4:128", err, sizeof(err)), 0);
	assert_int_equal(cp_cache_set_of(&g.slot[CP_CACHE_L1D], 128 * 63 + 127), 63);
	assert_int_equal(cp_cache_set_of(&g.slot[CP_CACHE_L1D], 128 * 64), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysfs_trees),
		cmocka_unit_test(test_index_parse),
		cmocka_unit_test(test_level_check),
		cmocka_unit_test(test_fallback_model_is_sane),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_override_all_levels),
		cmocka_unit_test(test_override_subset_keeps_sysfs),
		cmocka_unit_test(test_override_errors),
		cmocka_unit_test(test_override_null_spec),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_too_many_warnings_are_counted),
		cmocka_unit_test(test_set_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
