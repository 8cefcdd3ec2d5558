/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Tests talk to their workloads over pipes: the workload prints what it did
 * ("ready PID", addresses of its labels) and waits for lines on stdin, so a
 * test can attach between two steps. Header-only: each test is one file.
 */
#ifndef CP_TESTS_WORKLOAD_PIPE_H
#define CP_TESTS_WORKLOAD_PIPE_H

#include <stdio.h>
#include <unistd.h>
#include <sys/types.h>

/*
 * Starts @argv[0] with its stdin fed from *@in and its stdout read from
 * *@out. Returns 0 with *@pid set, or -1 (no pipe, no fork, no stream).
 */
static inline int cp_wl_pipe_start(char *const argv[], pid_t *pid, int *in, FILE **out)
{
	int to_child[2], from_child[2];

	if (pipe(to_child))
		return -1;
	if (pipe(from_child)) {
		close(to_child[0]);
		close(to_child[1]);
		return -1;
	}
	*pid = fork();
	if (*pid < 0)
		return -1;
	if (*pid == 0) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		close(to_child[1]);
		close(from_child[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	*in = to_child[1];
	*out = fdopen(from_child[0], "r");
	return *out ? 0 : -1;
}

#endif /* CP_TESTS_WORKLOAD_PIPE_H */
