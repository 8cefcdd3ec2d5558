// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sources' table: each kind's name comes back to its kind; a name or
 * kind no row has is "?" and has nothing; and every row says what its
 * samples are in a way the rest of the profiler can rely on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "machine/source.h"

static const enum cp_source_kind kinds[] = {
	CP_SOURCE_AUTO, CP_SOURCE_PEBS, CP_SOURCE_IBS, CP_SOURCE_SOFT, CP_SOURCE_FAULTS,
};

static void test_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		enum cp_source_kind k = (enum cp_source_kind) - 1;
		const char *name = cp_source_name(kinds[i]);

		assert_int_equal(cp_source_parse(name, &k), 0);
		assert_int_equal(k, kinds[i]);
		assert_ptr_equal(cp_source_named(name), cp_source_of(kinds[i]));
	}
	{
		char names[64];

		cp_source_names(names, sizeof(names));
		assert_string_equal(names, "auto, pebs, ibs, soft, faults");
		cp_source_names(names, 8); /* cut, still a string */
		assert_string_equal(names, "auto, p");
	}
	/* the spellings a user and a report know */
	assert_string_equal(cp_source_name(CP_SOURCE_PEBS), "pebs");
	assert_string_equal(cp_source_name(CP_SOURCE_SOFT), "soft");
	assert_string_equal(cp_source_name(CP_SOURCE_FAULTS), "faults");
}

static void test_unknown(void **state)
{
	const struct cp_source_desc *d[] = {
		cp_source_named(NULL),
		cp_source_named("magic"),
		cp_source_named(""),
		cp_source_of((enum cp_source_kind)5),
		cp_source_of((enum cp_source_kind) - 1),
	};
	enum cp_source_kind k;

	(void)state;
	assert_int_equal(cp_source_parse("PEBS", &k), -EINVAL);
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		assert_string_equal(d[i]->name, "?");
		assert_false(d[i]->recordable || d[i]->needs_pmu || d[i]->forwards_all ||
			     d[i]->by_time || d[i]->has_latency);
		/* what older reports, which named no source, measured */
		assert_int_equal(d[i]->impact, CP_IMPACT_MISSES);
	}
}

/*
 * Each row as the code before the table decided it: a PMU's samples (PEBS,
 * IBS) carry latency and weigh misses, IBS samples every op; soft ticks weigh
 * time; page faults are samples of every access; auto is no run's source.
 */
static void test_rows(void **state)
{
	static const struct {
		enum cp_source_kind kind;
		struct cp_source_desc want;
	} rows[] = {
		{CP_SOURCE_AUTO,
		 {"auto", false, false, false, false, false, false, CP_IMPACT_MISSES,
		  "share of the sampled misses"}},
		{CP_SOURCE_PEBS,
		 {"pebs", true, true, false, false, true, false, CP_IMPACT_MISSES,
		  "share of the sampled misses"}},
		{CP_SOURCE_IBS,
		 {"ibs", true, true, true, false, true, false, CP_IMPACT_MISSES,
		  "share of the sampled misses"}},
		{CP_SOURCE_SOFT,
		 {"soft", true, false, false, true, false, true, CP_IMPACT_TIME,
		  "share of the time samples"}},
		{CP_SOURCE_FAULTS,
		 {"faults", true, false, false, true, false, false, CP_IMPACT_FAULTS,
		  "share of the sampled misses (page faults)"}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct cp_source_desc *d = cp_source_of(rows[i].kind), *w = &rows[i].want;

		assert_string_equal(d->name, w->name);
		assert_int_equal(d->recordable, w->recordable);
		assert_int_equal(d->needs_pmu, w->needs_pmu);
		assert_int_equal(d->every_op, w->every_op);
		assert_int_equal(d->forwards_all, w->forwards_all);
		assert_int_equal(d->has_latency, w->has_latency);
		assert_int_equal(d->by_time, w->by_time);
		assert_int_equal(d->impact, w->impact);
		assert_string_equal(d->impact_text, w->impact_text);
	}
}

/*
 * What a row must hold for the code that reads it: auto is chosen before
 * a run and never one's; a run's source without a PMU cannot tell a hit
 * from a miss, so it forwards every access; time is measured by ticks
 * alone; latency and "every op" come from a PMU; impacts say what they
 * measure.
 */
static void test_rows_hold(void **state)
{
	(void)state;
	assert_false(cp_source_of(CP_SOURCE_AUTO)->recordable);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct cp_source_desc *d = cp_source_of(kinds[i]);

		if (!d->recordable)
			continue;
		assert_int_equal(d->forwards_all, !d->needs_pmu);
		assert_int_equal(d->by_time, d->impact == CP_IMPACT_TIME);
		if (d->has_latency || d->every_op)
			assert_true(d->needs_pmu);
		assert_non_null(strstr(d->impact_text, "share of the"));
	}
	/* the one PMU that samples every op, not its memory ones only */
	assert_true(cp_source_of(CP_SOURCE_IBS)->every_op);
	assert_false(cp_source_of(CP_SOURCE_PEBS)->every_op);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_rows_hold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
