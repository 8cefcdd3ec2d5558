/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profiling loop of one session: drains the ring buffer into the
 * stores, collects the per-instruction counters and applies the sample-rate
 * cap every interval, answers SIGUSR1 with a report, and ends when the
 * duration is over, a stop signal arrived, or every target exited.
 */
#ifndef CP_PROFILE_H
#define CP_PROFILE_H

#include <stdio.h>
#include <sys/types.h>

#include "machine/geometry.h"
#include "profile/insn_store.h"
#include "cli/options.h"
#include "util/path_map.h"
#include "objects/proc_maps.h"
#include "record/recorder.h"
#include "report/report.h"
#include "profile/rolling.h"
#include "profile/run_facts.h"
#include "live/session.h"
#include "symbols/symbolizer.h"
#include "cli/target.h"

#define CP_MAX_INSNS		65536	/* instruction store cap */
#define CP_TICK_MS		100	/* target liveness and signal checks */

struct cp_profile;

/* Called for SIGUSR1 with the profile so far; @ctx from cp_profile_cfg. */
typedef void (*cp_report_fn)(struct cp_profile *p, void *ctx);

struct cp_profile_cfg {
	const struct cp_options *opts;
	struct cp_child *child;		/* `-- CMD`: ends with it; NULL otherwise */
	const pid_t *pids;		/* -p: ends when all are gone */
	int nr_pids;
	cp_report_fn on_report;		/* SIGUSR1; NULL: ignored */
	void *report_ctx;		/* of every callback */
	cp_report_fn on_interval;	/* each --interval, after the stores took it all */
	cp_report_fn on_reopen;		/* SIGHUP: output files reopened */
};

/*
 * A profile over @s (loaded and attached), mapping misses onto the L1D of
 * @geo; with @rec (--record) everything it consumes is written down too.
 * Returns 0 or a negative errno with @err set.
 */
int cp_profile__new(struct cp_session *s, const struct cp_geometry *geo, struct cp_recorder *rec,
		    struct cp_profile **out, char *err, size_t err_sz);

/* Where an offline profile (a recording replayed) takes what /proc would give. */
struct cp_profile_offline {
	const struct cp_proc_source *src;	/* maps and thread stacks for the objects */
	cp_maps_text_fn maps_text;		/* maps for the symbolizer */
	/* a location for an ip the symbolizer cannot place (a file changed since) */
	cp_locate_fn explain;
	void *ctx;				/* of maps_text and explain */
	const struct cp_path_map *path_map;	/* where the files are now; NULL: as named */
};

/* A profile with no session, fed by cp_profile__feed() and __add_counts(). */
int cp_profile__new_offline(const struct cp_run_info *info, const struct cp_profile_offline *off,
			    struct cp_profile **out, char *err, size_t err_sz);
void cp_profile__free(struct cp_profile *p);

/*
 * The run's facts for the report header (and the recording's header, written
 * now): set before cp_profile__snapshot() and cp_profile__run(). Starts the clock.
 */
void cp_profile__set_info(struct cp_profile *p, const struct cp_run_info *info);
/* An offline profile's end facts (the recording's end section). */
void cp_profile__set_end(struct cp_profile *p, const struct cp_run_end *end);

/*
 * One ring-buffer record, through the same checks and handlers as the live
 * drain. Returns what the handler returns.
 */
int cp_profile__feed(struct cp_profile *p, const void *data, size_t size);

/*
 * Hints that the record @data comes to cp_profile__feed() a few records
 * later, so a replay that reads ahead overlaps the memory latencies of
 * several samples. Called for stages 0 to CP_PROFILE_HINT_STAGES - 1 as the
 * record comes closer, each reading what the one before fetched: 0 fetches
 * the sample's line, instruction slot, seen-objects keys and object buckets
 * (cp_object_store__hint()), 1 the instruction's entry, 2 and 3 the object.
 * The handling's results do not change.
 */
#define CP_PROFILE_HINT_STAGES	4
void cp_profile__hint(struct cp_profile *p, const void *data, size_t size, int stage);

/*
 * An offline profile's source has new maps or thread stacks for @pid: the
 * run's object table (or with @symbols its symbolizer) read them here.
 */
void cp_profile__maps_changed(struct cp_profile *p, pid_t pid, bool symbols);

/* One interval's counter entries into the instruction store (and the recording). */
void cp_profile__add_counts(struct cp_profile *p, const struct cp_insn *v, size_t n);

/*
 * After cp_profile__run() and the final report: with --record, writes the end
 * facts (the BPF counters and drops as the run ended) and closes the
 * recording, which then holds the maps the report's lookups read. Returns 0,
 * or a negative errno with @err set when the recording could not be written.
 */
int cp_profile__finish(struct cp_profile *p, char *err, size_t err_sz);

/*
 * Runs until the end condition of @cfg. Returns 0 (the reason goes into
 * the report, cp_profile__fill_report()) or a negative errno with @err set.
 */
int cp_profile__run(struct cp_profile *p, const struct cp_profile_cfg *cfg, char *err,
		    size_t err_sz);

/* Moves everything pending (ring buffer, counter maps) into the stores. */
void cp_profile__collect(struct cp_profile *p);

/* Fills @r: the run's facts, BPF counters, stores, records, duration. */
void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r);

/*
 * A report locate callback (cp_locate_fn) on @ctx, a struct cp_profile:
 * "function (file.c:12)" from the process's maps snapshot.
 */
int cp_profile_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz);

/*
 * Classifies what @p holds into @out (cp_classification_free() it), with
 * @r's totals and duration (filled by cp_profile__fill_report()).
 */
int cp_profile__classify(struct cp_profile *p, const struct cp_report *r,
			 const struct cp_classify_cfg *cfg, struct cp_classification *out);

/* Where a report goes and how it is judged. */
struct cp_report_opts {
	const struct cp_classify_cfg *classify;
	const char *output;		/* text: a file, NULL: stdout */
	const char *json;		/* JSON: a file, "-": stdout, NULL: none */
	const char *prom;		/* --prom-file, NULL: none */
	unsigned int prom_top;		/* --prom-top */
	const struct cp_path_map *path_map;	/* report FILE: recorded files' new places */
};

/*
 * Fills, classifies and writes the report of the profile so far. @geo:
 * the caches assumed, NULL for the recording's (offline). 0, or < 0 with
 * @err set (an output file could not be written).
 */
int cp_profile__report(struct cp_profile *p, const struct cp_geometry *geo,
		       const struct cp_report_opts *o, char *err, size_t err_sz);

/*
 * A rolling summary: the report and issues of the last --window-seconds
 * (live: the stores of the window's epochs, its BPF counters' growth; no
 * samples per object) or of the whole run (offline, or without a ring).
 */
struct cp_summary {
	struct cp_report report;	/* end_reason says which window */
	struct cp_classification issues;
	struct cp_window win;		/* owns the window's stores */
	struct cp_stats run_bpf;	/* the BPF counters of the whole run */
	double window_s;		/* span of the summary */
	double run_s;			/* span of the run so far */
	char end_reason[64];
};

/*
 * Fills @out (cp_summary_free() it) with the summary now, its issues judged
 * under @cfg. 0, or a negative errno (out of memory) with @out freed.
 */
int cp_profile__summary(struct cp_profile *p, const struct cp_classify_cfg *cfg,
			struct cp_summary *out);
void cp_summary_free(struct cp_summary *s);

/* The run's facts (cp_profile__set_info(), or the recording's). */
const struct cp_run_info *cp_profile__info(const struct cp_profile *p);

/* Snapshots @pid's maps for symbols now (a target we were given or launched). */
void cp_profile__snapshot(struct cp_profile *p, pid_t pid);


#endif /* CP_PROFILE_H */
