// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process and machine CPU time from /proc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/cpu_time.h"
#include "util/clock.h"
#include "util/sysfs.h"

/* utime is field 14 of /proc/PID/stat; comm (field 2) ends at the last ')' */
#define STAT_FIELDS_AFTER_COMM 11

__u64 cp_stat_cpu_ticks(const char *text, int *ok)
{
	const char *p = strrchr(text, ')');
	unsigned long long utime, stime;
	char *end;

	*ok = 0;
	if (!p)
		return 0;
	p++;
	/* state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt, cmajflt */
	for (int i = 0; i < STAT_FIELDS_AFTER_COMM; i++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return 0;
	}
	utime = strtoull(p + 1, &end, 10);
	if (end == p + 1 || *end != ' ')
		return 0;
	p = end;
	stime = strtoull(p + 1, &end, 10);
	if (end == p + 1)
		return 0;
	*ok = 1;
	return utime + stime;
}

char cp_stat_state(const char *text)
{
	const char *p = strrchr(text, ')');

	return p && p[1] == ' ' ? p[2] : 0;
}

__u64 cp_proc_stat_busy_ticks(const char *text, int *ok)
{
	unsigned long long v[8] = {0};
	int n;

	*ok = 0;
	if (strncmp(text, "cpu ", 4))
		return 0;
	/* user nice system idle iowait irq softirq steal */
	n = sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return 0;
	*ok = 1;
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

static __u64 ticks_to_ns(__u64 ticks)
{
	long hz = sysconf(_SC_CLK_TCK);

	return ticks * (1000000000ull / (__u64)(hz > 0 ? hz : 100));
}

__u64 cp_proc_cpu_ns(const char *proc_root, pid_t pid)
{
	char rel[32], buf[1024];
	__u64 ticks;
	int ok;

	snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	if (cp_sysfs_read_head(proc_root ? proc_root : "/proc", rel, buf, sizeof(buf)) <= 0)
		return 0;
	ticks = cp_stat_cpu_ticks(buf, &ok);
	return ok ? ticks_to_ns(ticks) : 0;
}

__u64 cp_machine_busy_ns(const char *proc_root)
{
	char buf[512];
	__u64 ticks;
	int ok;

	if (cp_sysfs_read_head(proc_root ? proc_root : "/proc", "stat", buf, sizeof(buf)) <= 0)
		return 0;
	ticks = cp_proc_stat_busy_ticks(buf, &ok);
	return ok ? ticks_to_ns(ticks) : 0;
}

/* @c's file name below its root: "PID/stat" or "stat". */
static void src_rel(const struct cp_cpu_src *c, char *rel, size_t sz)
{
	if (c->pid > 0)
		snprintf(rel, sz, "%d/stat", (int)c->pid);
	else
		snprintf(rel, sz, "stat");
}

void cp_cpu_src_open(struct cp_cpu_src *c, const char *proc_root, pid_t pid)
{
	char path[4096], rel[32];

	*c = (struct cp_cpu_src){.fd = -1, .pid = pid, .proc_root = proc_root};
	src_rel(c, rel, sizeof(rel));
	if (cp_sysfs_path(path, sizeof(path), proc_root ? proc_root : "/proc", rel))
		return;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	c->gone = c->fd < 0 && pid > 0 && (errno == ENOENT || errno == ESRCH);
}

/* The file's head into @buf (NUL-terminated): held, or by path. Its length, or <= 0. */
static int src_read(const struct cp_cpu_src *c, char *buf, size_t sz)
{
	char rel[32];
	size_t len = 0;
	ssize_t n = 0;

	if (c->fd < 0) {
		src_rel(c, rel, sizeof(rel));
		return cp_sysfs_read_head(c->proc_root ? c->proc_root : "/proc", rel, buf, sz);
	}
	/* one pread reads it whole when it fits: procfs fills the buffer at once */
	while (len < sz - 1 && (n = pread(c->fd, buf + len, sz - 1 - len, (off_t)len)) > 0) {
		len += (size_t)n;
		if (buf[len - 1] == '\n')
			break;
	}
	buf[len] = '\0';
	return n < 0 ? -errno : (int)len;
}

/*
 * The readings this thread made last: of which root and pid (<= 0: the
 * machine), when, and what. /proc counts CPU time in clock ticks (a
 * hundredth of a second) while the kernel writes the whole file for every
 * read, /proc/stat with each CPU's line and each interrupt's count. The
 * loop reads its targets' at the top of each turn and the allocation tick
 * at its end, milliseconds apart, in two sources of their own: a hundred
 * turns a second under -a, a twentieth of the profiler's time. A reading
 * younger than one tick is the same count: it is taken, not read again.
 * Only a living process's is kept: an exit is seen at once.
 */
#define CP_CPU_SEEN 8

struct cpu_seen {
	char root[128]; /* "" with at_ns 0: none */
	pid_t pid;
	__u64 at_ns, ns;
};

static __thread struct cpu_seen cpu_seen[CP_CPU_SEEN];

static const char *src_root(const struct cp_cpu_src *c)
{
	return c->proc_root ? c->proc_root : "/proc";
}

static struct cpu_seen *seen_of(const struct cp_cpu_src *c)
{
	pid_t pid = c->pid > 0 ? c->pid : 0;

	for (int i = 0; i < CP_CPU_SEEN; i++)
		if (cpu_seen[i].at_ns && cpu_seen[i].pid == pid &&
		    !strcmp(cpu_seen[i].root, src_root(c)))
			return &cpu_seen[i];
	return NULL;
}

static bool seen_recent(const struct cp_cpu_src *c, __u64 now, __u64 *ns)
{
	const struct cpu_seen *e = seen_of(c);

	if (!e || now - e->at_ns >= ticks_to_ns(1))
		return false;
	*ns = e->ns;
	return true;
}

static void saw(const struct cp_cpu_src *c, __u64 now, __u64 ns)
{
	struct cpu_seen *e = seen_of(c);

	/* else the place of the oldest reading */
	if (!e) {
		e = &cpu_seen[0];
		for (int i = 1; i < CP_CPU_SEEN; i++)
			if (cpu_seen[i].at_ns < e->at_ns)
				e = &cpu_seen[i];
	}
	/* a root too long to keep is read each time */
	if (snprintf(e->root, sizeof(e->root), "%s", src_root(c)) >= (int)sizeof(e->root)) {
		e->at_ns = 0;
		return;
	}
	e->pid = c->pid > 0 ? c->pid : 0;
	e->at_ns = now;
	e->ns = ns;
}

__u64 cp_cpu_src_ns(struct cp_cpu_src *c, bool *alive)
{
	__u64 ticks = 0, now, ns;
	char buf[1024], st;
	bool living = c->pid <= 0;
	int ok = 0;

	if (alive)
		*alive = living;
	if (c->gone)
		return 0;
	now = cp_now_ns();
	if (seen_recent(c, now, &ns)) {
		if (alive)
			*alive = true;
		return ns;
	}
	if (src_read(c, buf, sizeof(buf)) <= 0)
		return 0;
	if (c->pid <= 0) {
		ticks = cp_proc_stat_busy_ticks(buf, &ok);
	} else {
		st = cp_stat_state(buf);
		living = st && st != 'Z' && st != 'X';
		ticks = cp_stat_cpu_ticks(buf, &ok);
	}
	if (alive)
		*alive = living;
	if (!ok)
		return 0;
	ns = ticks_to_ns(ticks);
	if (living)
		saw(c, now, ns);
	return ns;
}

void cp_cpu_src_close(struct cp_cpu_src *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
