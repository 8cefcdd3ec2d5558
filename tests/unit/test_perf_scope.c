// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pure parts of perf_events.c: where memory events go (per CPU or per
 * thread) and the sentences a failed perf_event_open produces.
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

#include "cli/options.h"
#include "live/perf_events.h"

struct scope_case {
	enum cp_target_kind target;
	int threads, events;
	bool per_task_ok;
	long nofile;
	bool per_cpu, filter;
	const char *reason;
};

static const struct scope_case scope_cases[] = {
	{ CP_TARGET_ALL, 0, 2, true, 1024, true, false, "per-CPU events: system-wide (-a)" },
	{ CP_TARGET_ALL, 0, 1, false, 1024, true, false, NULL },
	{ CP_TARGET_CMD, 1, 2, true, 1024, false, false, "per-thread events with inherit: 1 thread" },
	{ CP_TARGET_PIDS, 8, 3, true, 1024, false, false,
	  "per-thread events with inherit: 8 threads" },
	{ CP_TARGET_PIDS, 64, 6, true, 1024, false, false, NULL },	/* 384 fds: fine */
	{ CP_TARGET_PIDS, 65, 2, true, 1024, true, true,
	  "per-CPU events with a PID filter: 65 threads > 64" },
	{ CP_TARGET_PIDS, 60, 12, true, 1024, true, true,
	  "per-CPU events with a PID filter: 60 threads x 12 events > half of ulimit -n 1024" },
	{ CP_TARGET_PIDS, 60, 12, true, 0, false, false, NULL },	/* limit unknown */
	{ CP_TARGET_CMD, 1, 1, false, 1024, true, true,
	  "per-CPU events with a PID filter: the source has no per-thread events on this kernel" },
};

static void test_scope(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scope_cases) / sizeof(scope_cases[0]); i++) {
		const struct scope_case *c = &scope_cases[i];
		struct cp_perf_scope s;

		print_message("# case %zu\n", i);
		cp_perf_scope_decide(c->target == CP_TARGET_ALL, c->threads, c->events, c->per_task_ok, c->nofile,
				     &s);
		assert_int_equal(s.per_cpu, c->per_cpu);
		assert_int_equal(s.filter_tgid, c->filter);
		if (c->reason)
			assert_string_equal(s.reason, c->reason);
	}
}

struct msg_case {
	const char *name;
	int cpu;
	pid_t tid;
	int err;
	bool pmu;
	const char *text;
};

#define SOFT "; the kernel has no PMU for this event here (a VM without a virtual PMU?): use --source soft"

static const struct msg_case msg_cases[] = {
	{ "mem-loads", 0, -1, -ENOENT, true,
	  "cannot open mem-loads on CPU 0: No such file or directory" SOFT },
	{ "mem-stores", 5, -1, -EOPNOTSUPP, true,
	  "cannot open mem-stores on CPU 5: Operation not supported" SOFT },
	{ "mem-loads", -1, 1234, -ENODEV, true,
	  "cannot open mem-loads for thread 1234: No such device" SOFT },
	{ "ibs_op", 3, 99, -ENOENT, true,
	  "cannot open ibs_op for thread 99 on CPU 3: No such file or directory" SOFT },
	{ "page-faults", 3, -1, -ENODEV, false,
	  "cannot open page-faults on CPU 3: No such device; the CPU is offline" },
	{ "page-faults", -1, 0, -ENOENT, false,
	  "cannot open page-faults for this process: No such file or directory" },
	{ "mem-loads", 1, -1, -EACCES, true,
	  "cannot open mem-loads on CPU 1: Permission denied; run as root or grant CAP_PERFMON (see /proc/sys/kernel/perf_event_paranoid)" },
	{ "mem-loads", 1, -1, -EMFILE, true,
	  "cannot open mem-loads on CPU 1: Too many open files; out of file descriptors: raise ulimit -n" },
	{ "mem-loads", 1, -1, -ENODATA, true,
	  "cannot open mem-loads on CPU 1: No data available; this CPU needs mem-loads-aux as group leader" },
	{ "mem-loads", 1, -1, -EINVAL, true, "cannot open mem-loads on CPU 1: Invalid argument" },
};

static void test_open_messages(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(msg_cases) / sizeof(msg_cases[0]); i++) {
		const struct msg_case *c = &msg_cases[i];
		char buf[320];

		cp_perf_open_strerror(buf, sizeof(buf), c->name, c->cpu, c->tid, c->err, c->pmu);
		assert_string_equal(buf, c->text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_open_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
