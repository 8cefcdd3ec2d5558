/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report's overhead budget section (text and JSON): --overhead, the unit
 * costs measured at start, the rates the budget chose, and what the probes
 * are estimated to have cost the targets. A replay has no budget: nothing is
 * written. Pure.
 */
#ifndef CP_REPORT_BUDGET_H
#define CP_REPORT_BUDGET_H

#include <stdio.h>

#include "budget/budget.h"
#include "util/json_writer.h"

/* A run's budget as the report shows it; plan->budget_ppm 0: no budget (or a replay). */
struct cp_report_budget {
	struct cp_budget_plan plan;
	struct cp_unit_costs unit;
	struct cp_budget_spent spent;
};

/* "Overhead budget": nothing without a budget. */
void cp_report_budget_print(const struct cp_report_budget *b, FILE *f);

/* "overhead": an object; absent without a budget (a replay). */
void cp_report_budget_json(struct cp_json *j, const struct cp_report_budget *b);

#endif /* CP_REPORT_BUDGET_H */
