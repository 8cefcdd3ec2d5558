/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tenant's file is parsed first where a crash cannot end the profiler: a
 * forked worker, made unprivileged and bounded (util/sandbox.h: no
 * capability, a user no one holds where it may, seccomp, RLIMIT_DATA at three
 * quarters of the room left under --max-memory, RLIMIT_STACK, CPU and wall
 * time), runs libelf and
 * libdw over the sealed copy (machine/target_file.h) the way the
 * symbolizer will: the start and middle of each compile unit's first
 * ranges, of every function symbol, and points across the code, described
 * by cp_sym_describe() (DWARF units, scopes, inline chains, lines), and the CFI the unwinder would
 * execute (.eh_frame and .debug_frame, unless symbols/cfi_guard.h hides it) asked at each of those
 * points. Only a copy the worker got through is given to libdw in the profiler: one whose parse
 * crashed the worker (SIGSEGV, abort), ran past its time or took more than half its memory room is
 * refused (counted, CP_TF_PARSE, or CP_TF_MEMORY), so it costs that file's symbols, never the
 * profiler.
 *
 * A verdict is kept per file content (its device, inode, size, mtime and
 * ctime: machine/copy_cache.h), so a file is parsed twice per run (once
 * here, once for real), not once per process mapping it, nor once per copy
 * when its copy is not kept; a refusal the machine may have caused, not the
 * file, is tried again (cp_pw_verdict_stands()).
 */
#ifndef CP_PARSE_WORKER_H
#define CP_PARSE_WORKER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/copy_cache.h"

/* Wall and CPU seconds a worker has for one file. */
#define CP_PW_SECONDS 10
/* Its stack: deep enough for libdw's own recursion on honest files. */
#define CP_PW_STACK_BYTES (8ull << 20)
/* The memory a worker may take without --max-memory. */
#define CP_PW_MAX_BYTES (1ull << 30)
/* Points of a module described at most (units, function symbols, then across its code). */
#define CP_PW_MAX_POINTS (1u << 18)
/* Compile units whose ranges give points, at most (and half the points). */
#define CP_PW_MAX_UNITS (1u << 16)
/*
 * A live run's pace (cp_parse_worker_pace()): how long a lookup waits for a
 * worker's verdict (a library's parse takes 5-20 ms here), and the share of
 * one CPU, in thousandths, workers' CPU time is held to.
 */
#define CP_PW_LIVE_WAIT_MS   200
#define CP_PW_LIVE_PER_MILLE 20
/*
 * The CPU seconds workers have at a live run's start: a full worker's, so
 * the first file of any size gets what it had before the budget; spent,
 * the budget fills up to it again in eight quiet minutes at that share.
 */
#define CP_PW_LIVE_START_S 10
/* Verdicts kept (least recently made let go first). */
#define CP_PW_VERDICTS 1024
/*
 * How long a refusal for time stands when the worker was starved (its CPU
 * time under half of CP_PW_SECONDS: the machine was busy, the file not
 * at fault): then the file gets another worker.
 */
#define CP_PW_RETRY_NS (60ull * 1000000000ull)
/* A refusal for memory counts as made in at least this room (one made in none stands too). */
#define CP_PW_MIN_ROOM (16ull << 20)

enum cp_pw_verdict {
	CP_PW_PASSED = 0,
	CP_PW_CRASHED, /* killed by a signal of its own fault: SIGSEGV, SIGBUS, SIGABRT, SIGSYS */
	CP_PW_TIME,    /* past its wall or CPU time */
	CP_PW_MEMORY,  /* took more than half its room, or failed for memory */
	CP_PW_FAILED,  /* the worker could not be made or bounded: the file is not parsed */
	CP_PW_WAITING, /* no verdict yet: its worker (or another's) is at work, the live
			* run's budget for workers is spent, or its worker was stopped at the
			* CPU time the budget gave it (kept: it waits until the budget holds
			* twice that); asked again later */
};

/*
 * What a worker (or the describe server, symbols/sym_server.h) exits with
 * when it could not be bounded, and when it outgrew half its room.
 */
#define CP_PW_EXIT_UNBOUNDED 97
#define CP_PW_EXIT_MEMORY    98

/*
 * The verdict on a worker that ended with wait status @status, having
 * written @said bytes of its report (it writes 8 at its start, 8 more at
 * its end) and grown its resident set by @grown bytes of the @room it was
 * allowed (RLIMIT_DATA above what it held at its start). Pure.
 */
enum cp_pw_verdict cp_pw_judge(int status, size_t said, __u64 grown, __u64 room);

/*
 * cp_pw_judge() of a worker or of the describe server forked with @room
 * left under --max-memory: its growth against what it was allowed,
 * cp_pw_allowance(@room), the one rule for both (each stops itself past
 * half that allowance too). Pure.
 */
enum cp_pw_verdict cp_pw_judge_in(int status, size_t said, __u64 grown, __u64 room);

/* A worker's verdict, and what it had to reach it. */
struct cp_pw_outcome {
	enum cp_pw_verdict v;
	__u64 room;   /* the memory room it ran in, bytes (at most CP_PW_MAX_BYTES) */
	__u64 cpu_ns; /* the CPU time it used */
	__u32 need_s; /* CP_PW_WAITING: the CPU seconds the budget must hold for the next */
};

/*
 * Whether outcome @o, reached @age_ns ago by the @tries'th worker in a row
 * to judge the file (1: the first), still stands when the room under
 * --max-memory is now @room_now bytes. A pass or a crash (the file's own
 * doing) stand for the run. Time and memory can be the machine's doing: a
 * refusal for memory stands until the room is twice what it was, and at
 * least twice CP_PW_MIN_ROOM (near its limit under -a, the profiler may
 * have too little room for libc's own debug information; a memory bomb
 * is tried again at most once per doubling); a refusal for time stands
 * when the worker had its CPU time (the file kept it busy), else for
 * CP_PW_RETRY_NS, doubled with each try after the first (a file too big
 * for a busy host is not tried every minute). "No worker" never stands
 * (it is not kept). Pure.
 */
bool cp_pw_verdict_stands(const struct cp_pw_outcome *o, unsigned int tries, __u64 age_ns,
			  __u64 room_now);

/*
 * Whether refusal @o may lift: one cp_pw_verdict_stands() lets go later
 * (memory, once there is room; time, when its worker was starved). A
 * crash, time a worker used whole, a pass and no verdict never lift. Pure.
 */
bool cp_pw_refusal_lifts(const struct cp_pw_outcome *o);

/* A verdict kept for a file's content (machine/copy_cache.h). */
struct cp_pw_kept {
	struct cp_copy_key key;
	struct cp_pw_outcome o;
	__u64 made_ns;	    /* when the worker that gave it ended (cp_now_ns()) */
	unsigned int tries; /* workers that judged the file, this one the last */
};

/* The verdicts kept, CP_PW_VERDICTS at most, the least recently made let go first. */
struct cp_pw_verdicts {
	struct cp_pw_kept k[CP_PW_VERDICTS];
	unsigned int nr;
	unsigned int next; /* the slot the next new file takes */
};

/*
 * Keeps outcome @o, made at @now_ns, for content @key in @t: in
 * its own slot (one more try: a verdict that no longer stood is
 * replaced), else in the next free or oldest one. Pure.
 */
void cp_pw_verdicts_keep(struct cp_pw_verdicts *t, const struct cp_copy_key *key,
			 const struct cp_pw_outcome *o, __u64 now_ns);

/* The verdict kept in @t for content @key; NULL when none. Pure. */
const struct cp_pw_kept *cp_pw_verdicts_find(const struct cp_pw_verdicts *t,
					     const struct cp_copy_key *key);

/*
 * The room under --max-memory a worker starting now has: read from a
 * reading of now (not of the start), CP_PW_MAX_BYTES at most.
 */
__u64 cp_pw_room(void);

/*
 * What a worker may grow by in @room: three quarters of it. The kernel
 * counts the profiler and the worker's growth (their shared pages once)
 * within the limit; a count of each process's resident set (GNU time's)
 * sees the worker's shared pages, about the profiler's, plus the growth,
 * within it too. RLIMIT_DATA bounds the heap, not the copy's pages it
 * maps: the quarter is for those and its stack. Pure.
 */
__u64 cp_pw_allowance(__u64 room);

/* "crashed", ...: what logs and tests say. */
const char *cp_pw_verdict_name(enum cp_pw_verdict v);

/*
 * Whether libdw may parse sealed copy @mfd (of the file @name, whose
 * content @file is: cp_tf_copy_keyed(); NULL or no inode: unknown, the
 * copy's own key serves) in the profiler: the verdict kept for that
 * content, else a worker's. Returns the verdict
 * (CP_PW_PASSED: yes); a worker's refusal is said in the log (a few per
 * period), each refusal counted by the caller. One worker works at a
 * time. Without cp_parse_worker_pace(), the call waits for its worker's
 * verdict. With it (a live run), it waits that long at most: a worker
 * that takes longer goes on alone, and its verdict is kept for the next
 * call about the copy; meanwhile, and while another worker is at work or
 * the budget is spent, the answer is CP_PW_WAITING (the file's symbols
 * wait, its refusal is not kept).
 */
enum cp_pw_verdict cp_parse_worker_vet(int mfd, const struct cp_copy_key *file, const char *name);

/*
 * Whether a verdict on content @file (an inode of 0: none known) stands
 * now: true with it in @v (passed, or a refusal), without a worker or a
 * copy. A file refused before is then refused again without being copied,
 * and one that passed is copied even while workers must wait.
 */
bool cp_parse_worker_known(const struct cp_copy_key *file, enum cp_pw_verdict *v);

/*
 * Whether content @file is refused now by a refusal that may lift
 * (cp_pw_refusal_lifts()): what it describes is no final answer, asked
 * again later.
 */
bool cp_parse_worker_refused_for_now(const struct cp_copy_key *file);

/*
 * Keeps outcome @o for content @file as a worker's verdict would be kept
 * (counted when it refuses): the describe server's refusals
 * (symbols/sym_server.h), so that no libdw of the profiler's takes the
 * file either.
 */
void cp_parse_worker_keep(const struct cp_copy_key *file, const struct cp_pw_outcome *o);

/*
 * The live run's pace: cp_parse_worker_vet() waits @wait_ms at most for a
 * worker's verdict (a big file's parse of seconds no longer stops the
 * records' drain), and workers' CPU time (with the describe server's
 * answering requests: cp_parse_worker_lend()) is held to @share_per_mille
 * thousandths of the wall time from now on, after a first
 * CP_PW_LIVE_START_S seconds (a tenant mapping new big files, one after
 * another, costs the host that share at most; its files, and others'
 * meanwhile, wait). A worker gets the whole seconds the budget holds when
 * it starts, CP_PW_SECONDS at most.
 */
void cp_parse_worker_pace(unsigned int wait_ms, unsigned int share_per_mille);

/*
 * The describe servers' requests (symbols/sym_server.h) spend the
 * workers' budget by the same rule: cp_parse_worker_lend() gives the whole
 * CPU seconds a request of server @slot (below CP_PW_LOANS) starting now
 * may take (what the budget holds beyond a worker at work's seconds,
 * @most_s at most; 0: the file waits, as for a worker), held for it, and
 * for no worker, until cp_parse_worker_spent() spends the @cpu_ns of CPU
 * time it took (the kernel's count of the server's). The two servers'
 * loans are not held against each other: a walk's second (the walking
 * server's, short requests) may overlap what a describe was lent, the
 * budget then spent past nothing by at most the walk's CPU time, repaid
 * from what it earns next. Without cp_parse_worker_pace(), @most_s,
 * nothing spent.
 */
#define CP_PW_LOANS 2
unsigned int cp_parse_worker_lend(unsigned int slot, unsigned int most_s);
void cp_parse_worker_spent(unsigned int slot, __u64 cpu_ns);

/*
 * Whether a copy without a verdict would wait now: a worker is at work, or
 * the budget is spent. Then a tenant's new file is not even copied
 * (symbols/elf_guard.h).
 */
bool cp_parse_worker_must_wait(void);

/* A lookup that waited for a worker's verdict (symbols/elf_guard.c): the report's count. */
void cp_parse_worker_waited(void);

/*
 * Waits for the worker at work, if any, to end; later calls wait for their
 * workers' verdicts (the run's last outputs), the budget still held.
 */
void cp_parse_worker_settle(void);

/* Workers' CPU time, held to a share of the wall time (cp_parse_worker_pace()). */
struct cp_pw_budget {
	__s64 tokens_ns; /* the CPU time workers may still use; below 0: overspent */
	__u64 at_ns;	 /* when it was refilled last (0: never) */
};

/*
 * Refills @b for the wall time since its last refill, up to @now_ns, at
 * @per_mille thousandths of it, up to CP_PW_SECONDS of CPU time. The
 * first refill only starts the clock. Pure.
 */
void cp_pw_budget_refill(struct cp_pw_budget *b, __u64 now_ns, unsigned int per_mille);

/*
 * The whole seconds of CPU time a worker starting now may take: 0 (none
 * may start) under one, at most CP_PW_SECONDS. Pure.
 */
unsigned int cp_pw_budget_cpu_s(const struct cp_pw_budget *b);

/*
 * What a worker does with the ELF file at @fd (not taken over): returns
 * the points described, -ENOEXEC when it is no ELF file libdw takes, or
 * -ENOMEM once the resident set's peak (getrusage()) passed @max_rss
 * bytes (0: no bound), looked at each point: a parse that has taken
 * half its room stops there rather than retry at its limit. Runs in the
 * caller's process: for the worker and for tests.
 */
long cp_pw_exercise(int fd, __u64 max_rss);

/*
 * Workers that ended, refusals (verdicts other than CP_PW_PASSED and
 * CP_PW_WAITING), and lookups that waited (cp_parse_worker_waited()), since
 * the start.
 */
void cp_parse_worker_stats(__u64 *workers, __u64 *refused, __u64 *waited);

#endif /* CP_PARSE_WORKER_H */
