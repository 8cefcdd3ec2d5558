// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The targets' CPU time read again and again from a file held open
 * (machine/cpu_time.h, cp_cpu_src_*): the state letter parsed whatever the
 * comm holds; a real child's time grows while it runs, it reads as not
 * alive once a zombie and as gone once reaped; the file is the one opened,
 * so a pid whose /proc entry is another's later (a fake /proc here) is not
 * read as the first; the machine's /proc/stat too.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "machine/cpu_time.h"
#include "util/clock.h"

static void test_state(void **state)
{
	(void)state;
	assert_int_equal(cp_stat_state("42 (a) (b c) S 1 42 42 0"), 'S');
	/* a comm that looks like a state: the last ')' counts */
	assert_int_equal(cp_stat_state("42 (x) R (y) Z 1 42"), 'Z');
	assert_int_equal(cp_stat_state("42 no parenthesis"), 0);
	assert_int_equal(cp_stat_state("42 (x)"), 0);
}

/* A child that burns @ms of CPU, then writes a byte and waits for one. */
static pid_t spinner(int ms, int ready[2], int go[2])
{
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct timespec t0, t;
		char c = 'r';

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	return pid;
}

static void test_child_lifetime(void **state)
{
	int ready[2], go[2];
	struct cp_cpu_src src;
	bool alive = false;
	__u64 ns;
	char c;
	pid_t pid;

	(void)state;
	pid = spinner(120, ready, go);
	cp_cpu_src_open(&src, NULL, pid);
	assert_true(src.fd >= 0);
	assert_int_equal(read(ready[0], &c, 1), 1);
	ns = cp_cpu_src_ns(&src, &alive);
	assert_true(alive);
	/* 120 ms burnt, /proc counts in ticks of 10 ms */
	if (ns < 100000000ull)
		fail_msg("%llu ns of CPU read for a child that burnt 120 ms",
			 (unsigned long long)ns);
	/* the same as opening the file by its pid each time */
	assert_true(cp_proc_cpu_ns(NULL, pid) - ns <= 20000000ull);
	/* exited, not reaped: a zombie is not alive */
	assert_int_equal(write(go[1], "g", 1), 1);
	for (int i = 0; i < 200 && alive; i++) {
		usleep(5000);
		cp_cpu_src_ns(&src, &alive);
	}
	assert_false(alive);
	/* reaped: gone, 0 */
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(cp_cpu_src_ns(&src, &alive), 0);
	assert_false(alive);
	cp_cpu_src_close(&src);
	assert_int_equal(src.fd, -1);
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
}

static char root[] = "/tmp/cp-cpu-src-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[256], tmp[260];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	/* a new file in the name's place, as /proc/PID is another process's */
	assert_int_equal(rename(tmp, path), 0);
}

static void test_bound_to_the_file_opened(void **state)
{
	long hz = sysconf(_SC_CLK_TCK);
	__u64 tick = 1000000000ull / (__u64)(hz > 0 ? hz : 100);
	struct cp_cpu_src src, gone, machine;
	char dir[64];
	bool alive;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/4242", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put("4242/stat", "4242 (target) S 1 4242 4242 0 -1 0 0 0 0 0 100 20 0 0 20 0 1 0\n");
	cp_cpu_src_open(&src, root, 4242);
	assert_int_equal(cp_cpu_src_ns(&src, &alive), 120 * tick);
	assert_true(alive);
	/* the pid is another process's now: the file held is still the target's */
	put("4242/stat", "4242 (other) R 1 4242 4242 0 -1 0 0 0 0 0 9000 9000 0 0 20 0 1 0\n");
	assert_int_equal(cp_cpu_src_ns(&src, &alive), 120 * tick);
	cp_cpu_src_close(&src);
	/* a pid with no entry at the open is gone for good */
	cp_cpu_src_open(&gone, root, 4343);
	assert_true(gone.gone);
	snprintf(dir, sizeof(dir), "%s/4343", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put("4343/stat", "4343 (late) R 1 4343 4343 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0\n");
	assert_int_equal(cp_cpu_src_ns(&gone, &alive), 0);
	assert_false(alive);
	cp_cpu_src_close(&gone);
	/* the machine: busy ticks of the "cpu " line, always alive */
	put("stat", "cpu  10 20 30 400 50 6 7 8 0 0\ncpu0 10 20 30 400 50 6 7 8 0 0\n");
	cp_cpu_src_open(&machine, root, 0);
	assert_int_equal(cp_cpu_src_ns(&machine, &alive), 81 * tick);
	assert_true(alive);
	cp_cpu_src_close(&machine);
}

/*
 * /proc counts in clock ticks: a second reading of the machine within one
 * tick of the last (another source's, on the same root) is that reading,
 * not the file read again; once a tick has passed, the file is read again.
 * A process's likewise while it lives; a zombie's is read each time.
 */
static void test_machine_read_once_a_tick(void **state)
{
	long hz = sysconf(_SC_CLK_TCK);
	__u64 tick = 1000000000ull / (__u64)(hz > 0 ? hz : 100), t0, got;
	struct cp_cpu_src loop, alloc;
	struct timespec pause = { .tv_nsec = (long)(2 * tick) };
	char dir[64];
	bool alive;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/4545", root);
	/* another test's reading of this root is over a tick old */
	nanosleep(&pause, NULL);
	put("stat", "cpu  100 0 0 400 0 0 0 0 0 0\n");
	cp_cpu_src_open(&loop, root, 0);
	t0 = cp_now_ns();
	assert_int_equal(cp_cpu_src_ns(&loop, &alive), 100 * tick);
	/* the machine counted on: a new file, which a new source holds */
	put("stat", "cpu  150 0 0 400 0 0 0 0 0 0\n");
	cp_cpu_src_open(&alloc, root, 0);
	got = cp_cpu_src_ns(&alloc, &alive);
	assert_true(alive);
	/* within the tick the first reading stands (a test descheduled past it sees the file) */
	if (cp_now_ns() - t0 < tick)
		assert_int_equal(got, 100 * tick);
	else
		assert_int_equal(got, 150 * tick);
	nanosleep(&pause, NULL);
	assert_int_equal(cp_cpu_src_ns(&alloc, &alive), 150 * tick);
	cp_cpu_src_close(&alloc);
	cp_cpu_src_close(&loop);
	/* a process: the same, while it lives */
	assert_int_equal(mkdir(dir, 0755), 0);
	put("4545/stat", "4545 (p) R 1 4545 4545 0 -1 0 0 0 0 0 30 0 0 0 20 0 1 0\n");
	cp_cpu_src_open(&loop, root, 4545);
	t0 = cp_now_ns();
	assert_int_equal(cp_cpu_src_ns(&loop, &alive), 30 * tick);
	put("4545/stat", "4545 (p) Z 1 4545 4545 0 -1 0 0 0 0 0 40 0 0 0 20 0 1 0\n");
	cp_cpu_src_open(&alloc, root, 4545);
	got = cp_cpu_src_ns(&alloc, &alive);
	if (cp_now_ns() - t0 < tick) {
		assert_int_equal(got, 30 * tick);
		assert_true(alive);
	}
	/* a zombie's reading is not kept: its end is seen at once */
	nanosleep(&pause, NULL);
	assert_int_equal(cp_cpu_src_ns(&alloc, &alive), 40 * tick);
	assert_false(alive);
	put("4545/stat", "4545 (p) Z 1 4545 4545 0 -1 0 0 0 0 0 41 0 0 0 20 0 1 0\n");
	cp_cpu_src_close(&alloc);
	cp_cpu_src_open(&alloc, root, 4545);
	assert_int_equal(cp_cpu_src_ns(&alloc, &alive), 41 * tick);
	assert_false(alive);
	cp_cpu_src_close(&alloc);
	cp_cpu_src_close(&loop);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_child_lifetime),
		cmocka_unit_test(test_bound_to_the_file_opened),
		cmocka_unit_test(test_machine_read_once_a_tick),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
