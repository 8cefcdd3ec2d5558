/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The voluntary context switches (sleeps) of this process's threads but the
 * caller's, from /proc/self/task: how often the profiler's helper threads
 * woke. Include after <cmocka.h>.
 */
#ifndef CP_TESTS_THREAD_SLEEPS_H
#define CP_TESTS_THREAD_SLEEPS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static inline unsigned long long others_sleeps(void)
{
	unsigned long long sum = 0;
	char path[300], line[128];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	assert_non_null(d);
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == (int)syscall(SYS_gettid))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* a thread that just ended */
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24))
				sum += strtoull(line + 24, NULL, 10);
		fclose(f);
	}
	closedir(d);
	return sum;
}

#endif /* CP_TESTS_THREAD_SLEEPS_H */
