// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pprof builder (export/pprof_build.h) and the measures by source
 * (export/measures.h), read back with protoc-c's own unpacker: what
 * go tool pprof relies on (string 0 is "", ids from 1, every id a sample
 * or line names exists), the inline chain's order, the dedup of
 * functions, mappings and locations, labels, and the sample types of each
 * source (a soft or faults profile never has a misses type).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "export/measures.h"
#include "export/pprof_build.h"
#include "proto/profile.pb-c.h"
#include "util/gzip.h"

typedef Perftools__Profiles__Profile pb_profile;

static const struct cp_pprof_header hdr = {
	.types = { { "samples", "count" }, { "misses", "count" } },
	.nr_types = 2,
	.period_type = { "accesses", "count" },
	.period = 1000,
	.default_type = "misses",
	.duration_ns = 5000000000,
	.comments = { "a comment" },
};

/* The packed profile of @b, unpacked again. */
static pb_profile *round_trip(struct cp_pprof *b)
{
	pb_profile *pr;
	__u8 *buf;
	size_t len;

	assert_int_equal(cp_pprof__pack(b, &buf, &len), 0);
	pr = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(pr);
	free(buf);
	return pr;
}

static const char *str(const pb_profile *pr, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pr->n_string_table);
	return pr->string_table[i];
}

static const Perftools__Profiles__Location *loc(const pb_profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_location; i++)
		if (pr->location[i]->id == id)
			return pr->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *fn(const pb_profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == id)
			return pr->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

/* The function name of line @k of location @id. */
static const char *line_fn(const pb_profile *pr, uint64_t id, size_t k)
{
	const Perftools__Profiles__Location *l = loc(pr, id);

	assert_true(k < l->n_line);
	return str(pr, fn(pr, l->line[k]->function_id)->name);
}

static const struct cp_pprof_mapping exe = {
	.start = 0x400000, .limit = 0x401000, .offset = 0, .file = "/bin/app",
	.build_id = "abcdef"
};

/* memcpy_small inlined into copy_rows, inlined into main: one address, three lines */
static const struct cp_pprof_line chain[] = {
	{ .function = "memcpy_small", .file = "util.h", .line = 7 },
	{ .function = "copy_rows", .file = "rows.c", .line = 30 },
	{ .function = "main", .file = "main.c", .line = 12 },
};
static const struct cp_pprof_line main_40[] = { { .function = "main", .file = "main.c", .line = 40 } };

static void test_tables(void **state)
{
	struct cp_pprof_frame fr[3] = {
		{ .address = 0x400100, .mapping = &exe, .lines = chain, .nr_lines = 3 },
		{ .address = 0x400200, .mapping = &exe, .lines = main_40, .nr_lines = 1 },
		/* outside every file: named by address only */
		{ .address = 0x7fff0000, .space = 42 },
	};
	const struct cp_pprof_label labels[] = {
		{ .key = "issue_type", .str = "false_sharing" },
		{ .key = "pid", .num = 42 },
	};
	__s64 v1[2] = { 10, 4 }, v2[2] = { 3, 0 };
	struct cp_pprof *b = cp_pprof__new(&hdr);
	pb_profile *pr;

	(void)state;
	assert_non_null(b);
	/* the leaf, called from main:40 (a caller), called from an unknown frame */
	assert_int_equal(cp_pprof__add(b, &(struct cp_pprof_sample){ .frames = fr, .nr_frames = 3,
								      .values = v1, .labels = labels,
								      .nr_labels = 2 }),
			 0);
	/* the same caller frame again as a leaf of its own */
	assert_int_equal(cp_pprof__add(b, &(struct cp_pprof_sample){ .frames = &fr[1],
								      .nr_frames = 1, .values = v2 }),
			 0);
	assert_int_equal(cp_pprof__add(b, &(struct cp_pprof_sample){ .values = v2 }), -EINVAL);
	assert_int_equal(cp_pprof__samples(b), 2);
	pr = round_trip(b);

	assert_string_equal(pr->string_table[0], "");
	assert_int_equal(pr->n_sample_type, 2);
	assert_string_equal(str(pr, pr->sample_type[1]->type), "misses");
	assert_string_equal(str(pr, pr->default_sample_type), "misses");
	assert_string_equal(str(pr, pr->period_type->type), "accesses");
	assert_int_equal(pr->period, 1000);
	assert_int_equal(pr->duration_nanos, 5000000000);
	assert_int_equal(pr->n_comment, 1);
	assert_string_equal(str(pr, pr->comment[0]), "a comment");

	/* one mapping for both frames in it, ids from 1 */
	assert_int_equal(pr->n_mapping, 1);
	assert_int_equal(pr->mapping[0]->id, 1);
	assert_string_equal(str(pr, pr->mapping[0]->filename), "/bin/app");
	assert_string_equal(str(pr, pr->mapping[0]->build_id), "abcdef");
	assert_int_equal(pr->mapping[0]->memory_limit, 0x401000);
	assert_true(pr->mapping[0]->has_functions && pr->mapping[0]->has_inline_frames);

	/* three locations, not four: the second sample's frame is the first's caller */
	assert_int_equal(pr->n_location, 3);
	for (size_t i = 0; i < pr->n_location; i++)
		assert_int_equal(pr->location[i]->id, i + 1);
	/* main is one function, in two locations (lines 12 and 40) */
	assert_int_equal(pr->n_function, 3);
	for (size_t i = 0; i < pr->n_function; i++)
		assert_int_equal(pr->function[i]->id, i + 1);

	/* the leaf first; its inline chain innermost first, main last */
	assert_int_equal(pr->sample[0]->n_location_id, 3);
	assert_int_equal(loc(pr, pr->sample[0]->location_id[0])->address, 0x400100);
	assert_string_equal(line_fn(pr, pr->sample[0]->location_id[0], 0), "memcpy_small");
	assert_string_equal(line_fn(pr, pr->sample[0]->location_id[0], 1), "copy_rows");
	assert_string_equal(line_fn(pr, pr->sample[0]->location_id[0], 2), "main");
	assert_int_equal(loc(pr, pr->sample[0]->location_id[0])->line[2]->line, 12);
	assert_int_equal(pr->sample[1]->location_id[0], pr->sample[0]->location_id[1]);
	assert_int_equal(loc(pr, pr->sample[0]->location_id[2])->mapping_id, 0);
	assert_int_equal(loc(pr, pr->sample[0]->location_id[2])->n_line, 0);
	assert_string_equal(str(pr, fn(pr, loc(pr, pr->sample[0]->location_id[1])->line[0]
						     ->function_id)
					  ->filename),
			    "main.c");

	assert_int_equal(pr->sample[0]->n_value, 2);
	assert_int_equal(pr->sample[0]->value[0], 10);
	assert_int_equal(pr->sample[0]->value[1], 4);
	/* a string label and a numeric one */
	assert_int_equal(pr->sample[0]->n_label, 2);
	assert_string_equal(str(pr, pr->sample[0]->label[0]->key), "issue_type");
	assert_string_equal(str(pr, pr->sample[0]->label[0]->str), "false_sharing");
	assert_string_equal(str(pr, pr->sample[0]->label[1]->key), "pid");
	assert_int_equal(pr->sample[0]->label[1]->str, 0);
	assert_int_equal(pr->sample[0]->label[1]->num, 42);
	assert_int_equal(pr->sample[1]->n_label, 0);

	perftools__profiles__profile__free_unpacked(pr, NULL);
	cp_pprof__free(b);
}

/* An address outside every file is a location per address space; in a file, one for all. */
static void test_address_spaces(void **state)
{
	struct cp_pprof_frame fr[4] = {
		{ .address = 0x10000, .space = 1 },
		{ .address = 0x10000, .space = 2 },
		{ .address = 0x400100, .mapping = &exe, .space = 1, .lines = main_40, .nr_lines = 1 },
		{ .address = 0x400100, .mapping = &exe, .space = 2, .lines = main_40, .nr_lines = 1 },
	};
	__s64 v[2] = { 1, 1 };
	struct cp_pprof *b = cp_pprof__new(&hdr);
	pb_profile *pr;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(cp_pprof__add(b, &(struct cp_pprof_sample){ .frames = &fr[i],
									      .nr_frames = 1,
									      .values = v }),
				 0);
	pr = round_trip(b);
	assert_int_equal(pr->n_location, 3);
	assert_int_not_equal(pr->sample[0]->location_id[0], pr->sample[1]->location_id[0]);
	assert_int_equal(pr->sample[2]->location_id[0], pr->sample[3]->location_id[0]);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	cp_pprof__free(b);
}

/* A name a target chose cannot carry a control character into a reader's terminal. */
static void test_printable_strings(void **state)
{
	const struct cp_pprof_line evil[] = { { .function = "f\033[2J\n", .file = "x.c" } };
	struct cp_pprof_frame fr = { .address = 1, .lines = evil, .nr_lines = 1 };
	__s64 v[2] = { 1, 1 };
	struct cp_pprof *b = cp_pprof__new(&hdr);
	pb_profile *pr;

	(void)state;
	assert_int_equal(
		cp_pprof__add(b, &(struct cp_pprof_sample){ .frames = &fr, .nr_frames = 1, .values = v }),
		0);
	pr = round_trip(b);
	assert_string_equal(str(pr, pr->function[0]->name), "f?[2J?");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	cp_pprof__free(b);
}

static bool has_type(const struct cp_measures *ms, const char *type)
{
	for (unsigned int i = 0; i < ms->nr; i++)
		if (!strcmp(cp_measure_type(ms->m[i]).type, type))
			return true;
	return false;
}

static void test_measures(void **state)
{
	const struct cp_stack_counts c = { .samples = 7, .misses = 5, .lat_sum = 300, .ticks = 9 };
	struct cp_measures ms;

	(void)state;
	/* a PMU: samples, misses, latency in cycles; misses are what matters */
	cp_measures_of(CP_SOURCE_PEBS, 0, 20000, 50000, &ms);
	assert_int_equal(ms.nr, 3);
	assert_string_equal(cp_measure_type(ms.m[ms.main]).type, "misses");
	assert_string_equal(cp_measure_type(ms.m[2]).unit, "cycles");
	assert_int_equal(cp_measure_value(&ms, ms.m[ms.main], &c), 5);
	assert_int_equal(cp_measure_value(&ms, ms.m[2], &c), 300);
	/* loads and stores with periods of their own: no one period */
	assert_int_equal(ms.period, 0);
	cp_measures_of(CP_SOURCE_IBS, 0, 4096, 4096, &ms);
	assert_int_equal(ms.period, 4096);

	/* soft: time, never misses; CPU time only when the tick period is known */
	cp_measures_of(CP_SOURCE_SOFT, 0, 20000, 50000, &ms);
	assert_int_equal(ms.nr, 1);
	assert_false(has_type(&ms, "misses"));
	assert_string_equal(cp_measure_type(ms.m[ms.main]).type, "ticks");
	assert_int_equal(cp_measure_value(&ms, ms.m[ms.main], &c), 9);
	cp_measures_of(CP_SOURCE_SOFT, 200040, 20000, 50000, &ms); /* 4999 Hz */
	assert_int_equal(ms.nr, 2);
	assert_false(has_type(&ms, "misses"));
	assert_string_equal(cp_measure_type(ms.m[1]).type, "cpu");
	assert_string_equal(cp_measure_type(ms.m[1]).unit, "nanoseconds");
	assert_int_equal(cp_measure_value(&ms, ms.m[1], &c), 9 * 200040);
	assert_int_equal(ms.period, 200040);

	/* page faults: samples only */
	cp_measures_of(CP_SOURCE_FAULTS, 0, 20000, 50000, &ms);
	assert_int_equal(ms.nr, 1);
	assert_false(has_type(&ms, "misses"));
	assert_int_equal(cp_measure_value(&ms, ms.m[ms.main], &c), 7);
}

/* Goldens compare gzip bytes: the same input gives the same output, time 0, and it inflates back. */
static void test_gzip(void **state)
{
	static const char text[] = "cacheperf cacheperf cacheperf";
	__u8 *a, *b, back[64];
	size_t la, lb;
	z_stream z = { 0 };

	(void)state;
	assert_int_equal(cp_gzip(text, sizeof(text), &a, &la), 0);
	assert_int_equal(cp_gzip(text, sizeof(text), &b, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_int_equal(a[0], 0x1f);
	assert_int_equal(a[1], 0x8b);
	assert_int_equal(a[4] | a[5] | a[6] | a[7], 0); /* MTIME */
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = a;
	z.avail_in = (uInt)la;
	z.next_out = back;
	z.avail_out = sizeof(back);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	inflateEnd(&z);
	assert_int_equal(z.total_out, sizeof(text));
	assert_memory_equal(back, text, sizeof(text));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_address_spaces),
		cmocka_unit_test(test_printable_strings),
		cmocka_unit_test(test_measures),
		cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
