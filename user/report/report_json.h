/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The JSON report (--json FILE|-): the same run as the text report, for
 * programs. Versioned; docs/json.md documents every key. Pure: structs in,
 * text out.
 */
#ifndef CP_REPORT_JSON_H
#define CP_REPORT_JSON_H

#include <stdio.h>

#include "classify/classify.h"
#include "report/report.h"
#include "util/json_writer.h"

/* Bumped when a key changes meaning or goes away; new keys do not bump it. */
#define CP_JSON_VERSION 1

/* "geometry": {l1d, l2, llc: {size, ways, sets, line, from}} of @geo (NULL: empty). */
void cp_report_geometry_json(struct cp_json *j, const struct cp_geometry *geo);

/* Writes @r and its classification @c (NULL: no issues) to @f; 0 or -1. */
int cp_report_json(const struct cp_report *r, const struct cp_classification *c, FILE *f);

#endif /* CP_REPORT_JSON_H */
