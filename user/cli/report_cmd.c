// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report command: replay, then the outputs. */
#include <errno.h>
#include <string.h>

#include "cli/report_cmd.h"
#include "machine/source.h"
#include "export/outputs.h"

int cp_replay_open(const char *path, const struct cp_report_opts *o, FILE *warn,
		   struct cp_replay **out, char *err, size_t err_sz)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, err_sz, "cannot open the recording %s: %s", path, strerror(errno));
		return ret;
	}
	ret = cp_replay__run(f, path, warn, o->path_map, out, err, err_sz);
	fclose(f);
	if (!ret)
		cp_replay__profile(*out)->alloc_wrappers = o->alloc_wrappers;
	return ret;
}

int cp_replay_report(const char *path, const struct cp_report_opts *o, FILE *warn, char *err,
		     size_t err_sz)
{
	const struct cp_source_desc *src;
	struct cp_outputs outs;
	struct cp_replay *r;
	struct cp_profile *p;
	int ret;

	ret = cp_replay_open(path, o, warn, &r, err, err_sz);
	if (ret)
		return ret;
	p = cp_replay__profile(r);
	src = cp_source_of(cp_profile__info(p)->source);
	/* the recording does not say which PMU the machine had, unless it sampled one */
	cp_outputs_init(&outs, o, NULL, src->needs_pmu ? src->name : "unknown", false, NULL);
	ret = cp_outputs_write(&outs, CP_OUT_END, p, err, err_sz);
	cp_outputs_free(&outs);
	cp_replay__free(r);
	return ret;
}
