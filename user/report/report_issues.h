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
#include "report/insn_callers.h"

/*
 * Writes the issues of @c, judged under @cfg (for the thresholds it names),
 * to @f; under each instruction the top @callers->top caller paths (none
 * when 0 or @callers is NULL).
 */
void cp_report_issues_print(const struct cp_classification *c, const struct cp_classify_cfg *cfg,
			    const struct cp_callers_view *callers, FILE *f);

/* Issue number @n of those (@soft: time shares), as that section writes it. */
void cp_report_issue_print(size_t n, const struct cp_issue *is, bool soft,
			   const struct cp_callers_view *v, FILE *f);

#endif /* CP_REPORT_ISSUES_H */
