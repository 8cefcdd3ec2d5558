// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sources' table: what each is, by kind and by name. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "machine/source.h"

#define MISSES CP_IMPACT_MISSES, "share of the sampled misses"

/* name, recordable, needs_pmu, every_op, forwards_all, has_latency, by_time, impact */
static const struct cp_source_desc sources[] = {
	[CP_SOURCE_AUTO] = {"auto", false, false, false, false, false, false, MISSES},
	[CP_SOURCE_PEBS] = {"pebs", true, true, false, false, true, false, MISSES},
	[CP_SOURCE_IBS] = {"ibs", true, true, true, false, true, false, MISSES},
	[CP_SOURCE_SOFT] = {"soft", true, false, false, true, false, true, CP_IMPACT_TIME,
			    "share of the time samples"},
	[CP_SOURCE_FAULTS] = {"faults", true, false, false, true, false, false, CP_IMPACT_FAULTS,
			      "share of the sampled misses (page faults)"},
};

/* a kind or name no row has: nothing is assumed of its samples */
static const struct cp_source_desc unknown = {
	.name = "?", .impact = CP_IMPACT_MISSES, .impact_text = "share of the sampled misses"};

#define NR_SOURCES (sizeof(sources) / sizeof(sources[0]))

const struct cp_source_desc *cp_source_of(enum cp_source_kind kind)
{
	return (unsigned)kind < NR_SOURCES ? &sources[kind] : &unknown;
}

const struct cp_source_desc *cp_source_named(const char *name)
{
	enum cp_source_kind kind;

	return name && !cp_source_parse(name, &kind) ? &sources[kind] : &unknown;
}

const char *cp_source_name(enum cp_source_kind kind)
{
	return cp_source_of(kind)->name;
}

void cp_source_names(char *buf, size_t sz)
{
	size_t len = 0;

	if (sz)
		buf[0] = '\0';
	for (size_t i = 0; i < NR_SOURCES && len < sz; i++) {
		int n = snprintf(buf + len, sz - len, "%s%s", i ? ", " : "", sources[i].name);

		if (n < 0)
			break;
		len += (size_t)n;
	}
}

int cp_source_parse(const char *name, enum cp_source_kind *out)
{
	for (size_t i = 0; i < NR_SOURCES; i++) {
		if (strcmp(name, sources[i].name) == 0) {
			*out = (enum cp_source_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}
