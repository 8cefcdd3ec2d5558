// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "util/exit_code.h"
#include "live/signals.h"

static volatile sig_atomic_t stop_signals;
static volatile sig_atomic_t report_requests;
static volatile sig_atomic_t reopen_requests;

static void on_stop(int sig)
{
	static const char msg[] = "cacheperf-bpf: second signal, exiting now\n";

	(void)sig;
	if (stop_signals++ > 0) {
		/* the user insists: no report, no cleanup beyond what the kernel does */
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(CP_EXIT_RUNTIME);
		_exit(CP_EXIT_RUNTIME);
	}
}

static void on_report(int sig)
{
	(void)sig;
	report_requests = 1;
}

static void on_reopen(int sig)
{
	(void)sig;
	reopen_requests = 1;
}

static void on_child(int sig)
{
	(void)sig; /* only to interrupt poll(); the loop reaps the child */
}

int cp_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking poll must return so the loop sees the request */
	sa.sa_handler = on_stop;
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	sa.sa_handler = on_report;
	if (sigaction(SIGUSR1, &sa, NULL))
		return -errno;
	sa.sa_handler = on_reopen;
	if (sigaction(SIGHUP, &sa, NULL))
		return -errno;
	sa.sa_handler = on_child;
	/* a parse worker ends at any moment now: a write of the recording is not cut by it
	 * (the loop's poll and epoll_wait return anyway) */
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	if (sigaction(SIGCHLD, &sa, NULL))
		return -errno;
	return 0;
}

bool cp_signals_stop_requested(void)
{
	return stop_signals > 0;
}

bool cp_signals_take_report_request(void)
{
	if (!report_requests)
		return false;
	report_requests = 0;
	return true;
}

bool cp_signals_take_reopen_request(void)
{
	if (!reopen_requests)
		return false;
	reopen_requests = 0;
	return true;
}
