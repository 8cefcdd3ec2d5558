// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pure parsers under PMU detection: sysfs format specs ("config:0-7,32-35"),
 * event strings ("event=0xcd,umask=0x1,ldlat=3"), /proc/cpuinfo and cpulists.
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

#include "machine/cpuset.h"
#include "machine/pmu.h"
#include "machine/pmu_format.h"

/* --- format and event strings ------------------------------------------- */

struct format_case {
	const char *text;
	int ret;
	__u8 word;
	__u64 mask;
};

static const struct format_case format_cases[] = {
	{ "config:0-7", 0, 0, 0xff },
	{ "config:0-7\n", 0, 0, 0xff },
	{ "config1:0-15", 0, 1, 0xffff },
	{ "config:0-7,32-35", 0, 0, 0xf000000ffull },
	{ "config:23", 0, 0, 1ull << 23 },
	{ "config2:0", 0, 2, 1 },
	{ "config3:0-63", 0, 3, ~0ull },
	{ "config1:0-63", 0, 1, ~0ull },
	{ "config:63", 0, 0, 1ull << 63 },
	{ "config:19", 0, 0, 1ull << 19 },
	{ "config:", -EINVAL, 0, 0 },
	{ "config4:0", -EINVAL, 0, 0 },
	{ "conf:0-7", -EINVAL, 0, 0 },
	{ "config:7-0", -EINVAL, 0, 0 },
	{ "config:0-64", -EINVAL, 0, 0 },
	{ "config:64", -EINVAL, 0, 0 },
	{ "config:0-7,4-9", -EINVAL, 0, 0 },	/* overlapping ranges */
	{ "config:0-7,", -EINVAL, 0, 0 },
	{ "config:0-7x", -EINVAL, 0, 0 },
	{ "config:0-7\n\n", -EINVAL, 0, 0 },
	{ "0-7", -EINVAL, 0, 0 },
	{ "", -EINVAL, 0, 0 },
};

static void test_format_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(format_cases) / sizeof(format_cases[0]); i++) {
		const struct format_case *c = &format_cases[i];
		__u8 word = 99;
		__u64 mask = 0x1234;

		print_message("# '%s'\n", c->text);
		assert_int_equal(cp_pmu_format_parse(c->text, &word, &mask), c->ret);
		if (c->ret) {
			assert_int_equal(word, 99);
			assert_int_equal(mask, 0x1234);
			continue;
		}
		assert_int_equal(word, c->word);
		assert_int_equal(mask, c->mask);
	}
	assert_int_equal(cp_pmu_format_parse(NULL, &(__u8){ 0 }, &(__u64){ 0 }), -EINVAL);
}

static void test_format_split_field(void **state)
{
	struct cp_pmu_formats fs = { 0 };
	const struct cp_pmu_format *ev;
	__u64 config[CP_PMU_CONFIG_WORDS] = { 0, 0, 0, 0 };

	(void)state;
	/* AMD's 12-bit event select: low 8 bits at 0-7, high 4 at 32-35 */
	assert_int_equal(cp_pmu_formats_add(&fs, "event", "config:0-7,32-35\n"), 0);
	ev = cp_pmu_formats_find(&fs, "event");
	assert_non_null(ev);
	assert_int_equal(cp_pmu_format_set(ev, 0x1c2, config), 0);
	assert_int_equal(config[0], 0x1000000c2ull);
	assert_int_equal(cp_pmu_format_get(ev, config), 0x1c2);
	/* replacing a field clears its old bits only */
	config[0] |= 0xff00;
	assert_int_equal(cp_pmu_format_set(ev, 0x0c0, config), 0);
	assert_int_equal(config[0], 0xffc0ull);
	assert_int_equal(cp_pmu_format_set(ev, 0x1000, config), -ERANGE);
	assert_int_equal(config[0], 0xffc0ull);
	assert_null(cp_pmu_formats_find(&fs, "umask"));
	assert_int_equal(cp_pmu_formats_add(&fs, "bad", "config:9-1"), -EINVAL);
	assert_int_equal(fs.nr, 1);
	for (int i = fs.nr; i < CP_PMU_MAX_FORMATS; i++)
		assert_int_equal(cp_pmu_formats_add(&fs, "x", "config:1"), 0);
	assert_int_equal(cp_pmu_formats_add(&fs, "y", "config:1"), -ENOSPC);
}

static void intel_formats(struct cp_pmu_formats *fs)
{
	memset(fs, 0, sizeof(*fs));
	assert_int_equal(cp_pmu_formats_add(fs, "event", "config:0-7"), 0);
	assert_int_equal(cp_pmu_formats_add(fs, "umask", "config:8-15"), 0);
	assert_int_equal(cp_pmu_formats_add(fs, "any", "config:21"), 0);
	assert_int_equal(cp_pmu_formats_add(fs, "cmask", "config:24-31"), 0);
	assert_int_equal(cp_pmu_formats_add(fs, "ldlat", "config1:0-15"), 0);
}

struct event_case {
	const char *text;
	int ret;
	__u64 config, config1;
	const char *err;
};

static const struct event_case event_cases[] = {
	{ "event=0xcd,umask=0x1,ldlat=3\n", 0, 0x1cd, 3, NULL },
	{ "event=0xd0,umask=0x82", 0, 0x82d0, 0, NULL },
	{ "event=0x03,umask=0x82", 0, 0x8203, 0, NULL },
	{ "event=205,umask=1", 0, 0x1cd, 0, NULL },		/* decimal */
	{ "event=0x3c,any", 0, 0x20003c, 0, NULL },		/* a bare term is 1 */
	{ "event=0xc0,cmask=0x1,ldlat=0xffff", 0, 0x10000c0, 0xffff, NULL },
	{ "event=0xcd,snoop=1", -EINVAL, 0, 0, "term 'snoop' has no format file" },
	{ "event=0xcdx", -EINVAL, 0, 0, "term 'event': '0xcdx' is not a number" },
	{ "event=0x", -EINVAL, 0, 0, "term 'event': '0x' is not a number" },
	{ "event=-1", -EINVAL, 0, 0, "term 'event': '-1' is not a number" },
	{ "event=0x1cd", -ERANGE, 0, 0, "term 'event': value 0x1cd does not fit its 8 bits" },
	{ "ldlat=0x10000", -ERANGE, 0, 0, "term 'ldlat': value 0x10000 does not fit its 16 bits" },
	{ "", -EINVAL, 0, 0, "event text is empty" },
	{ "\n", -EINVAL, 0, 0, "event text is empty" },
};

static void test_event_parse(void **state)
{
	struct cp_pmu_formats fs;

	(void)state;
	intel_formats(&fs);
	for (size_t i = 0; i < sizeof(event_cases) / sizeof(event_cases[0]); i++) {
		const struct event_case *c = &event_cases[i];
		__u64 config[CP_PMU_CONFIG_WORDS];
		char err[128] = "";

		print_message("# '%s'\n", c->text);
		assert_int_equal(cp_pmu_event_parse(&fs, c->text, config, err, sizeof(err)),
				 c->ret);
		if (c->ret) {
			assert_string_equal(err, c->err);
			continue;
		}
		assert_int_equal(config[0], c->config);
		assert_int_equal(config[1], c->config1);
		assert_int_equal(config[2], 0);
	}
	assert_true(cp_pmu_event_has_term("event=0xcd,umask=0x1,ldlat=3\n", "ldlat"));
	assert_true(cp_pmu_event_has_term("ldlat=3,event=0xcd", "ldlat"));
	assert_false(cp_pmu_event_has_term("event=0xd0,umask=0x82\n", "ldlat"));
	assert_false(cp_pmu_event_has_term("event=0xd0,xldlat=2", "ldlat"));
	assert_false(cp_pmu_event_has_term("event=0xd0,ldlatx=2", "ldlat"));
}

/* --- cpuinfo and CPU sets ----------------------------------------------- */

static void test_cpuinfo_parse(void **state)
{
	struct cp_cpu_id id;

	(void)state;
	assert_int_equal(cp_cpuinfo_parse("processor\t: 0\nvendor_id\t: GenuineIntel\n"
					  "cpu family\t: 6\nmodel\t\t: 143\n"
					  "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
					  "flags\t\t: fpu pebs hypervisor\n\n"
					  "processor\t: 1\nvendor_id\t: AuthenticAMD\n", &id), 0);
	assert_int_equal(id.vendor, CP_VENDOR_INTEL);
	assert_int_equal(id.family, 6);
	assert_int_equal(id.model, 143);	/* "model name" is not "model" */
	assert_true(id.hypervisor);
	assert_int_equal(cp_cpuinfo_parse("vendor_id : HygonGenuine\ncpu family : 24\n"
					  "model : 0\nflags : fpu hypervisorx\n", &id), 0);
	assert_int_equal(id.vendor, CP_VENDOR_AMD);
	assert_false(id.hypervisor);
	assert_int_equal(cp_cpuinfo_parse("vendor_id\t: CentaurHauls\ncpu family\t: 7\n"
					  "model\t\t: 91\n", &id), 0);
	assert_int_equal(id.vendor, CP_VENDOR_OTHER);
	/* the second block does not count */
	assert_int_equal(cp_cpuinfo_parse("vendor_id\t: GenuineIntel\ncpu family\t: 6\n\n"
					  "model\t\t: 85\n", &id), -EINVAL);
	assert_int_equal(cp_cpuinfo_parse("vendor_id\t: GenuineIntel\ncpu family\t: x\n"
					  "model\t\t: 85\n", &id), -EINVAL);
	assert_int_equal(cp_cpuinfo_parse("", &id), -EINVAL);
	assert_int_equal(cp_cpuinfo_parse(NULL, &id), -EINVAL);
}

struct cpuset_case {
	const char *text;
	int ret;
	int has[4], hasnt[4];	/* -1 ends */
};

static const struct cpuset_case cpuset_cases[] = {
	{ "0-15\n", 16, { 0, 15, -1 }, { 16, -1 } },
	{ "16-23", 8, { 16, 23, -1 }, { 15, 24, -1 } },
	{ "0,2,4-5\n", 4, { 0, 2, 4, 5 }, { 1, 3, 6, -1 } },
	{ "8191", 1, { 8191, -1 }, { 0, -1 } },
	{ "\n", 0, { -1 }, { 0, -1 } },
	{ "", 0, { -1 }, { 0, -1 } },
	{ "8192", -ERANGE, { -1 }, { -1 } },
	{ "3-1", -EINVAL, { -1 }, { -1 } },
	{ "0-", -EINVAL, { -1 }, { -1 } },
	{ "0,,1", -EINVAL, { -1 }, { -1 } },
	{ "0 1", -EINVAL, { -1 }, { -1 } },
	{ "a", -EINVAL, { -1 }, { -1 } },
};

static void test_cpuset(void **state)
{
	struct cp_cpuset s, t, u;

	(void)state;
	for (size_t i = 0; i < sizeof(cpuset_cases) / sizeof(cpuset_cases[0]); i++) {
		const struct cpuset_case *c = &cpuset_cases[i];

		print_message("# '%s'\n", c->text);
		assert_int_equal(cp_cpuset_parse(c->text, &s), c->ret);
		for (int k = 0; k < 4 && c->has[k] >= 0; k++)
			assert_true(cp_cpuset_has(&s, c->has[k]));
		for (int k = 0; k < 4 && c->hasnt[k] >= 0; k++)
			assert_false(cp_cpuset_has(&s, c->hasnt[k]));
	}
	assert_int_equal(cp_cpuset_parse("1,63-65,8000", &s), 5);
	assert_int_equal(cp_cpuset_next(&s, 0), 1);
	assert_int_equal(cp_cpuset_next(&s, 2), 63);
	assert_int_equal(cp_cpuset_next(&s, 65), 65);
	assert_int_equal(cp_cpuset_next(&s, 66), 8000);
	assert_int_equal(cp_cpuset_next(&s, 8001), -1);
	assert_int_equal(cp_cpuset_parse("0-64", &t), 65);
	cp_cpuset_and(&u, &s, &t);
	assert_int_equal(cp_cpuset_count(&u), 3);	/* 1, 63, 64 */
	assert_false(cp_cpuset_has(&u, -1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_format_split_field),
		cmocka_unit_test(test_event_parse),
		cmocka_unit_test(test_cpuinfo_parse),
		cmocka_unit_test(test_cpuset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
