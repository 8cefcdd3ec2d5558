/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The voluntary context switches (sleeps) of this process's threads named
 * @name (cp_rt_thread_start()'s names, /proc/self/task/TID/comm): how
 * often one kind of the profiler's helper threads woke, without the
 * others' wakeups, which depend on what the rest of the machine does.
 * Include after <cmocka.h>.
 */
#ifndef CP_TESTS_THREAD_SLEEPS_H
#define CP_TESTS_THREAD_SLEEPS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether /proc/self/task/@tid/comm is @name. */
static inline int thread_named(const char *tid, const char *name)
{
	char path[300], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	f = fopen(path, "r");
	if (!f)
		return 0; /* a thread that just ended */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, name);
}

static inline unsigned long long thread_sleeps(const char *name)
{
	unsigned long long sum = 0;
	char path[300], line[128];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	int threads = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.' || !thread_named(e->d_name, name))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		threads++;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24))
				sum += strtoull(line + 24, NULL, 10);
		fclose(f);
	}
	closedir(d);
	/* a name no thread has would count nothing, and pass for quiet */
	assert_true(threads > 0);
	return sum;
}

#endif /* CP_TESTS_THREAD_SLEEPS_H */
