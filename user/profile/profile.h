/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile: the record handlers and the stores they feed. One table of
 * handlers (cp_profile__ops(), profile/records.h) takes every record, from
 * the live drain (live/run.c) and from a recording's replay (record/replay.c)
 * alike, like perf's struct perf_tool. What only a live run does on the way
 * (breakpoint candidates, allocation probes for a new process, the
 * recording, the run's counters so far) is behind struct cp_profile_hooks,
 * which only the live run sets. What a live run computes on the side (a new
 * call site's frames, a breakpoint history) it feeds as records through
 * cp_profile__feed(). Assembling a report
 * from the stores is report/profile_report.h.
 */
#ifndef CP_PROFILE_H
#define CP_PROFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cacheperf/abi.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf/stack_copy.h"
#include "machine/geometry.h"
#include "objects/alloc_wrappers.h"
#include "objects/objects.h"
#include "objects/object_stats.h"
#include "profile/insn_store.h"
#include "profile/miss_store.h"
#include "profile/proc_summaries.h"
#include "profile/records.h"
#include "profile/rolling.h"
#include "profile/run_facts.h"
#include "profile/run_limits.h"
#include "profile/shared_maps.h"
#include "profile/timeline.h"
#include "profile/seen_objects.h"
#include "profile/stack_store.h"
#include "symbols/symbolizer.h"
#include "util/path_map.h"

#define CP_MAX_INSNS 65536 /* instruction store cap */

struct cp_bp_summary;

/*
 * What a live run does besides handling a record. Every member may be NULL;
 * an offline profile has none. @ctx is the first argument of each.
 */
struct cp_profile_hooks {
	/* a sample handled; @miss: it counts as a miss (breakpoint candidates) */
	void (*sample)(void *ctx, const struct cp_sample *s, bool miss);
	/* a process exec'd or exited, after the stores took it */
	void (*proc)(void *ctx, const struct cp_proc_event *pe);
	/* every record and counter batch once handled (--record) */
	void (*record)(void *ctx, const void *data, size_t size);
	void (*counters)(void *ctx, const struct cp_insn *v, size_t n);
	void (*stacks)(void *ctx, const struct cp_stack_sample *v, size_t n);
	/* the end facts as they are now, for a report while the run goes on */
	void (*end_facts)(void *ctx, struct cp_run_end *e);
	/* breakpoint sampling's figures for the report; NULL: no such section */
	const struct cp_bp_summary *(*bp_summary)(void *ctx);
	void *ctx;
};

/* How a profile is made: its L1D, its object table, where symbols come from. */
struct cp_profile_cfg {
	struct cp_cache_level l1d; /* the L1D misses map onto */
	struct cp_objects_opts objects;
	cp_proc_describe_fn describe; /* comm and cgroup of a process; NULL: none */
	/* the symbolizer's maps (a recording's); NULL: /proc */
	cp_maps_text_fn maps_text;
	void *maps_ctx;
	bool maps_offline;		    /* maps_text is all there is: no /proc fallback */
	const struct cp_path_map *path_map; /* where the files are now; NULL: as named */
	/* a location for an ip the symbolizer cannot place (a file changed since) */
	cp_locate_fn explain;
	void *explain_ctx;
};

/*
 * The stores and what the handlers count. Open, so that the live run and the
 * report assembly reach the stores; the handlers are the only writers of the
 * stores while records flow.
 */
struct cp_profile {
	struct cp_record_ops ops;	/* the handlers below, live and offline */
	struct cp_record_counts counts; /* records cp_profile__feed()'s checks dropped */
	struct cp_profile_hooks hooks;
	struct cp_profile_cfg cfg;
	struct cp_insn_store *insns;
	struct cp_objects *objects;	/* what an address belongs to, per process */
	struct cp_object_stats *ostats; /* samples per object */
	struct cp_miss_store *misses;	/* misses per line and set */
	struct cp_shared_maps *shared;	/* shared files' line spaces */
	struct cp_seen_objects *seen;	/* heap objects as samples found them */
	struct cp_rolling *roll;	/* the last window's epochs; NULL: none */
	struct cp_timeline *timeline;	/* counts per interval; NULL: none yet */
	struct cp_stack_store *stacks;	/* counts per (process, user call stack) */
	/* ... of the interval under way only (--pprof-dir): cleared at each rotation */
	struct cp_stack_store *interval_stacks;
	/* --alloc-wrapper: frames an allocation site skips beside the built-in ones; NULL: none */
	const struct cp_alloc_wrappers *alloc_wrappers;
	struct cp_cache_level l1;	 /* the L1D misses map onto */
	struct cp_symbolizer *sym;	 /* maps snapshot at a process's first sight */
	struct cp_proc_summaries *procs; /* per process (-a's report) */
	struct cp_limits_state lim;	 /* --max-memory; limit 0 offline */
	__u64 received;
	__u64 last_sample_ns; /* the latest sample's time (the timeline's) */
	__u64 object_events;
	__u64 chunk_objects; /* objects found in glibc's chunk headers */
	__u64 execs;
	__u64 exits;
	__u64 snapshots_seen; /* the symbolizer's, at the last RSS check */
	struct cp_run_info info;
	struct cp_run_end end;
	/* a process described while a record was handled: recorded after it */
	struct cp_proc_desc_record desc;
	bool desc_pending;
};

/* A profile with the stores of @cfg and @hooks (NULL: none, offline). NULL: out of memory. */
struct cp_profile *cp_profile__new(const struct cp_profile_cfg *cfg,
				   const struct cp_profile_hooks *hooks);
void cp_profile__free(struct cp_profile *p);

/* The run's facts for the report header; the start time is the caller's. */
void cp_profile__set_info(struct cp_profile *p, const struct cp_run_info *info);
/* The run's end facts (the recording's end section, or the live run's). */
void cp_profile__set_end(struct cp_profile *p, const struct cp_run_end *end);
/* The run's facts (cp_profile__set_info(), or the recording's). */
const struct cp_run_info *cp_profile__info(const struct cp_profile *p);

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
#define CP_PROFILE_HINT_STAGES 4
void cp_profile__hint(struct cp_profile *p, const void *data, size_t size, int stage);

/*
 * The instructions not symbolized yet (their files may have waited for a
 * parse worker: symbols/parse_worker.h; a soft source's ticks without an
 * address are symbolized by the report only) asked now, once the workers
 * are settled: what their lookups find or count (a refusal, DWARF past its
 * caps) is in the report's Limits, which are read before the report's own
 * lookups. The results stay cached for the report.
 */
void cp_profile__locate_waiting(struct cp_profile *p);

/*
 * New maps or thread stacks for @pid (a replay's recording says so): the
 * object table (or with @symbols the symbolizer) reads them here.
 */
void cp_profile__maps_changed(struct cp_profile *p, pid_t pid, bool symbols);

/* One interval's counter entries into the instruction store (and the hooks'). */
void cp_profile__add_counts(struct cp_profile *p, const struct cp_insn *v, size_t n);

/* One interval's (instruction, user stack) counts into the stack store (and the hooks'). */
void cp_profile__add_stacks(struct cp_profile *p, const struct cp_stack_sample *v, size_t n);

/* The interval's stacks (interval_stacks) are done with: its epoch closed and was written. */
void cp_profile__interval_done(struct cp_profile *p);

/*
 * Calls @fn for every (process, instruction, call stack) counted over the
 * whole run (live, or the recording replayed), each once with its totals;
 * stops at, and returns, @fn's first nonzero return. For the writers of
 * call-graph profiles (pprof, folded stacks); pcs[0] is the instruction the
 * counts are charged to (a skid tick's: the access before the ticked one).
 */
int cp_profile__for_each_stack(const struct cp_profile *p, cp_stack_fn fn, void *ctx);

/*
 * What the exports draw (pprof, folded stacks, the HTML flame graphs): every
 * stack of cp_profile__for_each_stack(), then each instruction of the run
 * that no stack was counted for (a recording made before stacks; stacks the
 * maps had no room for) as the stack of itself alone, with its totals:
 * samples = loads + stores, misses, lat_sum, ticks = cp_insn_time_samples().
 * Stops at, and returns, @fn's first nonzero return; -ENOMEM.
 */
int cp_profile__for_each_sample_stack(const struct cp_profile *p, cp_stack_fn fn, void *ctx);

/* --max-memory: RSS checked when due, or at once with @now (profile/run_limits.h). */
void cp_profile__limits_tick(struct cp_profile *p, bool now);

/* Snapshots @pid's maps for symbols now (a target we were given or launched). */
void cp_profile__snapshot(struct cp_profile *p, pid_t pid);

#endif /* CP_PROFILE_H */
