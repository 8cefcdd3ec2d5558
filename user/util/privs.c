// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Dropping capabilities on every thread (see privs.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "util/privs.h"

/* A thread that does not answer in this long is said to have failed. */
#define CP_PRIVS_WAIT_MS 2000

/* What every thread applies; set before the first signal is sent. */
static __u64 keep_mask;
static atomic_uint answered, failed;
static atomic_int first_err;

int cp_caps_get(struct cp_caps *out)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &hdr, d))
		return -errno;
	out->effective = d[0].effective | (__u64)d[1].effective << 32;
	out->permitted = d[0].permitted | (__u64)d[1].permitted << 32;
	out->inheritable = d[0].inheritable | (__u64)d[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct cp_caps *c)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
		{(__u32)c->effective, (__u32)c->permitted, (__u32)c->inheritable},
		{(__u32)(c->effective >> 32), (__u32)(c->permitted >> 32),
		 (__u32)(c->inheritable >> 32)},
	};

	return syscall(SYS_capset, &hdr, d) ? -errno : 0;
}

/*
 * The calling thread's part, async-signal-safe (raw syscalls only). The
 * bounding set first: cutting it needs CAP_SETPCAP, which capset removes.
 * Returns 0, 1 when the bounding set could not be cut, or -errno.
 */
static int drop_self(__u64 keep)
{
	struct cp_caps now, next;
	int ret, bounding = 0;

	for (unsigned int c = 0; c < 64; c++) {
		if (!cp_caps_bound_drop(keep, c) || prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 1)
			continue; /* kept, unknown to this kernel, or gone already */
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
			if (errno != EPERM)
				return -errno;
			bounding = 1; /* no CAP_SETPCAP */
			break;
		}
	}
	/* ambient capabilities survive exec; EINVAL: a kernel before 4.3 has none */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	ret = cp_caps_get(&now);
	if (ret)
		return ret;
	cp_caps_keep(&now, keep, &next);
	ret = caps_set(&next);
	return ret ? ret : bounding;
}

int cp_privs_drop_thread(void)
{
	int ret = drop_self(0);

	return ret < 0 ? ret : 0;
}

static void on_signal(int sig)
{
	int saved = errno, ret = drop_self(keep_mask);

	(void)sig;
	if (ret < 0) {
		int zero = 0;

		atomic_fetch_add(&failed, 1);
		atomic_compare_exchange_strong(&first_err, &zero, ret);
	}
	atomic_fetch_add(&answered, 1);
	errno = saved;
}

/* Signals every other thread of the process; the number signalled, or -errno. */
static int signal_others(int sig)
{
	pid_t self = (pid_t)syscall(SYS_gettid), tgid = getpid();
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0 || tid == self)
			continue;
		/* ESRCH: the thread ended since the listing */
		if (!syscall(SYS_tgkill, tgid, tid, sig))
			n++;
	}
	closedir(d);
	return n;
}

/* Waits until @n threads answered, at most CP_PRIVS_WAIT_MS. */
static bool wait_answers(unsigned int n)
{
	struct timespec tick = {0, 1000000};

	for (int ms = 0; ms < CP_PRIVS_WAIT_MS; ms++) {
		if (atomic_load(&answered) >= n)
			return true;
		nanosleep(&tick, NULL);
	}
	return atomic_load(&answered) >= n;
}

int cp_privs_drop(__u64 keep, struct cp_privs_result *out, char *err, size_t err_sz)
{
	struct sigaction sa = {.sa_handler = on_signal}, old;
	int sig = SIGRTMIN, others, ret;

	memset(out, 0, sizeof(*out));
	keep_mask = keep;
	atomic_store(&answered, 0);
	atomic_store(&failed, 0);
	atomic_store(&first_err, 0);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old)) {
		ret = -errno;
		snprintf(err, err_sz, "cannot drop capabilities: sigaction: %s", strerror(-ret));
		return ret;
	}
	/* the others first: this thread's own drop must not race their signal */
	others = signal_others(sig);
	/* a late answer must still find the handler: it stays unless all came */
	if (others > 0 && !wait_answers((unsigned int)others))
		atomic_fetch_add(&failed, 1);
	else
		sigaction(sig, &old, NULL);
	ret = drop_self(keep);
	if (others < 0) {
		snprintf(err, err_sz, "cannot list this process's threads: %s", strerror(-others));
		return others;
	}
	if (ret < 0) {
		snprintf(err, err_sz, "cannot drop capabilities: %s", strerror(-ret));
		return ret;
	}
	if (atomic_load(&failed)) {
		ret = atomic_load(&first_err);
		snprintf(err, err_sz, "cannot drop capabilities on %u of %d threads: %s",
			 atomic_load(&failed), others, ret ? strerror(-ret) : "no answer");
		return ret ? ret : -ETIMEDOUT;
	}
	out->bounding = ret == 0;
	out->threads = (unsigned int)others;
	return cp_caps_get(&out->now);
}
