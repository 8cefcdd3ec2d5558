/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cache geometry: the L1D, L2 and last-level cache the classifier maps
 * addresses onto (set index, lines per set). Read from
 * /sys/devices/system/cpu/cpu0/cache/index*, validated, replaced by a fallback
 * model where sysfs is missing or implausible (VMs report made-up caches), and
 * overridable per level with --cache. Every parser is pure; only
 * cp_geometry_read_sysfs() touches the file system.
 */
#ifndef CP_GEOMETRY_H
#define CP_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define CP_CACHE_PROBLEM_LEN 192
#define CP_GEO_MAX_WARNINGS  8
#define CP_GEO_WARNING_LEN   384
#define CP_GEO_MAX_INDEXES   16 /* sysfs index dirs looked at (x86 has 4 or 5) */
#define CP_CACHE_LINE_MIN    16
#define CP_CACHE_LINE_MAX    256

enum cp_cache_type {
	CP_CACHE_TYPE_UNKNOWN = 0,
	CP_CACHE_TYPE_DATA,
	CP_CACHE_TYPE_INSTRUCTION,
	CP_CACHE_TYPE_UNIFIED,
};

/* One cache as sysfs describes it (or as a model or --cache defines it). */
struct cp_cache_level {
	int level; /* 1, 2, 3 ...; 0 when sysfs did not say */
	int index; /* sysfs indexN it came from, -1 otherwise */
	enum cp_cache_type type;
	__u64 size_bytes;
	__u32 ways;
	__u32 sets;
	__u32 line_bytes;
	bool valid;			    /* passed cp_cache_level_check() */
	char problem[CP_CACHE_PROBLEM_LEN]; /* why not valid: a phrase for warnings */
};

/* The caches the classifier uses. */
enum cp_cache_slot {
	CP_CACHE_L1D = 0,
	CP_CACHE_L2,
	CP_CACHE_LLC,
	CP_CACHE_NR_SLOTS,
};

/* Where a slot's numbers came from. */
enum cp_geo_source {
	CP_GEO_FALLBACK = 0, /* the built-in model: sysfs missing or implausible */
	CP_GEO_SYSFS,
	CP_GEO_OVERRIDE, /* --cache */
	CP_GEO_RECORDED, /* a recording's (report FILE) */
};

struct cp_geometry {
	struct cp_cache_level slot[CP_CACHE_NR_SLOTS]; /* always valid */
	enum cp_geo_source source[CP_CACHE_NR_SLOTS];
	unsigned int nr_warnings;
	unsigned int warnings_dropped; /* beyond CP_GEO_MAX_WARNINGS */
	char warnings[CP_GEO_MAX_WARNINGS][CP_GEO_WARNING_LEN];
};

/* Text of the sysfs files of one cache index; NULL for a missing file. */
struct cp_cache_index_text {
	const char *level; /* "1\n" */
	const char *type;  /* "Data\n", "Instruction\n", "Unified\n" */
	const char *size;  /* "32K\n" */
	const char *ways;  /* ways_of_associativity */
	const char *sets;  /* number_of_sets */
	const char *line;  /* coherency_line_size */
};

/* "L1D", "L2", "LLC". */
const char *cp_cache_slot_name(enum cp_cache_slot slot);

/* "Data", "Instruction", "Unified", "Unknown". */
const char *cp_cache_type_name(enum cp_cache_type type);

/* "sysfs", "--cache", "fallback": where a slot's numbers came from. */
const char *cp_geo_source_name(enum cp_geo_source src);

/*
 * Parses a size: decimal digits, then an optional K, M or G (binary units,
 * either case), nothing else. "32K" -> 32768. Returns 0, -EINVAL or -ERANGE
 * (does not fit 64 bits).
 */
int cp_cache_parse_size(const char *s, __u64 *out);

/*
 * The fallback model of @slot, used when sysfs gives nothing usable. Valid,
 * index -1.
 */
struct cp_cache_level cp_cache_fallback(enum cp_cache_slot slot);

/*
 * Sanity-checks @l: ways >= 1; line a power of two in 16..256; sets >= 1
 * and a power of two (a linear set index is meaningless otherwise); size ==
 * sets x ways x line. Sets l->valid and, when invalid, l->problem (the first
 * failed check, naming the numbers). Returns l->valid.
 */
bool cp_cache_level_check(struct cp_cache_level *l);

/*
 * Parses the file contents of one sysfs cache index (pure). @index is N of
 * "indexN" (kept for messages). Always fills @out; out->valid says whether
 * every file was present, well-formed and passed cp_cache_level_check().
 */
void cp_cache_index_parse(const struct cp_cache_index_text *text, int index,
			  struct cp_cache_level *out);

/* Every slot set to its fallback model, no warnings. */
void cp_geometry_init(struct cp_geometry *geo);

/*
 * Chooses the slots from parsed sysfs indexes (pure): L1D is the level-1 data
 * (or unified) cache, L2 the level-2 unified (or data) cache, LLC the highest
 * level >= 2. A slot whose index is missing or invalid gets the fallback
 * model and a warning naming what sysfs reported; @where (the directory
 * read) goes into the warnings. Resets @geo first.
 */
void cp_geometry_from_indexes(struct cp_geometry *geo, const struct cp_cache_level *idx, int nr,
			      const char *where);

/*
 * Reads @root/sys/devices/system/cpu/cpu0/cache/index* and fills @geo via
 * cp_geometry_from_indexes(). Never fails: an unreadable directory gives the
 * fallback model for every slot and a warning saying why. Returns the number
 * of slots taken from sysfs (0..3).
 */
int cp_geometry_read_sysfs(struct cp_geometry *geo, const char *root);

/*
 * Applies a --cache spec, "L1D=48K:12:64,L2=2M:16:64,LLC=32M:16:64": any
 * subset of the levels, each SIZE:WAYS:LINE with SIZE as in
 * cp_cache_parse_size(), sets derived as SIZE / (WAYS x LINE). Levels given
 * become CP_GEO_OVERRIDE; the others are kept. All-or-nothing: on error @geo
 * is unchanged and @err holds a sentence naming the bad part. Returns 0,
 * -EINVAL (malformed) or -ERANGE (a number too large).
 */
int cp_geometry_apply_override(struct cp_geometry *geo, const char *spec, char *err, size_t err_sz);

/*
 * Writes one line (no newline) describing @slot, e.g.
 * "L1D 48 KiB, 12-way, 64 B lines, 64 sets (sysfs)". Returns the length
 * snprintf would have written.
 */
int cp_geometry_format(const struct cp_geometry *geo, enum cp_cache_slot slot, char *buf,
		       size_t sz);

/* Writes the three slot lines, then one "warning: ..." line per warning. */
void cp_geometry_print(const struct cp_geometry *geo, FILE *f);

/* The line number of @addr (its address divided by the line size). */
static inline __u64 cp_cache_line_of(const struct cp_cache_level *l, __u64 addr)
{
	return addr / l->line_bytes;
}

/*
 * The set @addr maps to in @l: line number modulo sets (the linear index of
 * L1 and L2; an approximation for sliced LLCs, whose slice hash is not
 * public). @l must be valid, as every slot of a cp_geometry is.
 */
static inline __u32 cp_cache_set_of(const struct cp_cache_level *l, __u64 addr)
{
	return (__u32)(cp_cache_line_of(l, addr) % l->sets);
}

#endif /* CP_GEOMETRY_H */
