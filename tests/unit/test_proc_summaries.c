// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process summaries: churn, exec, exit, pid reuse and the cap. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cacheperf/abi.h"
#include "profile/proc_summaries.h"
#include "util/hash.h"

/*
 * The fake system: comm "p<pid>", or "x<pid>" once a process exec'd; cgroup
 * "/slice/<pid>", of the unified hierarchy unless cg_v1 (a hybrid host).
 */
static int describes, comm_reads, cgroup_reads;
static int exec_gen;
static bool cg_v1, cg_root;
static __u64 where_id; /* the id of the cgroup a process is in when described */
static __u64 where_lines; /* its text's lines as looked up, when asked (0: a lookup failed) */
static bool where_v2_line = true; /* its text has the unified hierarchy's line */
static int lines_asked;

static void describe(void *ctx, struct cp_proc_summary *s, unsigned int what)
{
	(void)ctx;
	describes++;
	if (what & CP_DESCRIBE_COMM) {
		comm_reads++;
		snprintf(s->comm, sizeof(s->comm), "%c%d", exec_gen ? 'x' : 'p', (int)s->pid);
	}
	if (what & CP_DESCRIBE_CGROUP) {
		cgroup_reads++;
		if (cg_root)
			snprintf(s->cg.path, sizeof(s->cg.path), "/");
		else
			snprintf(s->cg.path, sizeof(s->cg.path), "/slice/%d", (int)s->pid);
		s->cg.v2 = !cg_v1;
		s->cg.id = where_id;
		s->cg.v2_line = where_v2_line;
	}
	if (what & CP_DESCRIBE_CGROUP_LINES) {
		lines_asked++;
		s->cg.lines = where_lines;
	}
}

static void test_counts_and_top(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(16, describe, NULL);
	const struct cp_proc_summary *top[4];

	(void)state;
	describes = exec_gen = 0;
	assert_non_null(t);
	for (int i = 0; i < 5; i++)
		cp_proc_summaries__sample(t, 100, i < 2);
	for (int i = 0; i < 9; i++)
		cp_proc_summaries__sample(t, 200, false);
	cp_proc_summaries__sample(t, 300, true);
	/* described once each, at first sight */
	assert_int_equal(describes, 3);
	assert_int_equal(cp_proc_summaries__top(t, top, 4), 3);
	assert_int_equal(top[0]->pid, 200);
	assert_int_equal(top[0]->samples, 9);
	assert_string_equal(top[0]->comm, "p200");
	assert_int_equal(top[1]->pid, 100);
	assert_int_equal(top[1]->misses, 2);
	assert_string_equal(top[1]->cg.path, "/slice/100");
	assert_int_equal(cp_proc_summaries__top(t, top, 1), 1);
	assert_int_equal(top[0]->pid, 200);
	assert_int_equal(cp_proc_summaries__sample(t, 0, false), -EINVAL);
	cp_proc_summaries__free(t);
}

/* exec renames in place; exit keeps the summary; the reused pid is a new one. */
static void test_exec_exit_reuse(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(16, describe, NULL);
	const struct cp_proc_summary *top[4];

	(void)state;
	describes = exec_gen = 0;
	cp_proc_summaries__sample(t, 42, false);
	cp_proc_summaries__sample(t, 42, false);
	exec_gen = 1;
	cp_proc_summaries__exec(t, 42, NULL, 0, 0);
	cp_proc_summaries__sample(t, 42, false);
	cp_proc_summaries__exit(t, 42);
	cp_proc_summaries__exit(t, 42);		/* twice: harmless */
	cp_proc_summaries__exec(t, 4242, NULL, 0, 0);		/* never sampled: described now */
	exec_gen = 0;
	cp_proc_summaries__sample(t, 42, true);	/* the pid reused */
	assert_int_equal(cp_proc_summaries__count(t), 3);
	assert_int_equal(cp_proc_summaries__seen(t), 3);
	assert_int_equal(cp_proc_summaries__top(t, top, 4), 3);
	assert_int_equal(top[2]->pid, 4242);
	assert_int_equal(top[2]->samples, 0);
	assert_string_equal(top[2]->comm, "x4242");
	assert_int_equal(top[0]->samples, 3);
	assert_true(top[0]->exited);
	assert_int_equal(top[0]->execs, 1);
	assert_string_equal(top[0]->comm, "x42");
	assert_int_equal(top[1]->samples, 1);
	assert_false(top[1]->exited);
	assert_string_equal(top[1]->comm, "p42");
	/* the live one is found by its pid, the exited one is not touched */
	cp_proc_summaries__sample(t, 42, false);
	assert_int_equal(cp_proc_summaries__top(t, top, 4), 3);
	assert_int_equal(top[0]->samples, 3);
	assert_int_equal(top[1]->samples, 2);
	cp_proc_summaries__free(t);
}

/*
 * Churn far past the cap: the count never exceeds it, every eviction is
 * counted, exited processes go before live ones, and a live process
 * sampled all along survives.
 */
static void test_churn_at_cap(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(8, NULL, NULL);
	const struct cp_proc_summary *top[8];
	size_t n;

	(void)state;
	for (int pid = 1000; pid < 11000; pid++) {
		cp_proc_summaries__sample(t, 7, false);	/* the long-lived one */
		cp_proc_summaries__sample(t, pid, false);
		if (pid % 2)
			cp_proc_summaries__exit(t, pid);
		assert_true(cp_proc_summaries__count(t) <= 8);
	}
	assert_int_equal(cp_proc_summaries__seen(t), 10001);
	assert_int_equal(cp_proc_summaries__evicted(t), 10001 - 8);
	n = cp_proc_summaries__top(t, top, 8);
	assert_int_equal(n, 8);
	assert_int_equal(top[0]->pid, 7);
	assert_int_equal(top[0]->samples, 10000);
	/* the live ones that remain are the latest even pids */
	for (size_t i = 1; i < n; i++)
		assert_true(top[i]->pid >= 10980);
	cp_proc_summaries__free(t);
}

/* Pids colliding in the index: deletions keep the others reachable. */
static void test_index_collisions(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(64, NULL, NULL);
	const struct cp_proc_summary *top[64];

	(void)state;
	for (int pid = 1; pid <= 64; pid++)
		cp_proc_summaries__sample(t, pid * 128, false);
	for (int pid = 1; pid <= 64; pid += 3)
		cp_proc_summaries__exit(t, pid * 128);
	for (int pid = 1; pid <= 64; pid++)
		cp_proc_summaries__sample(t, pid * 128, false);
	/* 22 exited: their pids start new summaries, the 42 others count twice */
	assert_int_equal(cp_proc_summaries__seen(t), 64 + 22);
	assert_int_equal(cp_proc_summaries__count(t), 64);
	assert_int_equal(cp_proc_summaries__top(t, top, 64), 64);
	assert_int_equal(top[41]->samples, 2);
	assert_int_equal(top[42]->samples, 1);
	cp_proc_summaries__free(t);
}

/*
 * At the cap, exited processes' summaries go up to a sixteenth of the cap at
 * once (two of 32 here), the least recently sampled first, so that a new
 * process does not look through the whole table each time; a live one goes
 * alone, and only when none exited.
 */
static void test_eviction_batches(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(32, NULL, NULL);

	(void)state;
	for (int pid = 1; pid <= 32; pid++)
		cp_proc_summaries__sample(t, pid, false);
	for (int pid = 1; pid <= 3; pid++)
		cp_proc_summaries__exit(t, pid);
	cp_proc_summaries__sample(t, 100, false);
	/* 1 and 2, sampled least lately, went together; 3 stays, and every live one */
	assert_int_equal(cp_proc_summaries__evicted(t), 2);
	assert_null(cp_proc_summaries__find(t, 1));
	assert_null(cp_proc_summaries__find(t, 2));
	assert_non_null(cp_proc_summaries__find(t, 3));
	for (int pid = 4; pid <= 32; pid++)
		assert_non_null(cp_proc_summaries__find(t, pid));
	cp_proc_summaries__sample(t, 101, false);	/* the room left */
	assert_int_equal(cp_proc_summaries__evicted(t), 2);
	cp_proc_summaries__sample(t, 102, false);	/* 3, the last exited, alone */
	assert_int_equal(cp_proc_summaries__evicted(t), 3);
	assert_null(cp_proc_summaries__find(t, 3));
	cp_proc_summaries__sample(t, 103, false);	/* none exited: pid 4, sampled least lately */
	assert_int_equal(cp_proc_summaries__evicted(t), 4);
	assert_null(cp_proc_summaries__find(t, 4));
	assert_non_null(cp_proc_summaries__find(t, 5));
	assert_int_equal(cp_proc_summaries__count(t), 32);
	cp_proc_summaries__free(t);
}

/* find: the live process of a pid, else the exited one sampled last */
static void test_find(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(16, describe, NULL);
	const struct cp_proc_summary *s;

	(void)state;
	describes = exec_gen = 0;
	assert_null(cp_proc_summaries__find(t, 7));
	cp_proc_summaries__sample(t, 7, false);
	cp_proc_summaries__exit(t, 7);
	exec_gen = 1;
	cp_proc_summaries__sample(t, 7, false);		/* reused: "x7" */
	cp_proc_summaries__exit(t, 7);
	s = cp_proc_summaries__find(t, 7);
	assert_non_null(s);
	assert_true(s->exited);
	assert_string_equal(s->comm, "x7");		/* the later of the two */
	exec_gen = 0;
	cp_proc_summaries__sample(t, 7, false);		/* reused again, alive: "p7" */
	s = cp_proc_summaries__find(t, 7);
	assert_false(s->exited);
	assert_string_equal(s->comm, "p7");
	assert_null(cp_proc_summaries__find(NULL, 7));
	cp_proc_summaries__free(t);
}

/* @id's slot among the kept cgroups: proc_summaries.c's Fibonacci slot. */
static size_t cgroup_slot(__u64 id)
{
	return cp_hash_slot(cp_hash64(id), 58, CP_PROC_CGROUPS_KEPT - 1);
}

/* @pid exec'd in the cgroup of @rec_id, and is in that of @now_id when described. */
static void exec_at(struct cp_proc_summaries *t, pid_t pid, const char *comm, __u64 rec_id,
		    __u64 now_id)
{
	where_id = now_id;
	cp_proc_summaries__exec(t, pid, comm, rec_id, 0);
}

/* Execs of @pid and @pid + 1 in cgroup @id: the second's is read again (@path), none was kept. */
static void read_twice(struct cp_proc_summaries *t, pid_t pid, __u64 id, const char *path)
{
	int reads = cgroup_reads;

	exec_at(t, pid, "sh", id, id);
	exec_at(t, pid + 1, "sh", id, id);
	assert_string_equal(cp_proc_summaries__find(t, pid + 1)->cg.path, path);
	assert_int_equal(cgroup_reads, reads + 2);
}

/*
 * An exec record's comm is the process's name: nothing is read for it. Its
 * cgroup id names a cgroup described at an earlier exec: the processes of
 * one cgroup (a build's compilers) read /proc/PID/cgroup once, and the
 * description is the first one's. What the record lacks is read.
 */
static void test_exec_record_identity(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(64, describe, NULL);
	const struct cp_proc_summary *s;
	__u64 other = 78;

	(void)state;
	describes = comm_reads = cgroup_reads = exec_gen = 0;
	cg_v1 = false;
	exec_at(t, 10, "cc1", 77, 77);
	s = cp_proc_summaries__find(t, 10);
	assert_string_equal(s->comm, "cc1");
	assert_string_equal(s->cg.path, "/slice/10");
	assert_int_equal(comm_reads, 0);
	assert_int_equal(cgroup_reads, 1);
	/* the same cgroup: the first process's description, nothing read */
	exec_at(t, 11, "as", 77, 77);
	s = cp_proc_summaries__find(t, 11);
	assert_string_equal(s->comm, "as");
	assert_string_equal(s->cg.path, "/slice/10");
	assert_true(s->cg.v2);
	assert_int_equal(describes, 1);
	/* no comm in the record: read; the cgroup still known */
	exec_at(t, 12, "", 77, 77);
	assert_string_equal(cp_proc_summaries__find(t, 12)->comm, "p12");
	assert_string_equal(cp_proc_summaries__find(t, 12)->cg.path, "/slice/10");
	assert_int_equal(comm_reads, 1);
	assert_int_equal(cgroup_reads, 1);
	/* a record without them (an older recording): both read */
	exec_at(t, 13, NULL, 0, 0);
	assert_string_equal(cp_proc_summaries__find(t, 13)->comm, "p13");
	assert_string_equal(cp_proc_summaries__find(t, 13)->cg.path, "/slice/13");
	assert_int_equal(cgroup_reads, 2);
	/* a second exec of a summarized process: the new name, the counts go on */
	cp_proc_summaries__sample(t, 10, true);
	exec_at(t, 10, "ld", 77, 77);
	s = cp_proc_summaries__find(t, 10);
	assert_string_equal(s->comm, "ld");
	assert_int_equal(s->execs, 1);
	assert_int_equal(s->samples, 1);
	assert_int_equal(cgroup_reads, 2);
	/* another id in the same slot takes it: 77 is read again */
	while (cgroup_slot(other) != cgroup_slot(77))
		other++;
	exec_at(t, 14, "sh", other, other);
	assert_string_equal(cp_proc_summaries__find(t, 14)->cg.path, "/slice/14");
	exec_at(t, 15, "sh", 77, 77);
	assert_string_equal(cp_proc_summaries__find(t, 15)->cg.path, "/slice/15");
	assert_int_equal(cgroup_reads, 4);
	/* a hybrid host's v1 path is not the v2 id's: never kept */
	cg_v1 = true;
	read_twice(t, 16, 99, "/slice/17");
	assert_int_equal(comm_reads, 2);
	/* moved since its exec (runc init into its container): where it is now, not kept */
	cg_v1 = false;
	exec_at(t, 18, "runc", 55, 56);
	assert_string_equal(cp_proc_summaries__find(t, 18)->cg.path, "/slice/18");
	exec_at(t, 19, "sh", 55, 55);
	exec_at(t, 20, "sh", 55, 55);
	assert_string_equal(cp_proc_summaries__find(t, 20)->cg.path, "/slice/19");
	assert_int_equal(cgroup_reads, 8);
	/* the root is never kept */
	cg_root = true;
	read_twice(t, 21, 1, "/");
	cg_root = false;
	cp_proc_summaries__free(t);
}

/* @pid exec'd with v1 cgroups @v1 (a record's cgroup_v1) in v2 cgroup @id; its text's lines are @lines. */
static void exec_v1(struct cp_proc_summaries *t, pid_t pid, __u64 id, __u64 v1, __u64 lines)
{
	where_id = id;
	where_lines = lines;
	cp_proc_summaries__exec(t, pid, "sh", id, v1);
}

/*
 * A hybrid host, whose processes sit at the v2 root and are described by
 * their v1 paths: a description is kept by the record's v2 id and v1
 * cgroups when the lines of the text read are those cgroups (the unified
 * line's as hierarchy 0), so the processes of one v1 cgroup read it once.
 * A process moved since its exec, a lookup that failed, a record without
 * v1 cgroups: read each time.
 */
static void test_exec_record_v1(void **state)
{
	struct cp_proc_summaries *t = cp_proc_summaries__new(64, describe, NULL);
	__u64 root = 1, a = 0xa11ce, b = 0xb0b;

	(void)state;
	describes = comm_reads = cgroup_reads = lines_asked = exec_gen = 0;
	cg_v1 = true;
	where_v2_line = true;
	exec_v1(t, 30, root, a, a ^ cp_cgroup_v1_of(0, root, cp_cgroup_v1_salt()));
	exec_v1(t, 31, root, a, 0);
	assert_string_equal(cp_proc_summaries__find(t, 31)->cg.path, "/slice/30");
	assert_int_equal(cgroup_reads, 1);
	assert_int_equal(lines_asked, 1);
	/* other v1 cgroups in the same v2 one: their own description, both kept */
	exec_v1(t, 32, root, b, b ^ cp_cgroup_v1_of(0, root, cp_cgroup_v1_salt()));
	exec_v1(t, 33, root, b, 0);
	exec_v1(t, 34, root, a, 0);
	assert_string_equal(cp_proc_summaries__find(t, 33)->cg.path, "/slice/32");
	assert_string_equal(cp_proc_summaries__find(t, 34)->cg.path, "/slice/30");
	assert_int_equal(cgroup_reads, 2);
	/* moved since its exec: its lines are another cgroup's, not kept */
	exec_v1(t, 35, root, 0xc, b);
	exec_v1(t, 36, root, 0xc, b);
	assert_string_equal(cp_proc_summaries__find(t, 36)->cg.path, "/slice/36");
	/* a lookup that failed (0), or lines of the v1 cgroups alone while the text has a v2 line */
	exec_v1(t, 37, root, 0xd, 0);
	exec_v1(t, 38, root, 0xd, 0xd);
	exec_v1(t, 39, root, 0xd, 0xd);
	assert_string_equal(cp_proc_summaries__find(t, 39)->cg.path, "/slice/39");
	assert_int_equal(cgroup_reads, 7);
	/* no unified line in the text (a v1-only host): the v1 cgroups alone */
	where_v2_line = false;
	exec_v1(t, 40, root, 0xe, 0xe);
	exec_v1(t, 41, root, 0xe, 0);
	assert_string_equal(cp_proc_summaries__find(t, 41)->cg.path, "/slice/40");
	assert_int_equal(cgroup_reads, 8);
	/* a record without them (an older recording): read, and no lookup asked */
	lines_asked = 0;
	exec_v1(t, 42, root, 0, 0);
	exec_v1(t, 43, root, 0, 0);
	assert_int_equal(cgroup_reads, 10);
	assert_int_equal(lines_asked, 0);
	where_v2_line = true;
	cg_v1 = false;
	cp_proc_summaries__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_and_top),
		cmocka_unit_test(test_exec_exit_reuse),
		cmocka_unit_test(test_churn_at_cap),
		cmocka_unit_test(test_index_collisions),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_eviction_batches),
		cmocka_unit_test(test_exec_record_identity),
		cmocka_unit_test(test_exec_record_v1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
