/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HTML report of a profile (--html FILE): what its figures need,
 * gathered from the profile's stores around a filled and classified
 * report: misses per L1 set, per L2 set from the tracked lines, the
 * timeline's intervals (profile/timeline.h), each issue's share of them,
 * its access history, and the flame graph of its samples' stacks. Then
 * html_report.h writes the page, replacing @path whole (out_file.h).
 */
#ifndef CP_PROFILE_HTML_H
#define CP_PROFILE_HTML_H

#include <stddef.h>

#include "profile/profile.h"
#include "report/report.h"

/*
 * Writes the HTML report of @r (filled from @p, its issues in r->issues)
 * to @path; @insns and @misses are the stores @r was classified from (the
 * run's, or a summary's window). 0 or < 0 with @err.
 */
int cp_profile__html(struct cp_profile *p, const struct cp_report *r,
		     const struct cp_insn_store *insns, const struct cp_miss_store *misses,
		     const char *path, char *err, size_t err_sz);

#endif /* CP_PROFILE_HTML_H */
