// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON report's soft-mode keys (what the score measures, the note,
 * stream evidence) and the keys of objects no probe saw.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report_json.h"

static char *render(const struct cp_report *r, const struct cp_classification *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(cp_report_json(r, c, f), 0);
	fclose(f);
	return buf;
}

static void expect(const char *text, const char *want, bool present)
{
	if (!strstr(text, want) == present)
		fail_msg("'%s' %s in:\n%s", want, present ? "missing" : "present", text);
}

/* A soft capacity issue: a stride-8 stream, 8 MiB > L2 (1 MiB). */
static void test_soft_keys(void **state)
{
	struct cp_issue is = {
		.type = CP_ISSUE_CAPACITY, .tgid = 7, .score = 0.25,
		.capacity = { .stream = true, .level = CP_CACHE_L2, .stride = -8,
			      .footprint = 8u << 20, .object_bytes = 8u << 20,
			      .level_bytes = 1u << 20 },
	};
	struct cp_classification c = { .issues = &is, .nr_issues = 1, .soft = true,
				       .time_samples = 4000, .unproven = 3,
				       .unproven_no_history = 2 };
	struct cp_report r = { .source = "soft" };
	char *text;

	(void)state;
	snprintf(is.hint, sizeof(is.hint), "tile");
	text = render(&r, &c);
	expect(text, "\"source\": \"soft\"", true);
	expect(text, "\"impact\": \"time_share\"", true);
	expect(text, "\"note\": \"" CP_SOFT_NOTE "\"", true);
	expect(text, "\"stride\": -8", true);
	expect(text, "\"footprint\": 8388608", true);
	expect(text, "\"level\": \"L2\"", true);
	expect(text, "\"level_size\": 1048576", true);
	expect(text, "\"time_samples\": 4000", true);
	expect(text, "\"unproven\": 3", true);
	expect(text, "\"unproven_no_history\": 2", true);
	free(text);
	/* the same with a PMU: miss shares, no note, no soft counters */
	c.soft = false;
	is.capacity.stream = false;
	r.source = "pebs";
	text = render(&r, &c);
	expect(text, "\"impact\": \"miss_share\"", true);
	expect(text, "\"note\": null", true);
	expect(text, "\"stream\"", false);
	expect(text, "\"unproven\"", false);
	free(text);
}

/* found_by, before_attach and allocator appear on the objects they describe only. */
static void test_objects_without_probe(void **state)
{
	struct cp_issue is = { .type = CP_ISSUE_FALSE_SHARING, .tgid = 7, .nr_objects = 3 };
	struct cp_classification c = { .issues = &is, .nr_issues = 1 };
	struct cp_report r = { .source = "soft" };
	char *text;

	(void)state;
	is.objects[0] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .start = 0x5555555592a0,
						  .size = 104, .nr_objects = 1,
						  .flags = CP_OBJ_F_CHUNK, .before_attach = true };
	is.objects[1] = (struct cp_issue_object){ .kind = CP_OBJ_UNKNOWN, .name = "[anon]",
						  .allocator = "tcmalloc" };
	is.objects[2] = (struct cp_issue_object){ .kind = CP_OBJ_HEAP, .size = 64, .callsite = 3,
						  .nr_objects = 1 };
	text = render(&r, &c);
	expect(text, "\"size\": 104,\n          \"name\": null,\n          \"start\": \"0x5555555592a0\"", true);
	expect(text, "\"found_by\": \"glibc_chunk\",\n          \"before_attach\": true", true);
	expect(text, "\"allocator\": \"tcmalloc\"", true);
	/* once each: the probed heap object has neither */
	expect(strstr(text, "\"found_by\"") + 1, "\"found_by\"", false);
	expect(strstr(text, "\"allocator\"") + 1, "\"allocator\"", false);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soft_keys),
		cmocka_unit_test(test_objects_without_probe),
	};

	return cmocka_run_group_tests_name("report_json", tests, NULL, NULL);
}
