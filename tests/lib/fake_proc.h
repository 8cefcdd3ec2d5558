/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A /proc of the test's making: ROOT/PID/maps with the text given (cmocka tests). */
#ifndef CP_TEST_FAKE_PROC_H
#define CP_TEST_FAKE_PROC_H

#include <stdio.h>
#include <sys/stat.h>

static inline void fake_maps(const char *root, int pid, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#endif /* CP_TEST_FAKE_PROC_H */
