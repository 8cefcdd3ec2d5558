// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Call sites' stack copies wait for their object event: taken once by
 * (process, call site), the oldest overwritten past the ring's size; and
 * when the frame-pointer walk reached a thread's start, no CFI is needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "symbols/stack_copies.h"
#include "symbols/unwind.h"

static void copy(struct cp_stack_copies *c, __u32 tgid, __u64 caller, __u64 sp)
{
	struct cp_ustack_record r = { .type = CP_REC_USTACK, .tgid = tgid, .caller = caller,
				      .sp = sp, .len = 64 };

	cp_stack_copies_put(c, &r);
}

static void test_take_once(void **state)
{
	struct cp_stack_copies *c = calloc(1, sizeof(*c));
	const struct cp_ustack_record *r;

	(void)state;
	copy(c, 10, 0x1000, 0x7ff0);
	copy(c, 11, 0x1000, 0x7fe0);
	assert_null(cp_stack_copies_take(c, 10, 0x2000));	/* another site */
	r = cp_stack_copies_take(c, 11, 0x1000);		/* another process's */
	assert_non_null(r);
	assert_int_equal(r->sp, 0x7fe0);
	r = cp_stack_copies_take(c, 10, 0x1000);
	assert_non_null(r);
	assert_int_equal(r->sp, 0x7ff0);
	assert_null(cp_stack_copies_take(c, 10, 0x1000));	/* taken: gone */
	free(c);
}

/* A copy whose object event was lost does not stay: the ring overwrites it. */
static void test_ring(void **state)
{
	struct cp_stack_copies *c = calloc(1, sizeof(*c));

	(void)state;
	copy(c, 10, 0x1000, 1);
	for (__u64 i = 0; i < CP_STACK_COPIES; i++)
		copy(c, 20, 0x5000 + i, 2);
	assert_null(cp_stack_copies_take(c, 10, 0x1000));
	assert_non_null(cp_stack_copies_take(c, 20, 0x5000 + CP_STACK_COPIES - 1));
	free(c);
}

static void test_reached_start(void **state)
{
	(void)state;
	assert_true(cp_unwind_reached_start("_start"));
	assert_true(cp_unwind_reached_start("__libc_start_call_main"));
	assert_true(cp_unwind_reached_start("start_thread"));
	assert_true(cp_unwind_reached_start("clone3"));
	/* glibc's .dynsym names it with its version */
	assert_true(cp_unwind_reached_start("__libc_start_main@@GLIBC_2.34"));
	assert_false(cp_unwind_reached_start("_start_c@@GLIBC_2.34"));
	assert_false(cp_unwind_reached_start("@@GLIBC_2.34"));
	/* a walk that stopped in the allocator's wrapper or the program did not */
	assert_false(cp_unwind_reached_start("_Znwm"));
	assert_false(cp_unwind_reached_start("main"));
	assert_false(cp_unwind_reached_start("_start_c"));
	assert_false(cp_unwind_reached_start(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_once),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_reached_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
