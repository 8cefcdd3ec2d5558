// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The call sites waiting to be unwound (live/site_jobs.h): oldest first;
 * a full ring takes no more (the caller runs the oldest to make room); a
 * site queued is known as queued, so its next object events queue nothing;
 * a process's jobs come out before its process event, the others keep
 * their order; the figures the report's drain line states.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "live/site_jobs.h"

static void put(struct cp_site_jobs *q, __u32 tgid, __u64 caller)
{
	struct cp_site_job *j = cp_site_jobs_add(q);

	assert_non_null(j);
	j->r = (struct cp_alloc_stack_record){.tgid = tgid, .caller = caller, .stack_id = 7};
}

static void test_fifo_and_full(void **state)
{
	struct cp_site_jobs q;
	struct cp_site_job *j;

	(void)state;
	assert_int_equal(cp_site_jobs_init(&q), 0);
	assert_null(cp_site_jobs_take(&q));
	for (__u64 i = 0; i < CP_SITE_JOBS; i++)
		put(&q, 1, 0x1000 + i);
	assert_null(cp_site_jobs_add(&q));
	assert_true(cp_site_jobs_has(&q, 1, 0x1000 + CP_SITE_JOBS - 1, 7));
	assert_false(cp_site_jobs_has(&q, 1, 0x1000, 8));
	assert_false(cp_site_jobs_has(&q, 2, 0x1000, 7));
	/* the oldest first; its slot is the next one added */
	j = cp_site_jobs_take(&q);
	assert_int_equal(j->r.caller, 0x1000);
	assert_false(cp_site_jobs_has(&q, 1, 0x1000, 7));
	put(&q, 1, 0x9000);
	for (__u64 i = 1; i < CP_SITE_JOBS; i++)
		assert_int_equal(cp_site_jobs_take(&q)->r.caller, 0x1000 + i);
	assert_int_equal(cp_site_jobs_take(&q)->r.caller, 0x9000);
	assert_null(cp_site_jobs_take(&q));
	assert_int_equal(q.queued, CP_SITE_JOBS + 1);
	assert_int_equal(q.most, CP_SITE_JOBS);
	cp_site_jobs_free(&q);
}

struct ran {
	__u64 callers[8];
	size_t nr;
};

static void note_run(void *ctx, struct cp_site_job *j)
{
	struct ran *r = ctx;

	assert_true(r->nr < 8);
	r->callers[r->nr++] = j->r.caller;
}

static void test_run_pid_keeps_the_rest_in_order(void **state)
{
	static const struct {
		__u32 tgid;
		__u64 caller;
	} in[] = {{1, 0x10}, {2, 0x20}, {1, 0x11}, {3, 0x30}, {2, 0x21}, {1, 0x12}};
	struct cp_site_jobs q;
	struct ran ran = {0};

	(void)state;
	assert_int_equal(cp_site_jobs_init(&q), 0);
	/* the ring wrapped: its head near the end, the jobs across it */
	for (int i = 0; i < CP_SITE_JOBS - 2; i++)
		put(&q, 9, 0x9000 + (__u64)i);
	while (cp_site_jobs_take(&q))
		;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		put(&q, in[i].tgid, in[i].caller);
	/* process 1's, oldest first */
	cp_site_jobs_run_pid(&q, 1, note_run, &ran);
	assert_int_equal(ran.nr, 3);
	assert_int_equal(ran.callers[0], 0x10);
	assert_int_equal(ran.callers[1], 0x11);
	assert_int_equal(ran.callers[2], 0x12);
	cp_site_jobs_run_pid(&q, 1, note_run, &ran);
	assert_int_equal(ran.nr, 3);
	assert_false(cp_site_jobs_has(&q, 1, 0x10, 7));
	assert_true(cp_site_jobs_has(&q, 2, 0x21, 7));
	/* the others as they came, and room for more */
	assert_int_equal(cp_site_jobs_take(&q)->r.caller, 0x20);
	assert_int_equal(cp_site_jobs_take(&q)->r.caller, 0x30);
	put(&q, 4, 0x40);
	assert_int_equal(cp_site_jobs_take(&q)->r.caller, 0x21);
	assert_int_equal(cp_site_jobs_take(&q)->r.caller, 0x40);
	assert_null(cp_site_jobs_take(&q));
	cp_site_jobs_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_and_full),
		cmocka_unit_test(test_run_pid_keeps_the_rest_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
