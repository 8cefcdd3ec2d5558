/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A pprof profile (proto/profile.proto, through the code protoc-c
 * generates) built from samples in a neutral form: frames with their
 * addresses, mappings and inline chains, values, labels. The builder
 * decides the profile's tables: one string table whose entry 0 is "", one
 * function per (name, system name, file, start line), one mapping per
 * (range, offset, file, build-id), one location per (mapping, address,
 * inline chain) - an address outside every mapping per address space too -
 * and ids from 1 in the order first seen. Every string is made printable
 * (util/printable.h): a target names its own functions and files.
 *
 * Pure: no file, no symbolizer, no clock; cp_pprof__pack() gives the
 * serialized bytes (not compressed: export/pprof_file.h gzips them).
 * Memory grows with the distinct entries and the samples added, nothing
 * else; a caller bounds those by what it adds.
 */
#ifndef CP_PPROF_BUILD_H
#define CP_PPROF_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_PPROF_MAX_TYPES 4 /* values per sample */

/* What a value means: pprof's ValueType ("misses", "count"). */
struct cp_pprof_value_type {
	const char *type;
	const char *unit;
};

/* The profile as a whole. */
struct cp_pprof_header {
	struct cp_pprof_value_type types[CP_PPROF_MAX_TYPES];
	unsigned int nr_types;
	struct cp_pprof_value_type period_type; /* type NULL: none */
	__s64 period;				/* events per sample; 0: not one number */
	const char *default_type;		/* a types[].type; NULL: pprof's (the last) */
	__s64 time_ns;				/* start, ns since the epoch (UTC); 0: unknown */
	__s64 duration_ns;
	const char *comments[4]; /* free text for humans; NULL-terminated if fewer */
};

/* One level of an inline chain. */
struct cp_pprof_line {
	const char *function;	 /* NULL: unknown */
	const char *system_name; /* NULL: the same as function */
	const char *file;	 /* NULL: unknown */
	__s64 line;		 /* 0: unknown */
	__s64 start_line;	 /* the function's first line; 0: unknown */
};

/* A mapped file. */
struct cp_pprof_mapping {
	__u64 start; /* first byte */
	__u64 limit; /* one past the last */
	__u64 offset;
	const char *file;
	const char *build_id; /* hex; NULL: unknown */
};

/* A frame of a stack: an address, where it is mapped, its inline chain. */
struct cp_pprof_frame {
	__u64 address;
	const struct cp_pprof_mapping *mapping; /* NULL: no file maps it */
	__u32 space;				/* without a mapping: its address space (pid) */
	const struct cp_pprof_line *lines;	/* innermost function first */
	__u32 nr_lines;				/* 0: not symbolized */
};

/* A label: a string, or a number with an optional unit. */
struct cp_pprof_label {
	const char *key;
	const char *str; /* NULL: num */
	__s64 num;
	const char *num_unit; /* num only; NULL: none */
};

struct cp_pprof_sample {
	const struct cp_pprof_frame *frames; /* the leaf first */
	__u32 nr_frames;
	const __s64 *values; /* header's nr_types */
	const struct cp_pprof_label *labels;
	__u32 nr_labels;
};

struct cp_pprof;

/* A profile with @h's types and facts (strings copied). NULL: out of memory, or bad @h. */
struct cp_pprof *cp_pprof__new(const struct cp_pprof_header *h);
void cp_pprof__free(struct cp_pprof *b);

/*
 * Adds mapping @m (copied) if it is not there: added first, it is the
 * profile's first, which pprof's consumers take for the main binary. 0 or
 * -ENOMEM.
 */
int cp_pprof__add_mapping(struct cp_pprof *b, const struct cp_pprof_mapping *m);

/* Adds @s (everything copied). 0, -EINVAL (no frame), -ENOMEM. */
int cp_pprof__add(struct cp_pprof *b, const struct cp_pprof_sample *s);

/* The samples added so far. */
size_t cp_pprof__samples(const struct cp_pprof *b);

/* The profile serialized into a new buffer @*out (free() it). 0 or -ENOMEM. */
int cp_pprof__pack(const struct cp_pprof *b, __u8 **out, size_t *len);

#endif /* CP_PPROF_BUILD_H */
