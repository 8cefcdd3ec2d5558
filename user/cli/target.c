// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cli/target.h"
#include "machine/cpu_time.h"

/* Reads the state letter of /proc/PID/stat; 0 when the process is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return cp_stat_state(buf);
}

bool cp_pid_alive(pid_t pid)
{
	char st = proc_state(pid);

	return st && st != 'Z' && st != 'X';
}

/*
 * A target must exist and its maps be readable: what profiling it takes
 * (ptrace read access: the same user, or CAP_SYS_PTRACE). Signalling it is
 * not needed, so kill(pid, 0) would ask for too much (CAP_KILL).
 */
int cp_target_check_pids(const pid_t *pids, int nr, char *err, size_t err_sz)
{
	for (int i = 0; i < nr; i++) {
		char path[64];
		int fd;

		if (!cp_pid_alive(pids[i])) {
			snprintf(err, err_sz, "no such process: PID %d", pids[i]);
			return -ESRCH;
		}
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (errno == EACCES || errno == EPERM) {
			snprintf(err, err_sz,
				 "no permission to profile PID %d: run as root or with CAP_BPF, "
				 "CAP_PERFMON and CAP_SYS_PTRACE",
				 pids[i]);
			return -EPERM;
		}
		snprintf(err, err_sz, "no such process: PID %d", pids[i]);
		return -ESRCH;
	}
	return 0;
}

int cp_child_spawn(char *const argv[], struct cp_child *child, char *err, size_t err_sz)
{
	int go[2], ex[2], e;
	char c;

	memset(child, 0, sizeof(*child));
	child->pid = -1;
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		e = errno;
		snprintf(err, err_sz, "cannot create pipes for the command: %s", strerror(e));
		return -e;
	}
	child->pid = fork();
	if (child->pid < 0) {
		e = errno;
		snprintf(err, err_sz, "cannot fork the command: %s", strerror(e));
		close(go[0]), close(go[1]), close(ex[0]), close(ex[1]);
		return -e;
	}
	if (child->pid == 0) {
		close(go[1]);
		close(ex[0]);
		/* hold here until the profiler has attached everything */
		if (read(go[0], &c, 1) != 1)
			_exit(126); /* the profiler gave up: never run unobserved */
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	child->go_fd = go[1];
	child->exec_fd = ex[0];
	return 0;
}

int cp_child_release(struct cp_child *child, char *err, size_t err_sz)
{
	int e = 0;
	ssize_t n;

	if (write(child->go_fd, "g", 1) != 1) {
		e = errno;
		snprintf(err, err_sz, "cannot start the command: %s", strerror(e));
		return -e;
	}
	close(child->go_fd);
	child->go_fd = -1;
	/* EOF: the exec succeeded and closed the pipe; an int: its errno */
	do
		n = read(child->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(child->exec_fd);
	child->exec_fd = -1;
	if (n == sizeof(e)) {
		snprintf(err, err_sz, "cannot run the command: %s", strerror(e));
		return -e;
	}
	return 0;
}

int cp_child_wait_stop(struct cp_child *child, int ms)
{
	const struct timespec ms1 = {0, 1000 * 1000};

	for (int waited = 0; !child->exited && waited <= ms; waited++) {
		int status;
		pid_t r = waitpid(child->pid, &status, WNOHANG | WUNTRACED);

		if (r == child->pid && WIFSTOPPED(status))
			return 1;
		if (r == child->pid) {
			child->exited = true;
			child->status = status;
		} else if (r < 0 && errno != EINTR) {
			return -errno;
		} else {
			nanosleep(&ms1, NULL);
		}
	}
	return child->exited ? -ESRCH : 0;
}

bool cp_child_poll(struct cp_child *child)
{
	int status;

	if (child->exited || child->pid <= 0)
		return child->exited;
	if (waitpid(child->pid, &status, WNOHANG) == child->pid) {
		child->exited = true;
		child->status = status;
	}
	return child->exited;
}

/* Waits up to @ms for the child to exit; true once it has. */
static bool wait_child(struct cp_child *child, int ms)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (int waited = 0; !cp_child_poll(child) && waited < ms; waited += 10)
		nanosleep(&ts, NULL);
	return child->exited;
}

void cp_child_stop(struct cp_child *child, int grace_ms)
{
	bool held = child->go_fd >= 0;

	if (child->pid <= 0)
		return;
	if (child->exec_fd >= 0) {
		close(child->exec_fd);
		child->exec_fd = -1;
	}
	if (held) {
		/* a held child exits by itself on EOF, before running anything */
		close(child->go_fd);
		child->go_fd = -1;
	} else if (!cp_child_poll(child)) {
		kill(child->pid, SIGTERM);
	}
	if (wait_child(child, grace_ms))
		return;
	kill(child->pid, SIGKILL);
	if (waitpid(child->pid, &child->status, 0) == child->pid)
		child->exited = true;
}

int cp_exit_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 1;
}
