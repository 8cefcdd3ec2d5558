/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The descriptors this process has open, counted from /proc/self/fd (the
 * entries "." and ".." and the directory's own descriptor included: the
 * tests compare counts). Include after <cmocka.h>.
 */
#ifndef CP_TESTS_OPEN_FDS_H
#define CP_TESTS_OPEN_FDS_H

#include <dirent.h>

static inline int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#endif /* CP_TESTS_OPEN_FDS_H */
