// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The process's log (util/log.h): the level, the journal, and the writes to stderr. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/log.h"

#define CP_LOG_FILES (CP_LOG_DEBUG + 1)

static struct {
	pthread_mutex_t lock;
	enum cp_log_level level;
	bool journal;
	unsigned long long period_ns, next_ns; /* the summaries' period; its end */
	struct cp_log_limit *limits;	       /* registered, said at a period's end */
	struct cp_log_tally *tallies;
	FILE *files[CP_LOG_FILES];
} cp_log_st = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.level = CP_LOG_WARNING,
};

void cp_log_init(enum cp_log_level level)
{
	struct stat st;

	pthread_mutex_lock(&cp_log_st.lock);
	cp_log_st.level = level;
	cp_log_st.journal =
		!fstat(STDERR_FILENO, &st) &&
		cp_log_journal_match(getenv("JOURNAL_STREAM"), (unsigned long long)st.st_dev,
				     (unsigned long long)st.st_ino);
	pthread_mutex_unlock(&cp_log_st.lock);
}

bool cp_log_enabled(enum cp_log_level level)
{
	return level <= cp_log_st.level;
}

bool cp_log_to_journal(void)
{
	return cp_log_st.journal;
}

/* One write per line: lines of two threads never mix. Under the lock. */
static void put_line(enum cp_log_level level, const char *text)
{
	char line[CP_LOG_LINE_MAX];
	size_t n = cp_log_format(cp_log_st.journal, level, text, line, sizeof(line));
	ssize_t w;

	for (size_t off = 0; off < n; off += (size_t)w) {
		w = write(STDERR_FILENO, line + off, n - off);
		if (w < 0 && errno == EINTR)
			w = 0;
		else if (w <= 0)
			return;
	}
}

static void vlog(enum cp_log_level level, const char *fmt, va_list ap)
{
	char text[CP_LOG_LINE_MAX];
	int saved = errno;

	if (!cp_log_enabled(level))
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	pthread_mutex_lock(&cp_log_st.lock);
	put_line(level, text);
	pthread_mutex_unlock(&cp_log_st.lock);
	errno = saved;
}

void cp_log(enum cp_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void cp_log_limited(struct cp_log_limit *l, const char *fmt, ...)
{
	char text[CP_LOG_LINE_MAX];
	va_list ap;
	int saved = errno;

	if (!cp_log_enabled(l->level))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&cp_log_st.lock);
	if (!l->registered) {
		l->registered = true;
		l->next = cp_log_st.limits;
		cp_log_st.limits = l;
	}
	if (cp_log_limit_pass(l))
		put_line(l->level, text);
	else
		memcpy(l->last, text, strnlen(text, sizeof(l->last) - 1) + 1);
	l->last[sizeof(l->last) - 1] = '\0';
	pthread_mutex_unlock(&cp_log_st.lock);
	errno = saved;
}

void cp_log_tally(struct cp_log_tally *t, unsigned int why)
{
	pthread_mutex_lock(&cp_log_st.lock);
	if (!t->registered) {
		t->registered = true;
		t->next = cp_log_st.tallies;
		cp_log_st.tallies = t;
	}
	cp_log_tally_count(t, why);
	pthread_mutex_unlock(&cp_log_st.lock);
}

void cp_log_text(enum cp_log_level level, const char *text)
{
	char line[CP_LOG_LINE_MAX];

	if (!cp_log_enabled(level) || !text)
		return;
	pthread_mutex_lock(&cp_log_st.lock);
	while (*text) {
		size_t n = strcspn(text, "\n");
		size_t k = n < sizeof(line) - 1 ? n : sizeof(line) - 1;

		memcpy(line, text, k);
		line[k] = '\0';
		for (size_t i = 0; i < k; i++)
			if (line[i] == '\t')
				line[i] = ' ';
		put_line(level, line);
		text += n + (text[n] == '\n');
	}
	pthread_mutex_unlock(&cp_log_st.lock);
}

/* --- cp_log_file(): a FILE * whose lines are said ------------------------- */

struct log_cookie {
	enum cp_log_level level;
	char buf[CP_LOG_LINE_MAX];
	size_t len;
};

static void cookie_line(struct log_cookie *c)
{
	static const char me[] = "cacheperf-bpf: ", warn[] = "warning: ";
	enum cp_log_level level = c->level;
	const char *text = c->buf;

	c->buf[c->len] = '\0';
	if (!strncmp(text, me, sizeof(me) - 1))
		text += sizeof(me) - 1;
	if (!strncmp(text, warn, sizeof(warn) - 1)) {
		text += sizeof(warn) - 1;
		if (level > CP_LOG_WARNING)
			level = CP_LOG_WARNING;
	}
	cp_log(level, "%s", text);
	c->len = 0;
}

static ssize_t cookie_write(void *ctx, const char *data, size_t size)
{
	struct log_cookie *c = ctx;

	for (size_t i = 0; i < size; i++) {
		if (data[i] == '\n') {
			cookie_line(c);
			continue;
		}
		/* a line longer than a log line is cut */
		if (c->len < sizeof(c->buf) - 1)
			c->buf[c->len++] = data[i];
	}
	return (ssize_t)size;
}

static int cookie_close(void *ctx)
{
	struct log_cookie *c = ctx;

	if (c->len)
		cookie_line(c);
	free(c);
	return 0;
}

FILE *cp_log_file(enum cp_log_level level)
{
	cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
	struct log_cookie *c;
	FILE *f;

	if (level < CP_LOG_ERR || level > CP_LOG_DEBUG)
		level = CP_LOG_DEBUG;
	pthread_mutex_lock(&cp_log_st.lock);
	f = cp_log_st.files[level];
	if (!f && (c = calloc(1, sizeof(*c)))) {
		c->level = level;
		f = fopencookie(c, "w", io);
		if (f)
			setvbuf(f, NULL, _IOLBF, 0);
		else
			free(c);
		cp_log_st.files[level] = f;
	}
	pthread_mutex_unlock(&cp_log_st.lock);
	return f ? f : stderr;
}

/* --- the period's end ------------------------------------------------------ */

void cp_log_set_period(unsigned int seconds, unsigned long long now_ns)
{
	pthread_mutex_lock(&cp_log_st.lock);
	cp_log_st.period_ns =
		(unsigned long long)(seconds ? seconds : CP_LOG_PERIOD_S) * 1000000000ull;
	cp_log_st.next_ns = now_ns + cp_log_st.period_ns;
	pthread_mutex_unlock(&cp_log_st.lock);
}

/* Under the lock. */
static void end_period(void)
{
	char text[CP_LOG_LINE_MAX];

	for (struct cp_log_tally *t = cp_log_st.tallies; t; t = t->next)
		if (cp_log_tally_end(t, text, sizeof(text)) && cp_log_enabled(t->level))
			put_line(t->level, text);
	for (struct cp_log_limit *l = cp_log_st.limits; l; l = l->next)
		if (cp_log_limit_end(l, text, sizeof(text)))
			put_line(l->level, text);
}

void cp_log_tick(unsigned long long now_ns)
{
	pthread_mutex_lock(&cp_log_st.lock);
	if (cp_log_st.period_ns && now_ns >= cp_log_st.next_ns) {
		end_period();
		while (cp_log_st.next_ns <= now_ns)
			cp_log_st.next_ns += cp_log_st.period_ns;
	}
	pthread_mutex_unlock(&cp_log_st.lock);
}

void cp_log_flush(void)
{
	pthread_mutex_lock(&cp_log_st.lock);
	end_period();
	pthread_mutex_unlock(&cp_log_st.lock);
}
