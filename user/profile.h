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

#include "geometry.h"
#include "insn_store.h"
#include "options.h"
#include "report.h"
#include "session.h"
#include "target.h"

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
	void *report_ctx;
};

/*
 * A profile over @s (loaded and attached), mapping misses onto the L1D of
 * @geo. Returns 0 or a negative errno with @err set.
 */
int cp_profile__new(struct cp_session *s, const struct cp_geometry *geo, struct cp_profile **out,
		    char *err, size_t err_sz);
void cp_profile__free(struct cp_profile *p);

/*
 * Runs until the end condition of @cfg. Returns 0 (the reason goes into
 * the report, cp_profile__fill_report()) or a negative errno with @err set.
 */
int cp_profile__run(struct cp_profile *p, const struct cp_profile_cfg *cfg, char *err,
		    size_t err_sz);

/* Moves everything pending (ring buffer, counter maps) into the stores. */
void cp_profile__collect(struct cp_profile *p);

/* Fills the measured part of @r: BPF counters, stores, records, duration. */
void cp_profile__fill_report(const struct cp_profile *p, struct cp_report *r);

/*
 * A report locate callback (cp_locate_fn) on @ctx, a struct cp_profile:
 * "function (file.c:12)" from the process's maps snapshot.
 */
int cp_profile_locate(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz);

/*
 * Classifies what the stores hold now (classify.h) with the filters of
 * @opts; misses per second use the periods in effect now (the rate cap may
 * have changed them during the run). Free @out with cp_classification_free(). Returns 0 or a
 * negative errno.
 */
int cp_profile__classify(struct cp_profile *p, const struct cp_options *opts,
			 struct cp_classification *out);

/* Snapshots @pid's maps for symbols now (a target we were given or launched). */
void cp_profile__snapshot(struct cp_profile *p, pid_t pid);


#endif /* CP_PROFILE_H */
