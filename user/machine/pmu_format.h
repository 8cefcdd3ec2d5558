/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The PMU sysfs language (Documentation/ABI/testing/sysfs-bus-event_source-devices-format
 * and -events): format files map a field name to bits of perf_event_attr
 * config words ("event" -> "config:0-7", "ldlat" -> "config1:0-15",
 * AMD "event" -> "config:0-7,32-35"), and event files are comma-separated
 * terms over those fields ("event=0xcd,umask=0x1,ldlat=3"). Pure parsers:
 * pmu.c feeds them file contents.
 */
#ifndef CP_PMU_FORMAT_H
#define CP_PMU_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_PMU_CONFIG_WORDS    4  /* config, config1, config2, config3 */
#define CP_PMU_MAX_FORMATS     32 /* Intel cpu_core has 13, ibs_op 5 */
#define CP_PMU_FORMAT_NAME_LEN 32

/* One format field: which config word, and which bits of it. */
struct cp_pmu_format {
	char name[CP_PMU_FORMAT_NAME_LEN];
	__u8 word;  /* 0: config, 1: config1, 2: config2, 3: config3 */
	__u64 mask; /* the field's bits; a value fills them from the lowest up */
};

struct cp_pmu_formats {
	int nr;
	struct cp_pmu_format f[CP_PMU_MAX_FORMATS];
};

/*
 * Parses a format file's text, "config:0-7", "config1:0-15\n",
 * "config:0-7,32-35", "config:23", "config2:0", into a word index and bit
 * mask. Returns 0, or -EINVAL (unknown word, bit above 63, a range running
 * backwards, overlapping ranges, trailing garbage).
 */
int cp_pmu_format_parse(const char *text, __u8 *word, __u64 *mask);

/* Parses @text and adds it as field @name. 0, -EINVAL, or -ENOSPC when full. */
int cp_pmu_formats_add(struct cp_pmu_formats *fs, const char *name, const char *text);

/* The field called @name, or NULL. */
const struct cp_pmu_format *cp_pmu_formats_find(const struct cp_pmu_formats *fs, const char *name);

/*
 * Writes @value into field @f of @config, replacing what the field held:
 * value bit i goes to the i-th lowest bit of the mask, as the kernel and
 * perf's pmu_format_value() do for split fields. Returns 0, or -ERANGE when
 * @value has more bits than the field.
 */
int cp_pmu_format_set(const struct cp_pmu_format *f, __u64 value,
		      __u64 config[CP_PMU_CONFIG_WORDS]);

/* The value field @f holds in @config (the inverse of cp_pmu_format_set). */
__u64 cp_pmu_format_get(const struct cp_pmu_format *f, const __u64 config[CP_PMU_CONFIG_WORDS]);

/*
 * Parses an event file's text, "event=0xcd,umask=0x1,ldlat=3\n", applying
 * each term through @fs into @config (zeroed first). A term without "=" sets
 * its field to 1 ("any"); values are hex with 0x or decimal. Returns 0, or
 * -EINVAL with a reason in @err (unknown field, bad number), -ERANGE (a value
 * too wide for its field).
 */
int cp_pmu_event_parse(const struct cp_pmu_formats *fs, const char *text,
		       __u64 config[CP_PMU_CONFIG_WORDS], char *err, size_t err_sz);

/* True when the event text has a term named @name ("ldlat" in mem-loads). */
bool cp_pmu_event_has_term(const char *text, const char *name);

#endif /* CP_PMU_FORMAT_H */
