/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tenant's file is parsed first where a crash cannot end the profiler: a
 * forked worker, made unprivileged and bounded (util/sandbox.h: no
 * capability, the user nobody where it may, seccomp, RLIMIT_DATA at three
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
 * A verdict is kept per copy (the memfd's inode: machine/copy_cache.h
 * hands out one copy per file content), so a file is parsed twice per run
 * (once here, once for real), not once per process mapping it; a refusal
 * the machine may have caused, not the file, is tried again
 * (cp_pw_verdict_stands()).
 */
#ifndef CP_PARSE_WORKER_H
#define CP_PARSE_WORKER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

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
};

/*
 * The verdict on a worker that ended with wait status @status, having
 * written @said bytes of its report (it writes 8 at its start, 8 more at
 * its end) and grown its resident set by @grown bytes of the @room it was
 * allowed (RLIMIT_DATA above what it held at its start). Pure.
 */
enum cp_pw_verdict cp_pw_judge(int status, size_t said, __u64 grown, __u64 room);

/* A worker's verdict, and what it had to reach it. */
struct cp_pw_outcome {
	enum cp_pw_verdict v;
	__u64 room;   /* the memory room it ran in, bytes (at most CP_PW_MAX_BYTES) */
	__u64 cpu_ns; /* the CPU time it used */
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

/* "crashed", ...: what logs and tests say. */
const char *cp_pw_verdict_name(enum cp_pw_verdict v);

/*
 * Whether libdw may parse sealed copy @mfd (of the file @name) in the
 * profiler: the kept verdict, else a worker's. Returns the verdict
 * (CP_PW_PASSED: yes); a worker's refusal is said in the log (a few per
 * period), each refusal counted by the caller.
 */
enum cp_pw_verdict cp_parse_worker_vet(int mfd, const char *name);

/*
 * What a worker does with the ELF file at @fd (not taken over): returns
 * the points described, -ENOEXEC when it is no ELF file libdw takes, or
 * -ENOMEM once the resident set's peak (getrusage()) passed @max_rss
 * bytes (0: no bound), looked at each point: a parse that has taken
 * half its room stops there rather than retry at its limit. Runs in the
 * caller's process: for the worker and for tests.
 */
long cp_pw_exercise(int fd, __u64 max_rss);

/* Workers made and verdicts other than CP_PW_PASSED, since the start. */
void cp_parse_worker_stats(__u64 *workers, __u64 *refused);

#endif /* CP_PARSE_WORKER_H */
