/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profiler's one voice on stderr (docs/logs.md). Every message has a
 * level; those above --log-level are dropped. A message is one line: the
 * whole text goes through cp_printable(), so a name a tenant chose cannot
 * break it, forge another line or reach the reader's terminal. On a
 * terminal a line reads "cacheperf-bpf: [warning: ]TEXT"; when stderr is
 * the journal (JOURNAL_STREAM names it) "<N>TEXT", the sd-daemon prefix
 * journald files the line at priority N under.
 *
 * What repeats is bounded: a cp_log_limit lets a few lines of one kind
 * through per period and says how many more it held back; a cp_log_tally
 * counts per-process events by reason and says them in one line per
 * period. cp_log_tick() ends a period (--interval, else CP_LOG_PERIOD_S).
 *
 * The first half below is pure (what a line looks like, what a limit or a
 * tally lets through and says); the second half writes to stderr and keeps
 * the process's state, under a lock (libbpf may print from any thread).
 */
#ifndef CP_LOG_H
#define CP_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The syslog priorities (sd-daemon.h SD_ERR .. SD_DEBUG): the journal prefix is the level. */
enum cp_log_level {
	CP_LOG_ERR = 3,	    /* the run, or what was asked, failed */
	CP_LOG_WARNING = 4, /* the run goes on, something is lost or wrong */
	CP_LOG_NOTICE = 5,  /* what the run decided, summaries of what repeats */
	CP_LOG_INFO = 6,    /* -v: each process, probe and decision */
	CP_LOG_DEBUG = 7,   /* -vv: libbpf's own messages, the verifier log */
};

#define CP_LOG_LINE_MAX	  1024 /* bytes of one line, prefix and newline included */
#define CP_LOG_TALLY_WHYS 4    /* reasons one tally counts */
#define CP_LOG_PERIOD_S	  10   /* summaries without --interval: this often */

/* --- pure -------------------------------------------------------------------- */

/* A level's name ("err", "warning", ..., "debug"; "error", "warn", 3..7) to @out. 0 or -EINVAL. */
int cp_log_level_parse(const char *s, enum cp_log_level *out);
const char *cp_log_level_name(enum cp_log_level level);

/*
 * True when @journal_stream (JOURNAL_STREAM's value, "DEV:INODE" in
 * decimal) names the file @dev and @ino: stderr is then the journal. An
 * inherited variable whose stream was redirected elsewhere names another
 * file, as systemd.exec(5) documents.
 */
bool cp_log_journal_match(const char *journal_stream, unsigned long long dev,
			  unsigned long long ino);

/*
 * One line of @text at @level into @buf (@sz bytes, at least 8): the prefix
 * (@journal: "<N>"; else "cacheperf-bpf: ", and "warning: " for a warning),
 * @text with every byte cp_printable() rejects, a newline included, made
 * '?' (a trailing newline is dropped), then a newline even when cut.
 * Returns the line's length.
 */
size_t cp_log_format(bool journal, enum cp_log_level level, const char *text, char *buf, size_t sz);

/*
 * Lines of one kind (a failure that may repeat for every process): @burst
 * per period pass, the others are held back and counted. Define one per
 * call site: static struct cp_log_limit x = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 3);
 */
struct cp_log_limit {
	enum cp_log_level level;
	unsigned int burst;		/* lines per period */
	unsigned int said;		/* lines this period */
	unsigned long long held;	/* lines held back this period */
	char last[CP_LOG_LINE_MAX / 2]; /* the last one held back */
	struct cp_log_limit *next;	/* the registered ones, for the period's end */
	bool registered;
};
#define CP_LOG_LIMIT_INIT(lvl, n)                                                                  \
	{                                                                                          \
		.level = (lvl), .burst = (n)                                                       \
	}

/* True when the next line of @l may be said now; else it counts as held back. */
bool cp_log_limit_pass(struct cp_log_limit *l);

/*
 * The end of a period: when lines were held back, the last one and
 * "(N more)" (N: the others held back) into @buf; a new period. Returns
 * the text's length, 0 when there is nothing to say.
 */
size_t cp_log_limit_end(struct cp_log_limit *l, char *buf, size_t sz);

/*
 * Per-process events of one kind counted by reason, said once a period:
 * "SUBJECT for 18 processes: 17 WHY0; 1 WHY1". Define one per kind:
 * static struct cp_log_tally t = { .level = CP_LOG_NOTICE, .subject = "...",
 *                                  .why = { "...", "..." } };
 */
struct cp_log_tally {
	enum cp_log_level level;
	const char *subject;
	const char *why[CP_LOG_TALLY_WHYS];
	unsigned long long n[CP_LOG_TALLY_WHYS];
	unsigned long long total; /* of the whole run */
	struct cp_log_tally *next;
	bool registered;
};

/* Counts one event for reason @why (an index in ->why). */
void cp_log_tally_count(struct cp_log_tally *t, unsigned int why);

/* The period's line into @buf and a new period. Returns its length, 0 when nothing happened. */
size_t cp_log_tally_end(struct cp_log_tally *t, char *buf, size_t sz);

/* --- the process's log ----------------------------------------------------- */

/*
 * Sets the level and looks whether stderr is the journal. Before it, the
 * level is warning and lines have the terminal prefix.
 */
void cp_log_init(enum cp_log_level level);
bool cp_log_enabled(enum cp_log_level level);
bool cp_log_to_journal(void);

void cp_log(enum cp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define cp_err(...)    cp_log(CP_LOG_ERR, __VA_ARGS__)
#define cp_warn(...)   cp_log(CP_LOG_WARNING, __VA_ARGS__)
#define cp_notice(...) cp_log(CP_LOG_NOTICE, __VA_ARGS__)
#define cp_info(...)   cp_log(CP_LOG_INFO, __VA_ARGS__)
#define cp_debug(...)  cp_log(CP_LOG_DEBUG, __VA_ARGS__)

/* A line through @l (registered for the period's end on first use). */
void cp_log_limited(struct cp_log_limit *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Counts an event in @t (registered for the period's end on first use). */
void cp_log_tally(struct cp_log_tally *t, unsigned int why);

/*
 * @text of another voice (libbpf) at @level: one line per line of it, each
 * with the prefix; tabs become spaces.
 */
void cp_log_text(enum cp_log_level level, const char *text);

/*
 * A stream for code that writes its messages to a FILE *: each line is
 * said at @level (a leading "cacheperf-bpf: " is dropped; "warning: " after
 * it makes the line a warning). Lives as long as the process.
 */
FILE *cp_log_file(enum cp_log_level level);

/* Summaries every @seconds (0: CP_LOG_PERIOD_S) from @now_ns. */
void cp_log_set_period(unsigned int seconds, unsigned long long now_ns);

/* Says the period's summaries and held-back counts when it is over at @now_ns. */
void cp_log_tick(unsigned long long now_ns);

/* Says them now (the run's end). */
void cp_log_flush(void);

#endif /* CP_LOG_H */
