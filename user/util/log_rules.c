// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pure half of util/log.h: levels, the line's form, limits and tallies. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/log.h"
#include "util/printable.h"

static const struct {
	const char *name;
	enum cp_log_level level;
} cp_log_names[] = {
	{"err", CP_LOG_ERR},	  {"error", CP_LOG_ERR},     {"warning", CP_LOG_WARNING},
	{"warn", CP_LOG_WARNING}, {"notice", CP_LOG_NOTICE}, {"info", CP_LOG_INFO},
	{"debug", CP_LOG_DEBUG},
};

int cp_log_level_parse(const char *s, enum cp_log_level *out)
{
	if (!s)
		return -EINVAL;
	/* the journal's numbers, as journalctl -p takes them */
	if (s[0] >= '3' && s[0] <= '7' && !s[1]) {
		*out = (enum cp_log_level)(s[0] - '0');
		return 0;
	}
	for (size_t i = 0; i < sizeof(cp_log_names) / sizeof(cp_log_names[0]); i++) {
		if (!strcasecmp(s, cp_log_names[i].name)) {
			*out = cp_log_names[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

const char *cp_log_level_name(enum cp_log_level level)
{
	switch (level) {
	case CP_LOG_ERR:
		return "err";
	case CP_LOG_WARNING:
		return "warning";
	case CP_LOG_NOTICE:
		return "notice";
	case CP_LOG_INFO:
		return "info";
	case CP_LOG_DEBUG:
		return "debug";
	}
	return "?";
}

bool cp_log_journal_match(const char *journal_stream, unsigned long long dev,
			  unsigned long long ino)
{
	unsigned long long d, i;
	char *end;

	if (!journal_stream || !*journal_stream)
		return false;
	errno = 0;
	d = strtoull(journal_stream, &end, 10);
	if (errno || end == journal_stream || *end != ':')
		return false;
	journal_stream = end + 1;
	i = strtoull(journal_stream, &end, 10);
	if (errno || end == journal_stream || *end)
		return false;
	return d == dev && i == ino;
}

size_t cp_log_format(bool journal, enum cp_log_level level, const char *text, char *buf, size_t sz)
{
	char raw[CP_LOG_LINE_MAX];
	size_t n, len;
	int p;

	if (journal)
		p = snprintf(buf, sz, "<%d>", (int)level);
	else
		p = snprintf(buf, sz, "cacheperf-bpf: %s",
			     level == CP_LOG_WARNING ? "warning: " : "");
	n = p < 0 ? 0 : (size_t)p >= sz - 1 ? sz - 2 : (size_t)p;
	/* our own line ends: dropped; any other newline is the tenant's */
	snprintf(raw, sizeof(raw), "%s", text ? text : "");
	len = strlen(raw);
	while (len && raw[len - 1] == '\n')
		raw[--len] = '\0';
	cp_printable(raw, buf + n, sz - 1 - n);
	n += strlen(buf + n);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

bool cp_log_limit_pass(struct cp_log_limit *l)
{
	if (l->said < l->burst) {
		l->said++;
		return true;
	}
	l->held++;
	return false;
}

size_t cp_log_limit_end(struct cp_log_limit *l, char *buf, size_t sz)
{
	int n = 0;

	if (l->held == 1)
		n = snprintf(buf, sz, "%s", l->last);
	else if (l->held > 1)
		n = snprintf(buf, sz, "%s (%llu more)", l->last, l->held - 1);
	l->said = 0;
	l->held = 0;
	l->last[0] = '\0';
	if (n < 0)
		return 0;
	return (size_t)n < sz ? (size_t)n : sz - 1;
}

void cp_log_tally_count(struct cp_log_tally *t, unsigned int why)
{
	if (why >= CP_LOG_TALLY_WHYS)
		why = CP_LOG_TALLY_WHYS - 1;
	t->n[why]++;
	t->total++;
}

size_t cp_log_tally_end(struct cp_log_tally *t, char *buf, size_t sz)
{
	unsigned long long all = 0;
	size_t len;
	int n;

	for (int i = 0; i < CP_LOG_TALLY_WHYS; i++)
		all += t->n[i];
	if (!all || !sz)
		return 0;
	n = snprintf(buf, sz, "%s for %llu process%s:", t->subject, all, all == 1 ? "" : "es");
	len = n < 0 ? 0 : (size_t)n < sz ? (size_t)n : sz - 1;
	for (int i = 0, said = 0; i < CP_LOG_TALLY_WHYS; i++) {
		if (!t->n[i])
			continue;
		n = snprintf(buf + len, sz - len, "%s %llu %s", said++ ? ";" : "", t->n[i],
			     t->why[i] ? t->why[i] : "other");
		len += n < 0 ? 0 : (size_t)n < sz - len ? (size_t)n : sz - len - 1;
		t->n[i] = 0;
	}
	return len;
}
