// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The parse worker (symbols/parse_worker.h) and its sandbox
 * (util/sandbox.h): how a worker's end is judged (a table), which files
 * need no worker (cp_tf_root_wrote(), a table), what a sandboxed child can
 * no longer do (open a file, make a socket, allocate past its room, run
 * past its alarm, stay root, make a socket, run as a user a tenant holds or
 * be signalled by one), and workers run on real ELF files: an honest
 * library passes and its verdict is kept, a file whose parse needs more
 * than the room left under --max-memory does not; which verdicts stand how
 * long (a table).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include <cmocka.h>

#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "symbols/parse_worker.h"
#include "util/self_usage.h"
#include "util/sandbox.h"
#include "util/sandbox_id.h"
#include "lib/tenant_signal.h"

#define MIB (1ull << 20)

static int exited(int code)
{
	return (code & 0xff) << 8;
}

static int killed(int sig)
{
	return sig & 0x7f;
}

static const struct judge_case {
	const char *what;
	int status;
	size_t said;
	__u64 grown, room;
	enum cp_pw_verdict want;
} judge_cases[] = {
	{"a whole parse", 0, 16, 4 * MIB, 64 * MIB, CP_PW_PASSED},
	{"half the room is still in it", 0, 16, 32 * MIB, 64 * MIB, CP_PW_PASSED},
	{"more than half the room", 0, 16, 33 * MIB, 64 * MIB, CP_PW_MEMORY},
	{"a report cut short", 0, 8, 1 * MIB, 64 * MIB, CP_PW_CRASHED},
	{"libdw's out-of-memory exit, little grown", 1 << 8, 16, 1 * MIB, 64 * MIB, CP_PW_CRASHED},
	{"an exit after growing past half", 1 << 8, 8, 40 * MIB, 64 * MIB, CP_PW_MEMORY},
	{"SIGSEGV", SIGSEGV, 8, 1 * MIB, 64 * MIB, CP_PW_CRASHED},
	{"SIGABRT past half the room", SIGABRT, 8, 50 * MIB, 64 * MIB, CP_PW_MEMORY},
	{"SIGSYS: a call no parser makes", SIGSYS, 8, 0, 64 * MIB, CP_PW_CRASHED},
	{"the wall-time alarm", SIGALRM, 8, 0, 64 * MIB, CP_PW_TIME},
	{"the alarm after a storm", SIGALRM, 8, 60 * MIB, 64 * MIB, CP_PW_MEMORY},
	{"its own stop at half the room", 98 << 8, 16, 20 * MIB, 64 * MIB, CP_PW_MEMORY},
	{"the CPU limit", SIGXCPU, 8, 0, 64 * MIB, CP_PW_TIME},
	{"the hard CPU limit", SIGKILL, 8, 0, 64 * MIB, CP_PW_TIME},
	{"never bounded", 97 << 8, 0, 0, 64 * MIB, CP_PW_FAILED},
	{"no room at all", 0, 16, 4096, 0, CP_PW_MEMORY},
};

static void test_judge(void **state)
{
	(void)state;
	assert_int_equal(exited(1), 1 << 8);
	assert_int_equal(killed(SIGSEGV), SIGSEGV);
	for (size_t i = 0; i < sizeof(judge_cases) / sizeof(judge_cases[0]); i++) {
		const struct judge_case *c = &judge_cases[i];
		enum cp_pw_verdict got = cp_pw_judge(c->status, c->said, c->grown, c->room);

		if (got != c->want)
			fail_msg("%s: %s, want %s", c->what, cp_pw_verdict_name(got),
				 cp_pw_verdict_name(c->want));
	}
}

/*
 * One rule for a worker and the describe server, each forked with a room
 * left under --max-memory: growth is judged against what it may grow by
 * there (three quarters of the room), past half of that it is memory, a
 * refusal that lifts once there is room, whatever ended it; judged
 * against the whole room, a server that grew 28 of its 64 MiB and then
 * aborted was a crash, its file refused for the run.
 */
static void test_judge_in_room(void **state)
{
	(void)state;
	assert_int_equal(cp_pw_judge_in(0, 16, 24 * MIB, 64 * MIB), CP_PW_PASSED);
	assert_int_equal(cp_pw_judge_in(0, 16, 25 * MIB, 64 * MIB), CP_PW_MEMORY);
	assert_int_equal(cp_pw_judge_in(SIGABRT, 8, 28 * MIB, 64 * MIB), CP_PW_MEMORY);
	assert_int_equal(cp_pw_judge_in(SIGABRT, 8, 20 * MIB, 64 * MIB), CP_PW_CRASHED);
	assert_int_equal(cp_pw_judge_in(0, 16, 1, 0), CP_PW_MEMORY);
}

/*
 * A crash is the file's doing and stands for the run. Memory and time can
 * be the machine's: near --max-memory under -a, libc's own debug
 * information may not fit in the room left, and a starved worker runs out
 * of wall time on a small file. Those are tried again when the room has
 * doubled (from at least CP_PW_MIN_ROOM), or a minute later for a worker
 * that did not get its CPU time, twice as long after each such try; a file
 * that kept its worker busy, or a memory bomb while the room stays, is not
 * parsed again (each try may cost seconds of CPU).
 */
static void test_verdict_stands(void **state)
{
	const __u64 s = 1000000000ull;
	const struct cp_pw_outcome pass = {CP_PW_PASSED, 8 * MIB, 1 * s, 0};
	const struct cp_pw_outcome crash = {CP_PW_CRASHED, 8 * MIB, 0, 0};
	const struct cp_pw_outcome mem = {CP_PW_MEMORY, 24 * MIB, 1 * s, 0};
	const struct cp_pw_outcome mem_none = {CP_PW_MEMORY, 0, 0, 0};
	const struct cp_pw_outcome mem_max = {CP_PW_MEMORY, CP_PW_MAX_BYTES, 1 * s, 0};
	const struct cp_pw_outcome starved = {CP_PW_TIME, 64 * MIB, 1 * s, 0};
	const struct cp_pw_outcome busy = {CP_PW_TIME, 64 * MIB, CP_PW_SECONDS * s / 2, 0};
	const struct cp_pw_outcome none = {CP_PW_FAILED, 64 * MIB, 0, 0};

	(void)state;
	assert_true(cp_pw_verdict_stands(&pass, 1, 3600 * s, 0));
	assert_true(cp_pw_verdict_stands(&crash, 1, 3600 * s, UINT64_MAX));
	assert_true(cp_pw_verdict_stands(&mem, 1, 3600 * s, 24 * MIB));
	assert_true(cp_pw_verdict_stands(&mem, 1, 3600 * s, 48 * MIB - 1));
	assert_false(cp_pw_verdict_stands(&mem, 1, 0, 48 * MIB));
	assert_false(cp_pw_verdict_stands(&mem, 1, 0, UINT64_MAX)); /* no --max-memory */
	/* refused with no room at all: not tried again as soon as a little is free */
	assert_true(cp_pw_verdict_stands(&mem_none, 1, 3600 * s, 4096));
	assert_true(cp_pw_verdict_stands(&mem_none, 1, 3600 * s, 2 * CP_PW_MIN_ROOM - 1));
	assert_false(cp_pw_verdict_stands(&mem_none, 1, 0, 2 * CP_PW_MIN_ROOM));
	/* a bomb refused with all the room a worker gets: never again */
	assert_true(cp_pw_verdict_stands(&mem_max, 1, 3600 * s, UINT64_MAX));
	/* starved: a minute, then two, four... */
	assert_true(cp_pw_verdict_stands(&starved, 1, 59 * s, 64 * MIB));
	assert_false(cp_pw_verdict_stands(&starved, 1, 60 * s, 64 * MIB));
	assert_true(cp_pw_verdict_stands(&starved, 2, 119 * s, 64 * MIB));
	assert_false(cp_pw_verdict_stands(&starved, 2, 120 * s, 64 * MIB));
	assert_true(cp_pw_verdict_stands(&starved, 4, 479 * s, 64 * MIB));
	assert_true(cp_pw_verdict_stands(&starved, 1000, 100000 * s, 64 * MIB));
	assert_true(cp_pw_verdict_stands(&busy, 1, 3600 * s, 64 * MIB));
	assert_false(cp_pw_verdict_stands(&none, 1, 0, 64 * MIB));
}

/*
 * Verdicts kept per file: a file judged again keeps its slot and counts
 * one more try; past CP_PW_VERDICTS files, the slot taken first is let go.
 */
static void test_verdicts_kept(void **state)
{
	static struct cp_pw_verdicts t;
	const struct cp_pw_outcome crash = {CP_PW_CRASHED, 8 * MIB, 0, 0};
	const struct cp_pw_outcome pass = {CP_PW_PASSED, 8 * MIB, 0, 0};
	struct cp_copy_key one = {.dev = 1, .ino = 1, .size = 4096}, two = one, key;
	const struct cp_pw_kept *k;

	(void)state;
	two.ino = 2;
	assert_null(cp_pw_verdicts_find(&t, &one));
	cp_pw_verdicts_keep(&t, &one, &pass, 10);
	cp_pw_verdicts_keep(&t, &two, &pass, 20);
	cp_pw_verdicts_keep(&t, &one, &crash, 30);
	k = cp_pw_verdicts_find(&t, &one);
	assert_non_null(k);
	assert_int_equal(k->o.v, CP_PW_CRASHED);
	assert_int_equal(k->tries, 2);
	assert_int_equal(k->made_ns, 30);
	assert_int_equal(cp_pw_verdicts_find(&t, &two)->tries, 1);
	key = one, key.dev = 2; /* another device */
	assert_null(cp_pw_verdicts_find(&t, &key));
	key = one, key.ctime_ns = 1; /* the same file written since */
	assert_null(cp_pw_verdicts_find(&t, &key));
	for (__u64 ino = 3; ino <= CP_PW_VERDICTS; ino++) {
		key = one, key.ino = ino;
		cp_pw_verdicts_keep(&t, &key, &pass, 40);
	}
	assert_non_null(cp_pw_verdicts_find(&t, &one));
	key = one, key.ino = CP_PW_VERDICTS + 1;
	cp_pw_verdicts_keep(&t, &key, &pass, 50);
	assert_null(cp_pw_verdicts_find(&t, &one));
	assert_non_null(cp_pw_verdicts_find(&t, &two));
}

static void test_root_wrote(void **state)
{
	const struct cp_tf_stat root = {.mode = S_IFREG | 0755, .uid = 0};
	const struct cp_tf_stat group_w = {.mode = S_IFREG | 0775, .uid = 0};
	const struct cp_tf_stat other_w = {.mode = S_IFREG | 0757, .uid = 0};
	const struct cp_tf_stat tenant = {.mode = S_IFREG | 0755, .uid = 65534};
	const struct cp_tf_want want = {0}, fetched = {.foreign = true};

	(void)state;
	assert_true(cp_tf_root_wrote(&root, &want, true));
	assert_false(cp_tf_root_wrote(&root, &want, false)); /* a container's root */
	assert_false(cp_tf_root_wrote(&group_w, &want, true));
	assert_false(cp_tf_root_wrote(&other_w, &want, true));
	assert_false(cp_tf_root_wrote(&tenant, &want, true));
	assert_false(cp_tf_root_wrote(&root, &fetched, true)); /* a debuginfod download */
}

/* Runs @body in a sandboxed child (@wall_s of alarm); its wait status. */
static int sandboxed(int (*body)(void), unsigned int wall_s)
{
	const struct cp_sandbox sb = {
		.data_more_bytes = 16 * MIB,
		.stack_bytes = 8 * MIB,
		.cpu_s = 10,
		.wall_s = wall_s,
		.keep_fds = 3,
	};
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (cp_sandbox_enter(&sb))
			_exit(90);
		_exit(body());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* What a bounded child may no longer do; its exit code names the first it still could. */
static int cannot(void)
{
	void *big;

	if (open("/etc/hostname", O_RDONLY) >= 0 || errno != EACCES)
		return 1;
	if (geteuid() == 0 || getuid() == 0)
		return 2;
	big = malloc(64 * MIB); /* past its 16 MiB of room */
	if (big)
		return 3;
	big = malloc(1 * MIB); /* within it */
	if (!big)
		return 4;
	memset(big, 1, 1 * MIB);
	free(big);
	return 0;
}

static int make_socket(void)
{
	if (socket(AF_INET, SOCK_STREAM, 0) >= 0)
		return 5;
	return errno == ENOSYS ? 0 : 6;
}

static int spin(void)
{
	for (volatile unsigned long i = 0;; i++)
		;
	return 0;
}

static void test_sandbox(void **state)
{
	int status;

	(void)state;
	if (geteuid())
		skip();
	status = sandboxed(cannot, 10);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("a sandboxed child still could (%#x): 1 open, 2 be root, 3 allocate past "
			 "its room, 4 not allocate within it, 90 not be bounded",
			 status);
	if (cp_sandbox_filtered()) {
		status = sandboxed(make_socket, 10);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail_msg("a sandboxed child's socket(): %#x, want ENOSYS", status);
	}
	status = sandboxed(spin, 1);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGALRM);
}

/* Which of the sandbox's candidate ids a text of ids takes (a table). */
static void test_sandbox_ids_taken(void **state)
{
	static const struct {
		enum cp_id_text kind;
		const char *text;
		__u64 taken;
	} cases[] = {
		/* shadow's default subordinate ranges end below the first candidate */
		{ CP_ID_SUBIDS, "alice:100000:65536\nbob:600034464:65536\n", 0 },
		{ CP_ID_SUBIDS, "big:1879048192:23130\n", 0 }, /* up to the first, not it */
		{ CP_ID_SUBIDS, "big:1879048192:23131\n", 1 },
		{ CP_ID_SUBIDS, "big:1879048192:131072\n", 3 }, /* two blocks, two candidates */
		{ CP_ID_SUBIDS, "big:1879048192:4294967295\n", ~0ull },
		{ CP_ID_SUBIDS, "no numbers\n1879071322\n", 0 },
		/* a namespace's map: the host's ids are the second column */
		{ CP_ID_MAP, "         0 1879071322          1\n", 1 },
		{ CP_ID_MAP, "1879071322          0          1\n", 0 },
		{ CP_ID_MAP, "0 1879071323 65536\n0 1879136858 2\n", 2 },
		/* a process: each of the four ids of its users and groups */
		{ CP_ID_STATUS, "Name:\tx\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", 0 },
		{ CP_ID_STATUS, "Uid:\t1000\t1000\t1879071322\t1000\n", 1 },
		{ CP_ID_STATUS, "Gid:\t1000\t1000\t1000\t1879202394\n", 4 },
		{ CP_ID_STATUS, "Groups:\t1879071322\nUid:\t65534\t65534\t65534\t65534\n", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 taken = 0;

		cp_sandbox_ids_mark_text(cases[i].kind, cases[i].text, &taken);
		if (taken != cases[i].taken)
			fail_msg("case %zu: %#llx taken, want %#llx", i, (unsigned long long)taken,
				 (unsigned long long)cases[i].taken);
	}
}

/* Sleeps until its alarm ends it (futex: nanosleep is not among the calls a sandbox allows). */
static int wait_for_alarm(void)
{
	static int word;
	struct timespec ts = {.tv_sec = 1};

	for (;;)
		syscall(SYS_futex, &word, FUTEX_WAIT, 0, &ts, NULL, 0);
	return 0;
}

/*
 * Where the profiler may still change users (a report's replay, this test),
 * a worker runs as a user and group no one holds: a tenant running as
 * nobody can neither stop it nor kill it.
 */
static void test_sandbox_user_is_no_tenants(void **state)
{
	const struct cp_sandbox sb = {
		.data_more_bytes = 16 * MIB,
		.stack_bytes = 8 * MIB,
		.cpu_s = 10,
		.wall_s = 5,
		.keep_fds = 3,
	};
	char path[64], line[256];
	bool bounded = false;
	int status;
	pid_t pid;

	(void)state;
	if (geteuid())
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (cp_sandbox_enter(&sb))
			_exit(90);
		_exit(wait_for_alarm());
	}
	/* bounded once its filter is on, the last step of cp_sandbox_enter() */
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	for (int i = 0; i < 100 && !bounded; i++) {
		FILE *f = fopen(path, "re");

		while (f && !bounded && fgets(line, sizeof(line), f))
			bounded = !strncmp(line, "Seccomp:\t2", 10);
		if (f)
			fclose(f);
		if (!bounded)
			usleep(20000);
	}
	assert_true(bounded || !cp_sandbox_filtered());
	assert_ids_no_ones(pid);
	assert_nobody_cannot_signal(pid);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}

static const char *build_path(const char *rel)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", build, rel);
	return path;
}

/* A memfd holding @path's bytes, as cp_tf_copy() would hand out. */
static int copy_of(const char *path)
{
	int fd = open(path, O_RDONLY), mfd = memfd_create("test-copy", MFD_CLOEXEC);
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		fail_msg("no %s: build with `make tests`", path);
	assert_true(mfd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		assert_int_equal(write(mfd, buf, (size_t)n), n);
	close(fd);
	return mfd;
}

static void test_honest_library_passes_once(void **state)
{
	int mfd = copy_of(build_path("tests/workloads/libcp_symlib.so")), dup_fd;
	__u64 w0, r0, w1, r1, w2, r2, h0, h1, q;

	(void)state;
	if (geteuid())
		skip();
	cp_parse_worker_stats(&w0, &r0, &q);
	h0 = cp_self_helpers_cpu_ns();
	assert_int_equal(cp_parse_worker_vet(mfd, NULL, "test"), CP_PW_PASSED);
	cp_parse_worker_stats(&w1, &r1, &q);
	assert_int_equal(w1, w0 + 1);
	assert_int_equal(r1, r0);
	/*
	 * The worker's CPU time is the profiler's own cost: counted once it
	 * is waited for (its run time is the scheduler's, never 0 for a run).
	 */
	h1 = cp_self_helpers_cpu_ns();
	assert_true(h1 > h0);
	assert_true(cp_self_cpu_ns() >= h1);
	/* the same copy again (another descriptor): the kept verdict, no worker */
	dup_fd = dup(mfd);
	assert_int_equal(cp_parse_worker_vet(dup_fd, NULL, "test"), CP_PW_PASSED);
	cp_parse_worker_stats(&w2, &r2, &q);
	assert_int_equal(w2, w1);
	close(dup_fd);
	close(mfd);
}

/* The key of @path's content, as symbols/elf_guard.c reads it before copying. */
static struct cp_copy_key content_key(const char *path)
{
	struct cp_copy_key key = {0};
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(cp_tf_key(fd, &key), 0);
	key.no_code = true;
	close(fd);
	return key;
}

/*
 * A verdict belongs to the file's content, not to one copy: a copy made
 * again (its copy was not kept: over the kept copies' cap, or after a
 * shrink) gets the verdict without a worker, and a refusal is known before
 * any copy is made. Without the content's key, each copy is judged anew.
 */
static void test_verdict_per_content(void **state)
{
	struct cp_copy_key lib = content_key(build_path("tests/workloads/libcp_symlib.so"));
	struct cp_copy_key big = content_key(build_path("cacheperf-bpf"));
	int one = copy_of(build_path("tests/workloads/libcp_symlib.so"));
	int two = copy_of(build_path("tests/workloads/libcp_symlib.so"));
	int bomb = copy_of(build_path("cacheperf-bpf"));
	__u64 w0, r0, w1, r1, q;
	struct cp_self_mem now;
	enum cp_pw_verdict v;

	(void)state;
	if (geteuid())
		skip();
	assert_false(cp_parse_worker_known(&lib, &v));
	cp_parse_worker_stats(&w0, &r0, &q);
	assert_int_equal(cp_parse_worker_vet(one, &lib, "one"), CP_PW_PASSED);
	assert_true(cp_parse_worker_known(&lib, &v));
	assert_int_equal(v, CP_PW_PASSED);
	/* another copy of the same content: no worker */
	assert_int_equal(cp_parse_worker_vet(two, &lib, "two"), CP_PW_PASSED);
	cp_parse_worker_stats(&w1, &r1, &q);
	assert_int_equal(w1, w0 + 1);
	/* the same copy without its content's key: judged as a copy of its own */
	assert_int_equal(cp_parse_worker_vet(two, NULL, "two"), CP_PW_PASSED);
	cp_parse_worker_stats(&w1, &r1, &q);
	assert_int_equal(w1, w0 + 2);
	/* a refusal is known by the content's key: elf_guard copies nothing more */
	assert_int_equal(cp_self_mem_scan(&now), 0);
	cp_self_mem_set_limit(now.bytes + 1 * MIB);
	assert_int_equal(cp_parse_worker_vet(bomb, &big, "big"), CP_PW_MEMORY);
	assert_true(cp_parse_worker_known(&big, &v));
	assert_int_equal(v, CP_PW_MEMORY);
	/* with the room back, a refusal for memory no longer stands: no verdict known */
	cp_self_mem_set_limit(0);
	assert_false(cp_parse_worker_known(&big, &v));
	/* a key without an inode (the file changed while copied) is no content */
	big.ino = 0;
	assert_false(cp_parse_worker_known(&big, &v));
	close(one);
	close(two);
	close(bomb);
}

static void test_exercise(void **state)
{
	int lib = open(build_path("tests/workloads/libcp_symlib.so"), O_RDONLY);
	int text = open(getenv("CP_ROOT") ? "/dev/null" : "Makefile", O_RDONLY);

	(void)state;
	assert_true(lib >= 0 && text >= 0);
	/* cp_symlib's functions, entry and middle each, and points across its code */
	assert_true(cp_pw_exercise(lib, 0) > 8);
	assert_int_equal(cp_pw_exercise(text, 0), -ENOEXEC);
	close(lib);
	close(text);
}

/*
 * The profiler's own binary carries its whole DWARF: parsing it takes a few
 * MiB, more than half of what 1 MiB left under --max-memory allows. The
 * worker's RLIMIT_DATA is bounded by that room, so the file is refused as
 * memory, not parsed, and stays refused in that room; once the room is
 * back the same copy is tried again and passes, as do the same bytes in a
 * copy of their own.
 */
static void test_parse_past_the_room_is_refused(void **state)
{
	__u64 w0, r0, w1, r1, q;
	struct cp_self_mem now;
	int mfd = copy_of(build_path("cacheperf-bpf"));

	(void)state;
	if (geteuid())
		skip();
	assert_int_equal(cp_self_mem_scan(&now), 0);
	cp_self_mem_set_limit(now.bytes + 1 * MIB);
	assert_true(cp_self_mem_room() <= 1 * MIB);
	assert_int_equal(cp_parse_worker_vet(mfd, NULL, "test"), CP_PW_MEMORY);
	cp_parse_worker_stats(&w0, &r0, &q);
	/* asked again in as little room: the refusal stands, no second worker */
	assert_int_equal(cp_parse_worker_vet(mfd, NULL, "test"), CP_PW_MEMORY);
	cp_parse_worker_stats(&w1, &r1, &q);
	assert_int_equal(w1, w0);
	/* the room a run has: the same copy gets another worker, and passes */
	cp_self_mem_set_limit(0);
	assert_int_equal(cp_parse_worker_vet(mfd, NULL, "test"), CP_PW_PASSED);
	cp_parse_worker_stats(&w1, &r1, &q);
	assert_int_equal(w1, w0 + 1);
	assert_int_equal(r1, r0);
	close(mfd);
	/* the same bytes in a copy of their own, with that room: parsed whole */
	mfd = copy_of(build_path("cacheperf-bpf"));
	assert_int_equal(cp_parse_worker_vet(mfd, NULL, "test"), CP_PW_PASSED);
	close(mfd);
}

/*
 * The live run's budget for workers: it starts full (CP_PW_SECONDS of
 * CPU), is earned at a share of the wall time, never past full, and a
 * worker may start only with a whole second in it.
 */
static void test_budget(void **state)
{
	struct cp_pw_budget b = {.tokens_ns = CP_PW_SECONDS * 1000000000ll};
	const __u64 s = 1000000000ull;

	(void)state;
	assert_int_equal(cp_pw_budget_cpu_s(&b), CP_PW_SECONDS);
	/* the first refill starts the clock, earns nothing */
	cp_pw_budget_refill(&b, 5 * s, 20);
	assert_int_equal(b.tokens_ns, CP_PW_SECONDS * (__s64)s);
	/* a tenant's big files spend it, and the last worker overspends */
	b.tokens_ns = -(__s64)s / 2;
	assert_int_equal(cp_pw_budget_cpu_s(&b), 0);
	/* 2 % of 50 s is 1 s: back from -0.5 s to 0.5 s, still no worker */
	cp_pw_budget_refill(&b, 55 * s, 20);
	assert_int_equal(b.tokens_ns, (__s64)s / 2);
	assert_int_equal(cp_pw_budget_cpu_s(&b), 0);
	/* 25 s more earn 0.5 s: one second for the next worker */
	cp_pw_budget_refill(&b, 80 * s, 20);
	assert_int_equal(cp_pw_budget_cpu_s(&b), 1);
	/* a clock that goes back earns nothing; an hour fills it, never past full */
	cp_pw_budget_refill(&b, 70 * s, 20);
	assert_int_equal(b.tokens_ns, (__s64)s);
	cp_pw_budget_refill(&b, 3700 * s, 20);
	assert_int_equal(b.tokens_ns, CP_PW_SECONDS * (__s64)s);
	assert_int_equal(cp_pw_budget_cpu_s(&b), CP_PW_SECONDS);
}

/*
 * Paced as a live run, without a wait: a file's worker goes on alone and
 * the file waits (not refused); another file waits for it too (one worker
 * at a time), then the verdict is the next call's, from the same worker.
 */
static void test_paced_waits(void **state)
{
	int big = copy_of(build_path("cacheperf-bpf")),
	    lib = copy_of(build_path("tests/workloads/libcp_symlib.so"));
	__u64 w0, r0, q0, w1, r1, q1;

	(void)state;
	if (geteuid())
		skip();
	cp_parse_worker_pace(0, 1000);
	cp_parse_worker_stats(&w0, &r0, &q0);
	assert_int_equal(cp_parse_worker_vet(big, NULL, "big"), CP_PW_WAITING);
	assert_int_equal(cp_parse_worker_vet(lib, NULL, "lib"), CP_PW_WAITING);
	cp_parse_worker_settle();
	assert_int_equal(cp_parse_worker_vet(big, NULL, "big"), CP_PW_PASSED);
	cp_parse_worker_stats(&w1, &r1, &q1);
	assert_int_equal(w1, w0 + 1);
	assert_int_equal(r1, r0);
	/* the lookups that waited are the caller's to count (symbols/elf_guard.c) */
	assert_int_equal(q1, q0);
	/* the library's turn: its worker, at once in this test's pace */
	cp_parse_worker_pace(UINT_MAX, 0);
	assert_int_equal(cp_parse_worker_vet(lib, NULL, "lib"), CP_PW_PASSED);
	close(big);
	close(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_judge_in_room),
		cmocka_unit_test(test_verdict_stands),
		cmocka_unit_test(test_verdicts_kept),
		cmocka_unit_test(test_root_wrote),
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_sandbox_ids_taken),
		cmocka_unit_test(test_sandbox_user_is_no_tenants),
		cmocka_unit_test(test_honest_library_passes_once),
		cmocka_unit_test(test_verdict_per_content),
		cmocka_unit_test(test_exercise),
		cmocka_unit_test(test_parse_past_the_room_is_refused),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_paced_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
