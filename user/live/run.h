/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live run of one session: drains the ring buffer into a profile,
 * collects the per-instruction counters and applies the sample-rate cap
 * every interval, keeps the rolling window, drives breakpoint sampling, the
 * soft source's decoding and the allocation probes of new processes, writes
 * the recording, answers SIGUSR1 and SIGHUP through callbacks, and ends when
 * the duration is over, a stop signal arrived, or the targets are gone.
 * It is the profile's only source of hooks (profile/profile.h).
 */
#ifndef CP_RUN_H
#define CP_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#include "machine/geometry.h"
#include "profile/profile.h"
#include "profile/run_facts.h"
#include "record/recorder.h"
#include "live/session.h"
#include "util/caps.h"

/*
 * The capabilities the run loop keeps once it is set up; the rest are
 * dropped (cli/main.c, util/privs.h; docs/security.md, "Privileges"). The
 * loop follows processes that start later and reads what they map:
 *   CAP_BPF, CAP_PERFMON	per-process breakpoint events with their BPF
 *				program, and the allocation probes' links
 *   CAP_SYS_ADMIN		perf_event_open of a uprobe (required since the
 *				2025 fix "perf: Require CAP_SYS_ADMIN for
 *				uprobes"), /proc/PID/map_files
 *   CAP_SYS_PTRACE		other users' /proc/PID/maps, mem, root and
 *				process_vm_readv (glibc's chunk headers)
 *   CAP_DAC_READ_SEARCH	their binaries and debug info that are not
 *				world-readable
 * CAP_SYS_RESOURCE (RLIMIT_MEMLOCK, RLIMIT_NOFILE) is only needed while
 * loading; CAP_DAC_OVERRIDE, CAP_KILL, CAP_SETUID and the rest never.
 */
#define CP_LIVE_CAPS                                                                               \
	(CP_CAP(CAP_BPF) | CP_CAP(CAP_PERFMON) | CP_CAP(CAP_SYS_ADMIN) | CP_CAP(CAP_SYS_PTRACE) |  \
	 CP_CAP(CAP_DAC_READ_SEARCH))

#define CP_TICK_MS 100 /* target liveness and signal checks */
/*
 * A turn that records woke this soon after the last turn's work reads them,
 * attaches what they ask and leaves its ticks (the allocation probes' counts
 * and guard, the targets' CPU time, the soft source's pending instructions,
 * the stacks' purge, the memory guard's check) to a later turn: under -a
 * every exec forces a wakeup, 70 a second and more in a build, and those
 * reads were a sixth of the profiler's system calls. Every turn whose poll
 * ran out does its work, and records that keep waking the loop get it done
 * at least once per CP_TURN_WORK_MS and their own spacing.
 */
#define CP_TURN_WORK_MS 25

struct cp_live;

/* Called with the profile: SIGUSR1, each interval, SIGHUP. @ctx from cp_live_cfg. */
typedef void (*cp_report_fn)(struct cp_profile *p, void *ctx);

/* How a live run goes and when it ends. */
struct cp_live_cfg {
	__u32 duration_s;	/* 0: until the targets end or a signal */
	__u32 interval_s;	/* counters, rate cap, window epochs */
	__u32 window_s;		/* --window-seconds */
	__u32 max_sample_rate;	/* samples per second per CPU (rate cap) */
	__u64 max_memory_bytes; /* --max-memory */
	const char *sysfs_root;
	__u32 bp_expiry_ms; /* breakpoint sampling */
	__u32 max_bp_rate;
	bool bp_silent; /* max_bp_rate is 0 because breakpoints never fire here */
	/*
	 * the overhead budget's: the hit rate follows the targets' CPU use
	 * (cp_budget_bp_rate(), each second), max_bp_rate at most
	 */
	bool bp_rate_follows_cpu;
	/*
	 * True once the targets are gone, with the end reason in @reason;
	 * NULL: they never end (-a).
	 */
	bool (*targets_gone)(void *ctx, char *reason, size_t sz);
	/* the targets' CPU time so far (-a: the machine's busy time); NULL: not known */
	__u64 (*targets_cpu_ns)(void *ctx);
	cp_report_fn on_report;	  /* SIGUSR1; NULL: ignored */
	cp_report_fn on_interval; /* each interval, after the stores took it all */
	cp_report_fn on_reopen;	  /* SIGHUP: output files reopened */
	void *ctx;		  /* of every callback */
};

/*
 * A live run over @s (loaded and attached), its profile mapping misses onto
 * the L1D of @geo; with @rec (--record, owned from here on) everything the
 * profile consumes is written down too. Returns 0 or a negative errno with
 * @err set.
 */
int cp_live__new(struct cp_session *s, const struct cp_geometry *geo, struct cp_recorder *rec,
		 struct cp_live **out, char *err, size_t err_sz);
void cp_live__free(struct cp_live *l);

/* The profile the run feeds. */
struct cp_profile *cp_live__profile(struct cp_live *l);

/*
 * The run's facts for the report header (and the recording's header, written
 * now), with the periods the events were opened with. Starts the clock.
 */
void cp_live__set_info(struct cp_live *l, const struct cp_run_info *info);

/*
 * --max-memory (@max_memory_bytes) in force: the guard's limit, and the
 * copies and snapshots admitted under it. Before the first snapshots: with
 * --record they write build-ids, and the allocator's search reads files,
 * through copies a limit of 0 admitted whatever their size (a tenant's
 * big-endian file took the profiler to 353 MiB under --max-memory 256M).
 */
void cp_live__limit_memory(struct cp_live *l, __u64 max_memory_bytes);

/*
 * Runs until the end condition of @cfg. Returns 0 (the reason goes into
 * the report) or a negative errno with @err set. cp_live__limit_memory()
 * comes first.
 */
int cp_live__run(struct cp_live *l, const struct cp_live_cfg *cfg, char *err, size_t err_sz);

/* Moves everything pending (ring buffer, counter maps) into the profile. */
void cp_live__collect(struct cp_live *l);

/*
 * After cp_live__run() and the final report: with --record, writes the end
 * facts (the BPF counters and drops as the run ended) and closes the
 * recording, which then holds the maps the report's lookups read. Returns 0,
 * or a negative errno with @err set when the recording could not be written.
 */
int cp_live__finish(struct cp_live *l, char *err, size_t err_sz);

#endif /* CP_RUN_H */
