// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Targets: -p PID checks and the held `-- CMD` child, with real processes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "cli/target.h"

static void wait_exit(struct cp_child *c)
{
	for (int i = 0; i < 500 && !cp_child_poll(c); i++)
		usleep(10000);
	assert_true(c->exited);
}

static void test_exit_status_passes_through(void **state)
{
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	struct cp_child c;
	char err[256] = "";

	(void)state;
	assert_int_equal(cp_child_spawn(argv, &c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_release(&c, err, sizeof(err)), 0);
	wait_exit(&c);
	assert_int_equal(cp_exit_code(c.status), 7);
}

static void test_killed_child_is_128_plus_signal(void **state)
{
	char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct cp_child c;
	char err[256] = "";

	(void)state;
	assert_int_equal(cp_child_spawn(argv, &c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_release(&c, err, sizeof(err)), 0);
	wait_exit(&c);
	assert_int_equal(cp_exit_code(c.status), 128 + SIGTERM);
}

static void test_missing_command(void **state)
{
	char *argv[] = { "/nonexistent/cacheperf-no-such-cmd", NULL };
	struct cp_child c;
	char err[256] = "";

	(void)state;
	assert_int_equal(cp_child_spawn(argv, &c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_release(&c, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "cannot run the command: No such file or directory");
	wait_exit(&c);
	assert_int_equal(cp_exit_code(c.status), 127);
}

/* A child the profiler gave up on must never run its command unobserved. */
static void test_held_child_never_runs(void **state)
{
	char marker[] = "/tmp/cp-held-XXXXXX";
	char script[256];
	char *argv[] = { "sh", "-c", script, NULL };
	struct cp_child c;
	char err[256] = "";
	struct stat st;
	int fd = mkstemp(marker);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(marker);
	snprintf(script, sizeof(script), "touch %s", marker);
	assert_int_equal(cp_child_spawn(argv, &c, err, sizeof(err)), 0);
	usleep(50000);
	cp_child_stop(&c, 1000);
	assert_true(c.exited);
	assert_int_equal(cp_exit_code(c.status), 126);
	assert_int_equal(stat(marker, &st), -1);
}

/*
 * The wait for the command's stop in its loader: a stop is seen (and the
 * child left stopped until continued), a child that does not stop is a
 * time-out, and one that exits is reaped with its status kept.
 */
static void test_wait_stop(void **state)
{
	char *argv[] = { "sh", "-c", "kill -STOP $$; exit 5", NULL };
	char *quiet[] = { "sleep", "0.3", NULL };
	struct cp_child c;
	char err[256] = "";

	(void)state;
	assert_int_equal(cp_child_spawn(argv, &c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_release(&c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_wait_stop(&c, 5000), 1);
	/* stopped: it does not exit meanwhile */
	assert_int_equal(cp_child_wait_stop(&c, 100), 0);
	assert_false(cp_child_poll(&c));
	assert_int_equal(kill(c.pid, SIGCONT), 0);
	assert_int_equal(cp_child_wait_stop(&c, 5000), -ESRCH);
	assert_true(cp_child_poll(&c));
	assert_int_equal(cp_exit_code(c.status), 5);

	assert_int_equal(cp_child_spawn(quiet, &c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_release(&c, err, sizeof(err)), 0);
	assert_int_equal(cp_child_wait_stop(&c, 50), 0);
	assert_int_equal(cp_child_wait_stop(&c, 5000), -ESRCH);
	assert_int_equal(cp_exit_code(c.status), 0);
}

static void test_check_pids(void **state)
{
	pid_t self = getpid(), gone;
	char err[256] = "";
	int status;

	(void)state;
	assert_int_equal(cp_target_check_pids(&self, 1, err, sizeof(err)), 0);
	gone = fork();
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, &status, 0), gone);
	/* a reaped PID is free again; the kernel will not reuse it this fast */
	pid_t pids[] = { self, gone };
	assert_int_equal(cp_target_check_pids(pids, 2, err, sizeof(err)), -ESRCH);
	char want[64];
	snprintf(want, sizeof(want), "no such process: PID %d", gone);
	assert_string_equal(err, want);
}

static void test_zombie_is_not_alive(void **state)
{
	pid_t z = fork();
	int status;

	(void)state;
	if (z == 0)
		_exit(0);
	usleep(100000);
	/* not yet reaped: a zombie, which -p must treat as exited */
	assert_false(cp_pid_alive(z));
	assert_true(cp_pid_alive(getpid()));
	waitpid(z, &status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status_passes_through),
		cmocka_unit_test(test_killed_child_is_128_plus_signal),
		cmocka_unit_test(test_missing_command),
		cmocka_unit_test(test_held_child_never_runs),
		cmocka_unit_test(test_wait_stop),
		cmocka_unit_test(test_check_pids),
		cmocka_unit_test(test_zombie_is_not_alive),
	};

	return cmocka_run_group_tests_name("target", tests, NULL, NULL);
}
