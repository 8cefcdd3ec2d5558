// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpf's messages through the log (root): a return probe attached to a
 * process that has exited, the race a short-lived process makes with its
 * allocation probes, forced. Held (as while a process's probes attach), no
 * libbpf line reaches stderr at the default level and the warning that
 * explains the failure is kept for the profiler's own line; at debug level
 * it is a debug line. Not held, it is a warning, as a load failure is.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/libbpf_log.h"
#include "util/log.h"

/* A pid that was a process and is not any more (reaped). */
static pid_t exited_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/*
 * Attaches @skel's on_alloc_ret to an exited process with stderr in a file
 * and the journal's prefixes (JOURNAL_STREAM names the file): what was said.
 */
static char *attach_to_exited(struct cacheperf *skel, enum cp_log_level level, bool hold)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = true);
	char tmpl[] = "/tmp/cp_test_libbpf_log_XXXXXX", env[64];
	int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO);
	char *out = calloc(1, 16384);
	struct bpf_link *l;
	struct stat st;

	assert_true(fd >= 0 && saved >= 0 && out);
	unlink(tmpl);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	dup2(fd, STDERR_FILENO);
	cp_log_init(level);
	cp_libbpf_log_hold(hold);
	/* any offset in our own executable: the process is gone before it matters */
	l = bpf_program__attach_uprobe_opts(skel->progs.on_alloc_ret, exited_pid(),
					    "/proc/self/exe", 0x1000, &uo);
	cp_libbpf_log_hold(false);
	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	cp_log_init(CP_LOG_WARNING);
	assert_null(l);
	assert_true(pread(fd, out, 16383, 0) >= 0);
	close(fd);
	return out;
}

static void test_exited_process(void **state)
{
	struct cacheperf *skel;
	char *out;

	(void)state;
	REQUIRE_ROOT();
	cp_libbpf_log_route();
	skel = cacheperf__open();
	assert_non_null(skel);
	/* a plain uprobe program (not prepared for multi links), as libbpf attaches it */
	assert_int_equal(cacheperf__load(skel), 0);

	/* held, default level: nothing said, the explanation kept */
	out = attach_to_exited(skel, CP_LOG_WARNING, true);
	assert_string_equal(out, "");
	assert_non_null(strstr(cp_libbpf_log_held(), "libbpf: prog 'on_alloc_ret'"));
	assert_null(strchr(cp_libbpf_log_held(), '\n'));
	free(out);
	/* held, debug level: the same as a debug line */
	out = attach_to_exited(skel, CP_LOG_DEBUG, true);
	assert_non_null(strstr(out, "<7>libbpf: prog 'on_alloc_ret'"));
	assert_null(strstr(out, "<4>"));
	free(out);
	/* not held: a warning, as libbpf's warnings are elsewhere */
	out = attach_to_exited(skel, CP_LOG_WARNING, false);
	assert_non_null(strstr(out, "<4>libbpf: prog 'on_alloc_ret'"));
	free(out);
	cacheperf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exited_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
