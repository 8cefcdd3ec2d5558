/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text goldens for cmocka tests: a file read whole, and a written text
 * compared with its golden, saved under $CP_PROM_GOT when that is set so a
 * difference can be read by hand.
 */
#ifndef CP_TEST_GOLDEN_TEXT_H
#define CP_TEST_GOLDEN_TEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at @path, NUL-terminated (free() it); fails the test if unreadable. */
static char *cp_test_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *p = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&p, &n);
	int c;

	if (!f)
		fail_msg("cannot read %s", path);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return p;
}

/* Fails unless @got equals the golden file @want_path (named @name in messages). */
static void cp_test_golden(const char *name, const char *want_path, const char *got)
{
	char *want;

	if (getenv("CP_PROM_GOT")) {
		char path[512];
		FILE *g;

		snprintf(path, sizeof(path), "%s/%s", getenv("CP_PROM_GOT"), name);
		g = fopen(path, "w");
		assert_non_null(g);
		fputs(got, g);
		fclose(g);
	}
	want = cp_test_slurp(want_path);
	if (strcmp(got, want))
		fail_msg("%s differs; got:\n%s", name, got);
	free(want);
}

#endif /* CP_TEST_GOLDEN_TEXT_H */
