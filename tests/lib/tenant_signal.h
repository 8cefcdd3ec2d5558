/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tenant against a sandboxed child (util/sandbox.h) where the profiler
 * still holds CAP_SETUID (this test, root): the child's user and group must
 * be no one's (neither root, nor nobody, nor any passwd or group entry),
 * and a process running as nobody, the tenant the e2e tests play, must not
 * be able to stop or kill it (kill(2): EPERM). Until issue #29's fix the
 * child ran as nobody: the tenant's SIGSTOP held the describe server before
 * its "ready" word. Include after <cmocka.h>; needs root.
 */
#ifndef CP_TESTS_TENANT_SIGNAL_H
#define CP_TESTS_TENANT_SIGNAL_H

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

/* The four ids (real, effective, saved, file system) of @pid's "Uid" or "Gid" line; 0 or -1. */
static inline int tenant_status_ids(pid_t pid, const char *key, unsigned long ids[4])
{
	char path[64], line[256];
	int ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':' &&
		    sscanf(line + strlen(key) + 1, "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2],
			   &ids[3]) == 4)
			ret = 0;
	fclose(f);
	return ret;
}

/* Asserts @pid runs as a user and group no one holds: not root, not nobody, no entry. */
static inline void assert_ids_no_ones(pid_t pid)
{
	unsigned long uid[4], gid[4];

	assert_int_equal(tenant_status_ids(pid, "Uid", uid), 0);
	assert_int_equal(tenant_status_ids(pid, "Gid", gid), 0);
	print_message("# the sandboxed child %d runs as uid %lu, gid %lu\n", (int)pid, uid[0],
		      gid[0]);
	for (int i = 0; i < 4; i++) {
		if (uid[i] == 0 || uid[i] == 65534 || gid[i] == 0 || gid[i] == 65534)
			fail_msg("the sandboxed child runs as uid %lu gid %lu: root's or nobody's",
				 uid[i], gid[i]);
		if (getpwuid((uid_t)uid[i]))
			fail_msg("uid %lu of the sandboxed child is %s's", uid[i],
				 getpwuid((uid_t)uid[i])->pw_name);
		if (getgrgid((gid_t)gid[i]))
			fail_msg("gid %lu of the sandboxed child is group %s's", gid[i],
				 getgrgid((gid_t)gid[i])->gr_name);
	}
}

/*
 * A process running as nobody (no capability left) sends @pid SIGSTOP,
 * then SIGKILL: asserts both fail with EPERM.
 */
static inline void assert_nobody_cannot_signal(pid_t pid)
{
	int status;
	pid_t tenant = fork();

	assert_true(tenant >= 0);
	if (tenant == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (!kill(pid, SIGSTOP))
			_exit(1);
		if (errno != EPERM)
			_exit(2);
		if (!kill(pid, SIGKILL))
			_exit(3);
		_exit(errno == EPERM ? 0 : 4);
	}
	assert_int_equal(waitpid(tenant, &status, 0), tenant);
	kill(pid, SIGCONT); /* a stop that got through holds no later test */
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("a tenant running as nobody (%d): 1 stopped the sandboxed child, 3 killed "
			 "it, 2 and 4 another error than EPERM, 10 could not become nobody",
			 WEXITSTATUS(status));
	/* the child goes on: neither signal got through */
	assert_int_equal(kill(pid, 0), 0);
}

#endif /* CP_TESTS_TENANT_SIGNAL_H */
