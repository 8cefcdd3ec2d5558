/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The issues section of the text report, in the style of the paper's
 * Figs. 5-9: "Application's false sharing, accessed by the instruction
 * at: ... Related to the heap object (1056 bytes) allocated at: ...",
 * then the evidence, the fix hint, and how many minor issues were
 * suppressed. Pure: a classification in, text out.
 */
#ifndef CP_REPORT_ISSUES_H
#define CP_REPORT_ISSUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "classify/classify.h"

/* Writes the issues of @c, judged under @cfg (for the thresholds it names), to @f. */
void cp_report_issues_print(const struct cp_classification *c, const struct cp_classify_cfg *cfg,
			    FILE *f);

/* Issue number @n of those (@soft: time shares), as that section writes it. */
void cp_report_issue_print(size_t n, const struct cp_issue *is, bool soft, FILE *f);

#endif /* CP_REPORT_ISSUES_H */
