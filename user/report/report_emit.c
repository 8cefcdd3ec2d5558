// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Text and JSON reports to their files (see report_emit.h). */
#include <errno.h>
#include <string.h>

#include "report/report_emit.h"
#include "report/report_json.h"
#include "util/log.h"

int cp_report_text_out(void *ctx, FILE *f)
{
	cp_report_print(ctx, f);
	return ferror(f) ? -EIO : 0;
}

int cp_report_json_out(void *ctx, FILE *f)
{
	const struct cp_report *r = ctx;

	return cp_report_json(r, r->issues, f) ? -EIO : 0;
}

const char *cp_emit_text_path(const char *output, const char *json)
{
	if (output)
		return output;
	return json && strcmp(json, "-") == 0 ? NULL : "-";
}

int cp_emit_outputs(const char *output, const char *json, cp_out_fn text, cp_out_fn json_fn,
		    void *ctx, char *err, size_t err_sz)
{
	const char *text_path = cp_emit_text_path(output, json);
	char later[512]; /* a second error's message: the first one is kept */
	int ret = 0, ret2;

	if (text_path)
		ret = cp_out_file_write(text_path, CP_OUT_PRIVATE, text, ctx, err, err_sz);
	if (!json)
		return ret;
	ret2 = cp_out_file_write(json, CP_OUT_PRIVATE, json_fn, ctx, ret ? later : err,
				 ret ? sizeof(later) : err_sz);
	if (ret && ret2)
		cp_err("%s", later);
	return ret ? ret : ret2;
}
