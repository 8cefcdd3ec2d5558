// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capability sets left after the drop: only what is kept and was
 * permitted, nothing inheritable; every other capability leaves the
 * bounding set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/caps.h"
#include "live/run.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define ALL	     0x000001ffffffffffULL /* root's sets on Linux 6.x: capabilities 0..40 */

static void test_keep(void **state)
{
	static const struct {
		struct cp_caps now;
		__u64 keep;
		struct cp_caps want;
	} cases[] = {
		/* root: the kept ones, effective = permitted, none inheritable */
		{{ALL, ALL, ALL}, CP_LIVE_CAPS, {CP_LIVE_CAPS, CP_LIVE_CAPS, 0}},
		/* a unit's set without CAP_DAC_READ_SEARCH: never more than permitted */
		{{0, CP_CAP(CAP_BPF) | CP_CAP(CAP_PERFMON) | CP_CAP(CAP_KILL), 0},
		 CP_LIVE_CAPS,
		 {CP_CAP(CAP_BPF) | CP_CAP(CAP_PERFMON), CP_CAP(CAP_BPF) | CP_CAP(CAP_PERFMON), 0}},
		/* an unprivileged user (perf_event_paranoid allows it): nothing to drop */
		{{0, 0, 0}, CP_LIVE_CAPS, {0, 0, 0}},
		/* an effective set that was lowered comes back only for what is kept */
		{{0, ALL, 0}, CP_CAP(CAP_BPF), {CP_CAP(CAP_BPF), CP_CAP(CAP_BPF), 0}},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct cp_caps got;

		cp_caps_keep(&cases[i].now, cases[i].keep, &got);
		if (got.effective != cases[i].want.effective ||
		    got.permitted != cases[i].want.permitted ||
		    got.inheritable != cases[i].want.inheritable)
			fail_msg("case %zu: %llx/%llx/%llx", i, (unsigned long long)got.effective,
				 (unsigned long long)got.permitted,
				 (unsigned long long)got.inheritable);
	}
}

/* What the loop keeps: the five it needs, and none of the ones it must not have. */
static void test_live_caps(void **state)
{
	char names[256];

	(void)state;
	assert_int_equal(CP_LIVE_CAPS, 0x000000c000280004ULL);
	assert_string_equal(cp_caps_names(CP_LIVE_CAPS, names, sizeof(names)),
			    "CAP_DAC_READ_SEARCH CAP_SYS_PTRACE CAP_SYS_ADMIN CAP_PERFMON CAP_BPF");
	for (unsigned int c = 0; c < 64; c++)
		assert_int_equal(cp_caps_bound_drop(CP_LIVE_CAPS, c), !(CP_LIVE_CAPS & CP_CAP(c)));
	assert_true(cp_caps_bound_drop(CP_LIVE_CAPS, CAP_DAC_OVERRIDE));
	assert_true(cp_caps_bound_drop(CP_LIVE_CAPS, CAP_SETUID));
	assert_true(cp_caps_bound_drop(CP_LIVE_CAPS, CAP_SYS_RESOURCE));
	assert_false(cp_caps_bound_drop(CP_LIVE_CAPS, 64));
	assert_string_equal(cp_caps_names(CP_CAP(40) | CP_CAP(CAP_KILL), names, sizeof(names)),
			    "CAP_KILL cap_40");
	assert_string_equal(cp_caps_names(0, names, sizeof(names)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_live_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
