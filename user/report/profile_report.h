/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A profile's report: struct cp_report filled from the stores and the run's
 * facts, the classifier run over them with locations and objects found
 * through the profile's symbolizer and object table (export/outputs.h
 * writes it). The same for a live run, its rolling summaries and a replay.
 */
#ifndef CP_PROFILE_REPORT_H
#define CP_PROFILE_REPORT_H

#include "classify/classify.h"
#include "machine/geometry.h"
#include "profile/profile.h"
#include "report/report.h"

/* Fills @r: the run's facts, BPF counters, stores, records, duration. */
void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r);

/*
 * A report locate callback (cp_locate_fn) on @ctx, a struct cp_profile:
 * "function (file.c:12)" from the process's maps snapshot.
 */
int cp_profile_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz);

/*
 * Appends the frames of return address @ip of process @tgid to @v (@max
 * frames, *@nr used; *@more set when they do not fit): one per inline
 * level, innermost first, each but the last marked inlined, each outer one
 * at the line where the inner one is called (DW_AT_call_file/line):
 * "CALLOC (stddefines.h:58) <- main (lr.c:155)", not main's line lost
 * behind the inlined wrapper's. The call is the instruction before @ip; a
 * frame nothing is known of is "0x..." by its address.
 */
void cp_profile_return_frames(struct cp_profile *p, __u32 tgid, __u64 ip, struct cp_src_loc *v,
			      __u32 max, __u32 *nr, bool *more);

/*
 * Classifies what @p holds into @out (cp_classification_free() it), with
 * @r's totals and duration (filled by cp_profile__fill_report()).
 */
int cp_profile__classify(struct cp_profile *p, const struct cp_report *r,
			 const struct cp_classify_cfg *cfg, struct cp_classification *out);

/* Where a report goes and how it is judged (export/outputs.h writes them). */
struct cp_report_opts {
	const struct cp_classify_cfg *classify;
	const char *output;		    /* text: a file, NULL: stdout */
	const char *json;		    /* JSON: a file, "-": stdout, NULL: none */
	const char *html;		    /* --html: a file, NULL: none */
	const char *prom;		    /* --prom-file, NULL: none */
	const char *pprof;		    /* --pprof FILE; NULL: none */
	const char *folded;		    /* --folded FILE ("-": stdout); NULL: none */
	const char *pprof_dir;		    /* --pprof-dir DIR, live; NULL: none */
	unsigned int pprof_keep;	    /* --pprof-keep */
	const char *record;		    /* --record FILE, live: only checked; NULL: none */
	unsigned int prom_top;		    /* --prom-top */
	bool prom_pid_label;		    /* --prom-pid-label */
	const struct cp_path_map *path_map; /* report FILE: recorded files' new places */
	const struct cp_alloc_wrappers *alloc_wrappers; /* --alloc-wrapper; NULL: none */
	unsigned int callers; /* --callers: paths per issue instruction in the text */
};

/*
 * The report of the whole run, not written: fills @r, with the caches
 * @geo (NULL: the recording's, copied into @recorded, which @r then points
 * to), and classifies into @out (cp_classification_free() it) under @cfg;
 * @r->issues points to @out on success. 0, or a negative errno.
 */
int cp_profile__judge(struct cp_profile *p, const struct cp_geometry *geo,
		      const struct cp_classify_cfg *cfg, struct cp_report *r,
		      struct cp_geometry *recorded, struct cp_classification *out);

/*
 * A rolling summary: the report and issues of the last --window-seconds
 * (live: the stores of the window's epochs, its BPF counters' growth; no
 * samples per object) or of the whole run (offline, or without a ring).
 */
struct cp_summary {
	struct cp_report report; /* end_reason says which window */
	struct cp_classification issues;
	struct cp_roll_window win; /* owns the window's stores */
	struct cp_geometry geo;	   /* the recording's caches, when none were given */
	struct cp_stats run_bpf;   /* the BPF counters of the whole run */
	double window_s;	   /* span of the summary */
	double run_s;		   /* span of the run so far */
	char end_reason[64];
};

/*
 * Fills @out (cp_summary_free() it) with the summary now, its issues judged
 * under @cfg with the caches @geo (NULL: the recording's, as for
 * cp_profile__judge()). 0, or a negative errno (out of memory) with @out
 * freed.
 */
int cp_profile__summary(struct cp_profile *p, const struct cp_geometry *geo,
			const struct cp_classify_cfg *cfg, struct cp_summary *out);
void cp_summary_free(struct cp_summary *s);

#endif /* CP_PROFILE_REPORT_H */
