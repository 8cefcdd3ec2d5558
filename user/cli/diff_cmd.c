// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The diff command: two replays, their issues paired, the outputs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/diff_cmd.h"
#include "cli/report_cmd.h"
#include "report/report_emit.h"

/* Replays and classifies @path into @run; the replay is gone afterwards, the issues stay. */
static int judge_run(const char *path, const struct cp_report_opts *o,
		     const struct cp_classify_cfg *cfg, FILE *warn, struct cp_diff_run *run,
		     char *err, size_t err_sz)
{
	struct cp_geometry recorded;
	struct cp_replay *r;
	struct cp_report rep;
	int ret;

	ret = cp_replay_open(path, o, warn, &r, err, err_sz);
	if (ret)
		return ret;
	ret = cp_profile__judge(cp_replay__profile(r), NULL, cfg, &rep, &recorded, &run->issues);
	if (ret) {
		snprintf(err, err_sz, "%s: cannot classify the misses: %s", path, strerror(-ret));
	} else {
		run->path = path;
		run->source = rep.source;
		run->duration_s = rep.duration_s;
		run->geo = recorded;
	}
	cp_replay__free(r);
	return ret;
}

static int write_text(void *ctx, FILE *f)
{
	cp_diff_print(ctx, f);
	return ferror(f) ? -EIO : 0;
}

static int write_json(void *ctx, FILE *f)
{
	return cp_diff_json(ctx, f) ? -EIO : 0;
}

int cp_diff_cmd(const char *before, const char *after, const struct cp_report_opts *o, FILE *warn,
		struct cp_diff_counts *counts, char *err, size_t err_sz)
{
	struct cp_classify_cfg cfg = *o->classify;
	struct cp_diff d;
	int ret;

	memset(&d, 0, sizeof(d));
	memset(counts, 0, sizeof(*counts));
	/* an issue past --top in one run would be "gone" or "new" for nothing */
	cfg.top = CP_DIFF_TOP;
	d.unchanged_ppm = cfg.min_miss_ppm;
	ret = judge_run(before, o, &cfg, warn, &d.run[CP_DIFF_BEFORE], err, err_sz);
	if (!ret)
		ret = judge_run(after, o, &cfg, warn, &d.run[CP_DIFF_AFTER], err, err_sz);
	if (!ret)
		ret = cp_diff_comparable(&d, err, err_sz);
	if (ret)
		goto out;
	d.pairs =
		calloc(d.run[0].issues.nr_issues + d.run[1].issues.nr_issues + 1, sizeof(*d.pairs));
	ret = d.pairs ? cp_issue_match(d.run[0].issues.issues, d.run[0].issues.nr_issues,
				       d.run[1].issues.issues, d.run[1].issues.nr_issues, d.pairs,
				       &d.nr_pairs)
		      : -ENOMEM;
	if (ret) {
		snprintf(err, err_sz, "cannot pair the issues: %s", strerror(-ret));
		goto out;
	}
	cp_diff_count(&d, counts);
	ret = cp_emit_outputs(o->output, o->json, write_text, write_json, &d, err, err_sz);
out:
	free(d.pairs);
	for (int i = 0; i < CP_DIFF_RUNS; i++)
		cp_classification_free(&d.run[i].issues);
	return ret;
}
