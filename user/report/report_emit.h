/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A report's or a diff's text and JSON as writers of a file
 * (util/out_file.h), and where the two go: the text to -o FILE or stdout,
 * the JSON to --json FILE or stdout ("-": then the text only with -o).
 * Each file is replaced whole. export/outputs.h writes a profile's.
 */
#ifndef CP_REPORT_EMIT_H
#define CP_REPORT_EMIT_H

#include <stddef.h>

#include "report/report.h"
#include "util/out_file.h"

/* Where the text goes by the rule above: @output, "-" (stdout), or NULL (nowhere). */
const char *cp_emit_text_path(const char *output, const char *json);

/*
 * The text by @text to @output (NULL: stdout) and, with @json, the JSON by
 * @json_fn there, both on @ctx, as the rule above says; 0 or < 0 with @err
 * (the first error's message).
 */
int cp_emit_outputs(const char *output, const char *json, cp_out_fn text, cp_out_fn json_fn,
		    void *ctx, char *err, size_t err_sz);

/* cp_out_fn of a struct cp_report (its classification in r->issues, may be NULL): the text. */
int cp_report_text_out(void *ctx, FILE *f);

/* The same: the JSON. */
int cp_report_json_out(void *ctx, FILE *f);

#endif /* CP_REPORT_EMIT_H */
