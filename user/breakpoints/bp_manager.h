/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The breakpoint manager's decisions (paper §3.3), pure: which instructions
 * to watch, when to let a watched one go, and how many slots and hits it
 * may use. user/live/bp_sampler.* carries the decisions out (perf events, the
 * bp_insns map) and reports back what happened.
 *
 *  - Susceptible instructions come from the forwarded misses: an
 *    instruction qualifies with CP_BPM_MIN_RUN consecutive misses on one
 *    CPU (no other instruction's miss between them), or with CP_BPM_PILE
 *    misses on one L1 set within CP_BPM_PILE_WINDOW_NS. Qualified ones are
 *    ranked by impact: their sampled misses (the instruction store's count
 *    when it knows more), then the misses of their set in the miss store.
 *    Sources without hit/miss information (soft: every sample an access
 *    weighted by time) set by_time: an instruction also qualifies with
 *    CP_BPM_TIME_PPM of the samples noted so far (at least CP_BPM_MIN_RUN
 *    of them), and impact is its time samples; at the cap a new one
 *    replaces the coldest unqualified candidate.
 *  - Slots: CP_BPM_SLOTS per domain, a domain being a process (per-thread
 *    events: each task has 4 debug registers) or the whole machine
 *    (per-CPU events). ENOSPC (a debugger, another profiler) lowers the
 *    domain's limit to what it holds for CP_BPM_RETRY_NS, then the full
 *    count is tried again; the run never fails for it.
 *  - Expiry: a watched instruction is let go when BPF says it is full or
 *    settled, when it saw no hit for the expiry time, or after
 *    CP_BPM_LIFETIME_EXPIRIES expiry times in all (a slow instruction must
 *    not hold a slot forever). One that expired with fewer than
 *    CP_BP_SETTLE_RUN accesses may be tried again, CP_BPM_MAX_TRIES times.
 *  - Budget: at most max_rate hits per second. Arming reserves a full
 *    history (CP_BP_HISTORY hits) of the second's budget; once the hits of
 *    the second reach it, everything armed is let go early.
 *
 * Bounded: CP_BPM_MAX_CANDIDATES instructions tracked; stale ones are
 * pruned, new ones beyond the cap counted as dropped.
 */
#ifndef CP_BP_MANAGER_H
#define CP_BP_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/breakpoint.h"
#include "profile/insn_store.h"
#include "profile/miss_store.h"

#define CP_BPM_SLOTS		 4 /* x86 debug registers per task and per CPU */
#define CP_BPM_MAX_CANDIDATES	 256
#define CP_BPM_MIN_RUN		 4	      /* consecutive misses of one instruction on one CPU */
#define CP_BPM_PILE		 8	      /* misses of one instruction on one set ... */
#define CP_BPM_PILE_WINDOW_NS	 100000000ull /* ... within 100 ms */
#define CP_BPM_RETRY_NS		 1000000000ull	/* after ENOSPC: fewer slots for 1 s */
#define CP_BPM_LIFETIME_EXPIRIES 10		/* armed at most 10 expiry times */
#define CP_BPM_MAX_TRIES	 3		/* arming attempts of an instruction seen idle */
#define CP_BPM_STALE_NS		 10000000000ull /* forget candidates untouched for 10 s */
#define CP_BPM_EXPIRY_MS_DEFAULT 100		/* paper §3.3 */
#define CP_BPM_RATE_DEFAULT	 2000		/* hits/s: ~2 % of a CPU at ~10 µs a hit */
#define CP_BPM_MAX_CPUS		 256   /* CPUs whose last miss is remembered (others share) */
#define CP_BPM_MAX_DOMAINS	 16    /* domains with a lowered slot limit at once */
#define CP_BPM_TIME_PPM		 10000 /* by_time: 1 % of the time samples, the classifier's filter */

struct cp_bp_manager_cfg {
	__u64 expiry_ns; /* no hit for this long: let go (--bp-expiry) */
	__u32 max_rate;	 /* hits per second (--max-bp-rate), > 0 */
	bool per_cpu;	 /* per-CPU events: one slot domain for every process */
	bool by_time;	 /* samples are time ticks on accesses (soft): qualify by time share */
};

/* Why a watched instruction was let go. */
enum cp_bp_manager_reason {
	CP_BPM_KEEP = 0, /* not let go */
	CP_BPM_FULL,	 /* CP_BP_HISTORY accesses collected */
	CP_BPM_SETTLED,	 /* settled early as a conflict (CP_REC_BP) */
	CP_BPM_IDLE,	 /* no hit for the expiry time */
	CP_BPM_LIFETIME, /* armed for CP_BPM_LIFETIME_EXPIRIES expiry times */
	CP_BPM_BUDGET,	 /* over --max-bp-rate this second */
	CP_BPM_GONE,	 /* its process exited or exec'd, or the run ended */
	CP_BPM_REASON_NR,
};

/* What the BPF entry of a watched instruction says (struct cp_bp_insn). */
struct cp_bp_manager_view {
	__u32 state;	/* enum cp_bp_state */
	__u32 recorded; /* accesses in the history */
	__u64 last_ns;	/* latest hit, 0: none */
};

/* An instruction to arm: cp_bp_manager__next(). */
struct cp_bp_manager_pick {
	__u32 tgid;
	__u64 ip;
	__u64 impact; /* its sampled misses */
};

struct cp_bp_manager_stats {
	__u64 hits;			  /* breakpoint hits (BPF) */
	__u64 armed;			  /* instructions armed */
	__u64 released[CP_BPM_REASON_NR]; /* let go, by reason */
	__u64 skipped;	   /* qualified, but not armable: no computable operand, gone */
	__u64 enospc;	   /* arming refused for want of slots: retried later */
	__u64 dropped;	   /* candidates not tracked: table full */
	__u64 over_budget; /* seconds in which the budget was reached */
	__u32 watching;	   /* armed now */
	bool off;	   /* given up: breakpoints cannot be opened here */
};

struct cp_bp_manager;

/* A manager with @cfg (copied); NULL when out of memory or @cfg is unusable. */
struct cp_bp_manager *cp_bp_manager__new(const struct cp_bp_manager_cfg *cfg);
void cp_bp_manager__free(struct cp_bp_manager *m);

/* One forwarded miss of (@tgid, @ip) at @addr on L1 set @set, seen on @cpu at @now_ns. */
void cp_bp_manager__note_miss(struct cp_bp_manager *m, __u32 tgid, __u32 cpu, __u64 ip, __u32 set,
			      __u64 now_ns);

/* The running total of breakpoint hits (bp_stats.hits) at @now_ns: the budget's input. */
void cp_bp_manager__hits(struct cp_bp_manager *m, __u64 hits_total, __u64 now_ns);

/* The budget from now on: @max_rate hits per second (> 0; the overhead budget lowers it). */
void cp_bp_manager__set_rate(struct cp_bp_manager *m, __u32 max_rate);

/*
 * The best qualified instruction that may be armed at @now_ns, given the
 * free slots of its domain, the budget and the retry times; @insns and
 * @misses (either may be NULL) refine the ranking. Returns true with @out
 * set; the caller must answer with cp_bp_manager__armed().
 */
bool cp_bp_manager__next(struct cp_bp_manager *m, const struct cp_insn_store *insns,
			 const struct cp_miss_store *misses, __u64 now_ns,
			 struct cp_bp_manager_pick *out);

/*
 * The outcome of arming @pick: 0 (watched from now), -ENOSPC (no slot:
 * the domain's limit drops, retried later), -EINVAL (no computable
 * operand), -ESRCH / -ENOENT (process or code gone), or another negative
 * errno. Returns true when breakpoints cannot work on this machine at all
 * (the manager is off: cp_bp_manager__next() returns false from then on).
 */
bool cp_bp_manager__armed(struct cp_bp_manager *m, const struct cp_bp_manager_pick *pick,
			  int result, __u64 now_ns);

/*
 * Whether watched (@tgid, @ip), whose BPF entry reads @v, is to be let go
 * at @now_ns, and why (CP_BPM_KEEP: not yet).
 */
enum cp_bp_manager_reason cp_bp_manager__check(const struct cp_bp_manager *m, __u32 tgid, __u64 ip,
					       const struct cp_bp_manager_view *v, __u64 now_ns);

/*
 * (@tgid, @ip) was disarmed for @reason with @recorded accesses. It is
 * done, unless it expired with too few accesses to judge and has tries
 * left: then it may be armed again after the pile window.
 */
void cp_bp_manager__released(struct cp_bp_manager *m, __u32 tgid, __u64 ip,
			     enum cp_bp_manager_reason reason, __u32 recorded, __u64 now_ns);

/* Forgets every candidate of process @tgid (exit, exec). Let its armed ones go first. */
void cp_bp_manager__forget(struct cp_bp_manager *m, __u32 tgid);

/* Drops candidates untouched since CP_BPM_STALE_NS before @now_ns (armed ones stay). */
void cp_bp_manager__prune(struct cp_bp_manager *m, __u64 now_ns);

void cp_bp_manager__stats(const struct cp_bp_manager *m, struct cp_bp_manager_stats *out);

/* "full", "settled as conflict", "idle", ... */
const char *cp_bp_manager_reason_name(enum cp_bp_manager_reason r);

#endif /* CP_BP_MANAGER_H */
