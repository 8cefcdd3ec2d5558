/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The issues section of the text report as a string, and a check on it, for cmocka tests. */
#ifndef CP_TEST_ISSUES_TEXT_H
#define CP_TEST_ISSUES_TEXT_H

#include <stdio.h>
#include <string.h>

#include "report/report_issues.h"

/* cp_report_issues_print() of @c under @cfg, as a string to free(). */
static inline char *render(const struct cp_classification *c, const struct cp_classify_cfg *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cp_report_issues_print(c, cfg, NULL, f);
	fclose(f);
	return buf;
}

/* Fails, showing @text, unless it contains @want. */
static inline void expect(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing '%s' in:\n%s", want, text);
}

#endif /* CP_TEST_ISSUES_TEXT_H */
