/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The processes being profiled: checking -p PIDs, launching `-- CMD` held
 * before exec until the probes are attached, and noticing when targets exit.
 */
#ifndef CP_TARGET_H
#define CP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A command launched by `-- CMD`, stopped before its exec. */
struct cp_child {
	pid_t pid;
	int go_fd;   /* write end: one byte lets the child exec */
	int exec_fd; /* read end, close-on-exec in the child: errno if exec failed */
	bool exited;
	int status; /* waitpid status once exited */
};

/*
 * Checks that every PID exists and may be profiled. Returns 0, or -ESRCH /
 * -EPERM with a sentence naming the PID in @err.
 */
int cp_target_check_pids(const pid_t *pids, int nr, char *err, size_t err_sz);

/* Forks @argv[0] held before exec. Returns 0 or a negative errno with @err set. */
int cp_child_spawn(char *const argv[], struct cp_child *child, char *err, size_t err_sz);

/*
 * Lets the held child exec. Returns 0 once the exec succeeded, or the
 * negative errno of the failed exec with @err set ("cannot run CMD: ...").
 */
int cp_child_release(struct cp_child *child, char *err, size_t err_sz);

/* Ends a held or running child (SIGTERM, then SIGKILL after @grace_ms) and reaps it. */
void cp_child_stop(struct cp_child *child, int grace_ms);

/*
 * Waits up to @ms for the released child to stop (SIGSTOP) or exit.
 * Returns 1 when it stopped, 0 at the time-out, -ESRCH once it exited
 * (reaped: cp_child_poll() says so, its status kept).
 */
int cp_child_wait_stop(struct cp_child *child, int ms);

/* Reaps the child if it exited; returns true once it has. Never blocks. */
bool cp_child_poll(struct cp_child *child);

/* The shell's exit code for a waitpid status: the code, or 128 + signal. */
int cp_exit_code(int wait_status);

/* True while process @pid exists and is not a zombie. */
bool cp_pid_alive(pid_t pid);

#endif /* CP_TARGET_H */
