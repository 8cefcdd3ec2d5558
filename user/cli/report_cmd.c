// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report command: replay, then the outputs. */
#include <errno.h>
#include <string.h>

#include "cli/report_cmd.h"
#include "machine/source.h"
#include "report/summary_out.h"

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
	struct cp_replay *r;
	struct cp_profile *p;
	int ret;

	ret = cp_replay_open(path, o, warn, &r, err, err_sz);
	if (ret)
		return ret;
	p = cp_replay__profile(r);
	ret = cp_profile__report(p, NULL, o, err, err_sz);
	if (!ret && o->prom) {
		struct cp_summary_out so;
		const struct cp_source_desc *src = cp_source_of(cp_profile__info(p)->source);

		/* the recording does not say which PMU the machine had, unless it sampled one */
		cp_summary_out_init(&so, o, NULL, src->needs_pmu ? src->name : "unknown", false,
				    NULL);
		ret = cp_summary_out_prom(&so, p, err, err_sz);
	}
	cp_replay__free(r);
	return ret;
}
