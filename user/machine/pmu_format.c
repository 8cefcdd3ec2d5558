// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Parsers for PMU sysfs format and event files. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/pmu_format.h"

#define EVENT_TEXT_MAX 512 /* sysfs event strings are a few dozen bytes */

static const char *const word_names[CP_PMU_CONFIG_WORDS] = {
	"config",
	"config1",
	"config2",
	"config3",
};

/* A bit number 0..63 at *@s, advanced past it; -1 if none. */
static int take_bit(const char **s)
{
	int v = 0;

	if (!isdigit((unsigned char)**s))
		return -1;
	while (isdigit((unsigned char)**s)) {
		v = v * 10 + (**s - '0');
		if (v > 63)
			return -1;
		(*s)++;
	}
	return v;
}

int cp_pmu_format_parse(const char *text, __u8 *word, __u64 *mask)
{
	const char *p = text, *colon;
	__u64 m = 0;
	int w = -1;

	if (!p)
		return -EINVAL;
	colon = strchr(p, ':');
	if (!colon)
		return -EINVAL;
	for (int i = 0; i < CP_PMU_CONFIG_WORDS; i++) {
		if (strlen(word_names[i]) == (size_t)(colon - p) &&
		    !strncmp(p, word_names[i], colon - p))
			w = i;
	}
	if (w < 0)
		return -EINVAL;
	p = colon + 1;
	for (;;) {
		int lo = take_bit(&p), hi = lo;
		__u64 range;

		if (lo < 0)
			return -EINVAL;
		if (*p == '-') {
			p++;
			hi = take_bit(&p);
			if (hi < lo)
				return -EINVAL;
		}
		range = (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) & ~((1ull << lo) - 1);
		if (m & range)
			return -EINVAL;
		m |= range;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		if (*p)
			return -EINVAL;
		break;
	}
	*word = (__u8)w;
	*mask = m;
	return 0;
}

int cp_pmu_formats_add(struct cp_pmu_formats *fs, const char *name, const char *text)
{
	struct cp_pmu_format *f;

	if (strlen(name) >= CP_PMU_FORMAT_NAME_LEN)
		return -EINVAL;
	if (fs->nr >= CP_PMU_MAX_FORMATS)
		return -ENOSPC;
	f = &fs->f[fs->nr];
	if (cp_pmu_format_parse(text, &f->word, &f->mask))
		return -EINVAL;
	strcpy(f->name, name);
	fs->nr++;
	return 0;
}

const struct cp_pmu_format *cp_pmu_formats_find(const struct cp_pmu_formats *fs, const char *name)
{
	for (int i = 0; i < fs->nr; i++) {
		if (!strcmp(fs->f[i].name, name))
			return &fs->f[i];
	}
	return NULL;
}

int cp_pmu_format_set(const struct cp_pmu_format *f, __u64 value, __u64 config[CP_PMU_CONFIG_WORDS])
{
	__u64 out = 0, m = f->mask;
	int width = __builtin_popcountll(m);

	if (width < 64 && value >> width)
		return -ERANGE;
	for (int i = 0; m; i++) {
		__u64 bit = m & -m;

		if (value & (1ull << i))
			out |= bit;
		m &= m - 1;
	}
	config[f->word] = (config[f->word] & ~f->mask) | out;
	return 0;
}

__u64 cp_pmu_format_get(const struct cp_pmu_format *f, const __u64 config[CP_PMU_CONFIG_WORDS])
{
	__u64 v = 0, m = f->mask, src = config[f->word];

	for (int i = 0; m; i++) {
		__u64 bit = m & -m;

		if (src & bit)
			v |= 1ull << i;
		m &= m - 1;
	}
	return v;
}

/* Parses "0x1f", "31": whole string, no sign. */
static int parse_value(const char *s, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return -EINVAL;
		v = strtoull(s + 2, &end, 16);
	} else {
		v = strtoull(s, &end, 10);
	}
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cp_pmu_event_parse(const struct cp_pmu_formats *fs, const char *text,
		       __u64 config[CP_PMU_CONFIG_WORDS], char *err, size_t err_sz)
{
	char buf[EVENT_TEXT_MAX], *save = NULL, *term;
	size_t len;

	memset(config, 0, sizeof(__u64) * CP_PMU_CONFIG_WORDS);
	if (!text || (len = strlen(text)) >= sizeof(buf)) {
		snprintf(err, err_sz, "event text is missing or too long");
		return -EINVAL;
	}
	memcpy(buf, text, len + 1);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (!len) {
		snprintf(err, err_sz, "event text is empty");
		return -EINVAL;
	}
	for (term = strtok_r(buf, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
		const struct cp_pmu_format *f;
		char *eq = strchr(term, '=');
		__u64 value = 1;
		int ret;

		if (eq) {
			*eq = '\0';
			ret = parse_value(eq + 1, &value);
			if (ret) {
				snprintf(err, err_sz, "term '%s': '%s' is not a number", term,
					 eq + 1);
				return ret;
			}
		}
		f = cp_pmu_formats_find(fs, term);
		if (!f) {
			snprintf(err, err_sz, "term '%s' has no format file", term);
			return -EINVAL;
		}
		ret = cp_pmu_format_set(f, value, config);
		if (ret) {
			snprintf(err, err_sz, "term '%s': value 0x%llx does not fit its %d bits",
				 term, (unsigned long long)value, __builtin_popcountll(f->mask));
			return ret;
		}
	}
	return 0;
}

bool cp_pmu_event_has_term(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == '=' || p[n] == ',' || p[n] == '\n' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}
