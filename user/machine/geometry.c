// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cache geometry: sysfs parsing, sanity checks, fallback model, --cache. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "machine/geometry.h"
#include "util/parse.h"
#include "util/sysfs.h"

#define CACHE_DIR "sys/devices/system/cpu/cpu0/cache"
#define FIELD_LEN 64 /* longest sysfs value or --cache field we accept */

static const char *const slot_names[CP_CACHE_NR_SLOTS] = {
	[CP_CACHE_L1D] = "L1D",
	[CP_CACHE_L2] = "L2",
	[CP_CACHE_LLC] = "LLC",
};

const char *cp_cache_slot_name(enum cp_cache_slot slot)
{
	return slot < CP_CACHE_NR_SLOTS ? slot_names[slot] : "?";
}

const char *cp_geo_source_name(enum cp_geo_source src)
{
	switch (src) {
	case CP_GEO_SYSFS:
		return "sysfs";
	case CP_GEO_OVERRIDE:
		return "--cache";
	case CP_GEO_RECORDED:
		return "recording";
	default:
		return "fallback";
	}
}

const char *cp_cache_type_name(enum cp_cache_type type)
{
	switch (type) {
	case CP_CACHE_TYPE_DATA:
		return "Data";
	case CP_CACHE_TYPE_INSTRUCTION:
		return "Instruction";
	case CP_CACHE_TYPE_UNIFIED:
		return "Unified";
	default:
		return "Unknown";
	}
}

static const char *source_name(const struct cp_geometry *geo, enum cp_cache_slot slot, char *buf,
			       size_t sz)
{
	switch (geo->source[slot]) {
	case CP_GEO_SYSFS:
		/* the LLC is L2 on parts without an L3, L4 on eDRAM parts: say which */
		if (slot == CP_CACHE_LLC)
			snprintf(buf, sz, "sysfs L%d", geo->slot[slot].level);
		else
			snprintf(buf, sz, "sysfs");
		return buf;
	case CP_GEO_OVERRIDE:
		return "--cache";
	case CP_GEO_RECORDED:
		return "recording";
	default:
		return "fallback model";
	}
}

static bool is_pow2(__u64 v)
{
	return v && !(v & (v - 1));
}

/* "48 KiB", "1 MiB", "1280 KiB": the largest binary unit that divides exactly. */
static const char *format_size(__u64 bytes, char *buf, size_t sz)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned int u = 0;

	while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, sz, "%llu %s", (unsigned long long)bytes, units[u]);
	return buf;
}

/* "48 KiB, 12-way, 64 B lines, 64 sets" */
static const char *describe(const struct cp_cache_level *l, char *buf, size_t sz)
{
	char size[32];

	snprintf(buf, sz, "%s, %u-way, %u B lines, %u sets",
		 format_size(l->size_bytes, size, sizeof(size)), l->ways, l->line_bytes, l->sets);
	return buf;
}

int cp_cache_parse_size(const char *s, __u64 *out)
{
	char digits[FIELD_LEN];
	size_t n = strspn(s, "0123456789");
	unsigned int shift = 0;
	__u64 v;
	int err;

	if (n == 0 || n >= sizeof(digits))
		return n ? -ERANGE : -EINVAL;
	switch (s[n]) {
	case '\0':
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (shift && s[n + 1] != '\0')
		return -EINVAL;
	memcpy(digits, s, n);
	digits[n] = '\0';
	err = cp_parse_u64(digits, 0, ~0ULL >> shift, &v);
	if (err)
		return err;
	*out = v << shift;
	return 0;
}

/*
 * The fallback model, for when sysfs has nothing believable (VMs, containers
 * without /sys). Chosen so the numbers that drive classification are right
 * on most x86 servers:
 *  - L1D 32 KiB, 8-way, 64 B: every x86 L1D since Nehalem has 64 sets of
 *    64 B lines, because a VIPT L1 indexed inside the 4 KiB page offset holds
 *    at most 4 KiB per way. Conflict detection depends on the set count, so
 *    this is right even on 48 KiB 12-way parts (Ice Lake+, Zen 5).
 *  - L2 1 MiB, 16-way, 64 B: Skylake-SP to Cascade Lake and Zen 5; the
 *    middle of current server cores (Zen 2/3 512 KiB, Sapphire Rapids 2 MiB).
 *  - LLC 32 MiB, 16-way, 64 B: one Zen 2-5 CCD L3, which is all the L3 a
 *    thread on AMD shares; a 16-24 core Intel part at 1.375-2 MiB per core.
 *    Its 32768 sets are a power of two, so the set index stays defined.
 */
struct cp_cache_level cp_cache_fallback(enum cp_cache_slot slot)
{
	static const struct {
		int level;
		enum cp_cache_type type;
		__u64 size_bytes;
		__u32 ways;
	} model[CP_CACHE_NR_SLOTS] = {
		[CP_CACHE_L1D] = {1, CP_CACHE_TYPE_DATA, 32ULL << 10, 8},
		[CP_CACHE_L2] = {2, CP_CACHE_TYPE_UNIFIED, 1ULL << 20, 16},
		[CP_CACHE_LLC] = {3, CP_CACHE_TYPE_UNIFIED, 32ULL << 20, 16},
	};
	struct cp_cache_level l = {.index = -1};

	if (slot >= CP_CACHE_NR_SLOTS)
		slot = CP_CACHE_L1D;
	l.level = model[slot].level;
	l.type = model[slot].type;
	l.size_bytes = model[slot].size_bytes;
	l.ways = model[slot].ways;
	l.line_bytes = 64;
	l.sets = (__u32)(l.size_bytes / ((__u64)l.ways * l.line_bytes));
	l.valid = true;
	return l;
}

static bool invalid(struct cp_cache_level *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->problem, sizeof(l->problem), fmt, ap);
	va_end(ap);
	l->valid = false;
	return false;
}

bool cp_cache_level_check(struct cp_cache_level *l)
{
	__u64 product;
	char a[32], b[32];

	l->problem[0] = '\0';
	if (l->ways < 1)
		return invalid(l, "0 ways");
	if (!is_pow2(l->line_bytes) || l->line_bytes < CP_CACHE_LINE_MIN ||
	    l->line_bytes > CP_CACHE_LINE_MAX)
		return invalid(l, "line size %u B is not a power of two from %u to %u",
			       l->line_bytes, CP_CACHE_LINE_MIN, CP_CACHE_LINE_MAX);
	if (l->sets < 1)
		return invalid(l, "0 sets");
	/*
	 * Sliced Intel LLCs can report slices x 2048 sets, and hypervisors pass
	 * through a host-wide LLC or make one up: either way a linear set index
	 * over such a count describes no real cache.
	 */
	if (!is_pow2(l->sets))
		return invalid(l, "%u sets is not a power of two", l->sets);
	if (__builtin_mul_overflow((__u64)l->sets * l->ways, (__u64)l->line_bytes, &product) ||
	    product != l->size_bytes)
		return invalid(l, "size %s is not sets x ways x line (%u x %u x %u B = %s)",
			       format_size(l->size_bytes, a, sizeof(a)), l->sets, l->ways,
			       l->line_bytes, format_size(product, b, sizeof(b)));
	l->valid = true;
	return true;
}

/* Copies sysfs text without its newline; false when missing or too long. */
static bool field_text(const char *text, char *buf, size_t sz)
{
	if (!text || strlen(text) >= sz)
		return false;
	strcpy(buf, text);
	cp_sysfs_chomp(buf);
	return true;
}

/* A possibly long sysfs value cut to fit @buf, without its newline, for messages. */
static const char *shown(const char *text, char *buf, size_t sz)
{
	if (snprintf(buf, sz, "%s", text) < 0)
		buf[0] = '\0';
	cp_sysfs_chomp(buf);
	/* a warning is one line: garbage from a broken sysfs must not break it */
	for (char *c = buf; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
	return buf;
}

static bool parse_u32_field(const char *text, const char *file, __u32 *out,
			    struct cp_cache_level *l)
{
	char buf[FIELD_LEN];
	__u64 v;

	if (!text)
		return invalid(l, "has no %s file", file);
	if (!field_text(text, buf, sizeof(buf)))
		return invalid(l, "has %s '%.32s...', too long", file,
			       shown(text, buf, sizeof(buf)));
	if (cp_parse_u64(buf, 0, ~0U, &v))
		return invalid(l, "has %s '%.32s', not a 32-bit number", file,
			       shown(text, buf, sizeof(buf)));
	*out = (__u32)v;
	return true;
}

static enum cp_cache_type parse_type(const char *s)
{
	if (!strcmp(s, "Data"))
		return CP_CACHE_TYPE_DATA;
	if (!strcmp(s, "Instruction"))
		return CP_CACHE_TYPE_INSTRUCTION;
	if (!strcmp(s, "Unified"))
		return CP_CACHE_TYPE_UNIFIED;
	return CP_CACHE_TYPE_UNKNOWN;
}

void cp_cache_index_parse(const struct cp_cache_index_text *t, int index,
			  struct cp_cache_level *out)
{
	char buf[FIELD_LEN], what[96], problem[CP_CACHE_PROBLEM_LEN];
	__u32 level;

	memset(out, 0, sizeof(*out));
	out->index = index;
	/* level and type first: they decide whether the index matters at all */
	if (!parse_u32_field(t->level, "level", &level, out))
		return;
	if (level < 1 || level > 9) {
		invalid(out, "has level %u, not 1 to 9", level);
		return;
	}
	out->level = (int)level;
	if (!t->type) {
		invalid(out, "has no type file");
		return;
	}
	out->type = field_text(t->type, buf, sizeof(buf)) ? parse_type(buf) : CP_CACHE_TYPE_UNKNOWN;
	if (out->type == CP_CACHE_TYPE_UNKNOWN) {
		invalid(out, "has type '%.32s', not Data, Instruction or Unified",
			shown(t->type, buf, sizeof(buf)));
		return;
	}
	if (!t->size) {
		invalid(out, "has no size file");
		return;
	}
	if (!field_text(t->size, buf, sizeof(buf)) || cp_cache_parse_size(buf, &out->size_bytes)) {
		invalid(out, "has size '%.32s', not a number with an optional K, M or G",
			shown(t->size, buf, sizeof(buf)));
		return;
	}
	if (!parse_u32_field(t->ways, "ways_of_associativity", &out->ways, out) ||
	    !parse_u32_field(t->sets, "number_of_sets", &out->sets, out) ||
	    !parse_u32_field(t->line, "coherency_line_size", &out->line_bytes, out))
		return;
	if (!cp_cache_level_check(out)) {
		/* the warning should show every reported number, not just the bad one */
		if (snprintf(problem, sizeof(problem), "reports %s: %s",
			     describe(out, what, sizeof(what)), out->problem) > 0)
			strcpy(out->problem, problem);
	}
}

static void warn(struct cp_geometry *geo, const char *fmt, ...)
{
	va_list ap;

	if (geo->nr_warnings >= CP_GEO_MAX_WARNINGS) {
		geo->warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(geo->warnings[geo->nr_warnings++], CP_GEO_WARNING_LEN, fmt, ap);
	va_end(ap);
}

void cp_geometry_init(struct cp_geometry *geo)
{
	memset(geo, 0, sizeof(*geo));
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
		geo->slot[s] = cp_cache_fallback(s);
		geo->source[s] = CP_GEO_FALLBACK;
	}
}

/* The first index of @level with type @want, else with type @alt; NULL if none. */
static const struct cp_cache_level *find_index(const struct cp_cache_level *idx, int nr, int level,
					       enum cp_cache_type want, enum cp_cache_type alt)
{
	const struct cp_cache_level *found = NULL;

	for (int i = 0; i < nr; i++) {
		if (idx[i].level != level)
			continue;
		if (idx[i].type == want)
			return &idx[i];
		if (idx[i].type == alt && !found)
			found = &idx[i];
	}
	return found;
}

static void use_index(struct cp_geometry *geo, enum cp_cache_slot slot,
		      const struct cp_cache_level *l, const char *where)
{
	const char *name = cp_cache_slot_name(slot);
	char model[96];

	describe(&geo->slot[slot], model, sizeof(model));
	if (!l) {
		warn(geo,
		     "no %s cache in %s; using the fallback %s model %s "
		     "(set the real one with --cache %s=SIZE:WAYS:LINE)",
		     slot == CP_CACHE_LLC  ? "level-2 or higher"
		     : slot == CP_CACHE_L2 ? "level-2"
					   : "level-1 data",
		     where, name, model, name);
		return;
	}
	if (!l->valid) {
		warn(geo,
		     "sysfs index%d (L%d %s) %s; using the fallback %s model %s "
		     "(set the real one with --cache %s=SIZE:WAYS:LINE)",
		     l->index, l->level, cp_cache_type_name(l->type), l->problem, name, model,
		     name);
		return;
	}
	geo->slot[slot] = *l;
	geo->source[slot] = CP_GEO_SYSFS;
}

void cp_geometry_from_indexes(struct cp_geometry *geo, const struct cp_cache_level *idx, int nr,
			      const char *where)
{
	const struct cp_cache_level *llc = NULL;

	cp_geometry_init(geo);
	for (int i = 0; i < nr; i++) {
		/* an index we cannot even place might be the L1D or the LLC: say so */
		if (idx[i].level == 0 || idx[i].type == CP_CACHE_TYPE_UNKNOWN)
			warn(geo, "sysfs index%d %s; ignored", idx[i].index, idx[i].problem);
	}
	use_index(geo, CP_CACHE_L1D,
		  find_index(idx, nr, 1, CP_CACHE_TYPE_DATA, CP_CACHE_TYPE_UNIFIED), where);
	use_index(geo, CP_CACHE_L2,
		  find_index(idx, nr, 2, CP_CACHE_TYPE_UNIFIED, CP_CACHE_TYPE_DATA), where);
	/* the LLC is the highest data-holding level, valid or not (then: fallback) */
	for (int i = 0; i < nr; i++) {
		if (idx[i].level < 2 ||
		    (idx[i].type != CP_CACHE_TYPE_UNIFIED && idx[i].type != CP_CACHE_TYPE_DATA))
			continue;
		if (!llc || idx[i].level > llc->level)
			llc = find_index(idx, nr, idx[i].level, CP_CACHE_TYPE_UNIFIED,
					 CP_CACHE_TYPE_DATA);
	}
	use_index(geo, CP_CACHE_LLC, llc, where);
}

static int index_number(const char *name)
{
	__u64 n;

	if (strncmp(name, "index", 5) || cp_parse_u64(name + 5, 0, 1000, &n))
		return -1;
	return (int)n;
}

static int cmp_index(const void *a, const void *b)
{
	const struct cp_cache_level *x = a, *y = b;

	return x->index - y->index;
}

/* Reads one indexN directory; a missing file becomes NULL text. */
static void read_index(const char *root, int n, struct cp_cache_level *out)
{
	static const char *const files[] = {
		"level",	  "type",
		"size",		  "ways_of_associativity",
		"number_of_sets", "coherency_line_size",
	};
	char text[6][FIELD_LEN], rel[128];
	const char *ptr[6];
	struct cp_cache_index_text t;

	for (int f = 0; f < 6; f++) {
		int ret;

		snprintf(rel, sizeof(rel), "%s/index%d/%s", CACHE_DIR, n, files[f]);
		ret = cp_sysfs_read(root, rel, text[f], sizeof(text[f]));
		/* a value too long to be a number must not read as a missing file */
		ptr[f] = ret >= 0 ? text[f] : ret == -EFBIG ? "(too long)" : NULL;
	}
	t = (struct cp_cache_index_text){
		.level = ptr[0],
		.type = ptr[1],
		.size = ptr[2],
		.ways = ptr[3],
		.sets = ptr[4],
		.line = ptr[5],
	};
	cp_cache_index_parse(&t, n, out);
}

int cp_geometry_read_sysfs(struct cp_geometry *geo, const char *root)
{
	struct cp_cache_level idx[CP_GEO_MAX_INDEXES];
	char dir[4096];
	struct dirent *de;
	int nr = 0, from_sysfs = 0;
	DIR *d;

	if (cp_sysfs_path(dir, sizeof(dir), root, CACHE_DIR)) {
		cp_geometry_init(geo);
		warn(geo,
		     "sysfs root '%.256s' is too long; using the fallback model for "
		     "every level",
		     root);
		return 0;
	}
	d = opendir(dir);
	if (!d) {
		cp_geometry_init(geo);
		warn(geo,
		     "cannot read %s: %s; using the fallback model for L1D, L2 and LLC "
		     "(set the real one with --cache L1D=SIZE:WAYS:LINE,L2=...,LLC=...)",
		     dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d)) && nr < CP_GEO_MAX_INDEXES) {
		int n = index_number(de->d_name);

		if (n >= 0)
			read_index(root, n, &idx[nr++]);
	}
	closedir(d);
	/* readdir order is arbitrary; ties between equal levels go to the lower index */
	qsort(idx, nr, sizeof(idx[0]), cmp_index);
	cp_geometry_from_indexes(geo, idx, nr, dir);
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++)
		from_sysfs += geo->source[s] == CP_GEO_SYSFS;
	return from_sysfs;
}

static int fail(int err, char *buf, size_t sz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sz, fmt, ap);
	va_end(ap);
	return err;
}

/* A whole number field of --cache: 0, or a negative errno with @err set. */
static int override_number(const char *item, const char *what, const char *text, __u64 max,
			   __u64 *out, char *err, size_t err_sz)
{
	int ret = cp_parse_u64(text, 0, max, out);

	if (ret == -ERANGE)
		return fail(-ERANGE, err, err_sz, "--cache %s: %s '%s' is too large", item, what,
			    text);
	if (ret)
		return fail(-EINVAL, err, err_sz, "--cache %s: %s '%s' is not a number", item, what,
			    text);
	return 0;
}

/* Parses "NAME=SIZE:WAYS:LINE" (NUL-terminated, no comma) into @out. */
static int parse_override_item(const char *item, enum cp_cache_slot *slot,
			       struct cp_cache_level *out, char *err, size_t err_sz)
{
	static const char *const field_names[] = {"size", "ways", "line size"};
	char name[FIELD_LEN], field[3][FIELD_LEN], sz_text[32];
	const char *eq = strchr(item, '='), *p;
	__u64 size, ways, line, set_bytes, sets;
	int nf, ret;

	if (!eq)
		return fail(-EINVAL, err, err_sz,
			    "--cache '%s': expected LEVEL=SIZE:WAYS:LINE, "
			    "e.g. L1D=48K:12:64",
			    item);
	if ((size_t)(eq - item) >= sizeof(name))
		return fail(-EINVAL, err, err_sz, "--cache '%s': unknown level; use L1D, L2 or LLC",
			    item);
	memcpy(name, item, eq - item);
	name[eq - item] = '\0';
	for (*slot = 0; *slot < CP_CACHE_NR_SLOTS; (*slot)++)
		if (!strcasecmp(name, slot_names[*slot]))
			break;
	if (*slot == CP_CACHE_NR_SLOTS)
		return fail(-EINVAL, err, err_sz,
			    "--cache: unknown level '%s' in '%s'; use L1D, "
			    "L2 or LLC",
			    name, item);
	/* split SIZE:WAYS:LINE; anything after a third ':' is junk */
	p = eq + 1;
	for (nf = 0; nf < 3; nf++) {
		size_t len = strcspn(p, ":");

		if (len == 0)
			return fail(-EINVAL, err, err_sz,
				    "--cache %s: missing the %s; expected "
				    "SIZE:WAYS:LINE, e.g. 48K:12:64",
				    item, field_names[nf]);
		if (len >= sizeof(field[nf]))
			return fail(-EINVAL, err, err_sz, "--cache %s: the %s is too long", item,
				    field_names[nf]);
		memcpy(field[nf], p, len);
		field[nf][len] = '\0';
		p += len;
		if (nf < 2) {
			if (*p != ':')
				return fail(-EINVAL, err, err_sz,
					    "--cache %s: missing the %s; "
					    "expected SIZE:WAYS:LINE, e.g. 48K:12:64",
					    item, field_names[nf + 1]);
			p++;
		}
	}
	if (*p)
		return fail(-EINVAL, err, err_sz, "--cache %s: unexpected '%s' after the line size",
			    item, p);

	ret = cp_cache_parse_size(field[0], &size);
	if (ret == -ERANGE)
		return fail(-ERANGE, err, err_sz, "--cache %s: size '%s' is too large", item,
			    field[0]);
	if (ret)
		return fail(-EINVAL, err, err_sz,
			    "--cache %s: size '%s' is not a number with an "
			    "optional K, M or G suffix",
			    item, field[0]);
	if (size == 0)
		return fail(-EINVAL, err, err_sz, "--cache %s: size must not be zero", item);
	ret = override_number(item, "ways", field[1], ~0U, &ways, err, err_sz);
	if (ret)
		return ret;
	if (ways == 0)
		return fail(-EINVAL, err, err_sz, "--cache %s: ways must be at least 1", item);
	ret = override_number(item, "line size", field[2], ~0U, &line, err, err_sz);
	if (ret)
		return ret;
	if (!is_pow2(line) || line < CP_CACHE_LINE_MIN || line > CP_CACHE_LINE_MAX)
		return fail(-EINVAL, err, err_sz,
			    "--cache %s: line size %llu must be a power of "
			    "two from %u to %u",
			    item, (unsigned long long)line, CP_CACHE_LINE_MIN, CP_CACHE_LINE_MAX);
	/* ways < 2^32 and line <= 256: the product cannot overflow */
	set_bytes = ways * line;
	format_size(size, sz_text, sizeof(sz_text));
	if (size % set_bytes)
		return fail(-EINVAL, err, err_sz,
			    "--cache %s: %s is not a whole number of sets of "
			    "%llu ways x %llu B lines",
			    item, sz_text, (unsigned long long)ways, (unsigned long long)line);
	sets = size / set_bytes;
	if (sets > ~0U)
		return fail(-ERANGE, err, err_sz, "--cache %s: gives %llu sets, too many", item,
			    (unsigned long long)sets);
	if (!is_pow2(sets))
		return fail(-EINVAL, err, err_sz,
			    "--cache %s: gives %llu sets (%s / (%llu ways x "
			    "%llu B)), not a power of two",
			    item, (unsigned long long)sets, sz_text, (unsigned long long)ways,
			    (unsigned long long)line);

	*out = cp_cache_fallback(*slot);
	out->size_bytes = size;
	out->ways = (__u32)ways;
	out->line_bytes = (__u32)line;
	out->sets = (__u32)sets;
	if (!cp_cache_level_check(out)) /* cannot happen after the checks above */
		return fail(-EINVAL, err, err_sz, "--cache %s: %s", item, out->problem);
	return 0;
}

int cp_geometry_apply_override(struct cp_geometry *geo, const char *spec, char *err, size_t err_sz)
{
	struct cp_cache_level parsed[CP_CACHE_NR_SLOTS];
	bool given[CP_CACHE_NR_SLOTS] = {false};
	char item[FIELD_LEN * 3];
	const char *p = spec;

	if (!spec || !*spec)
		return fail(-EINVAL, err, err_sz,
			    "--cache: empty; expected LEVEL=SIZE:WAYS:LINE"
			    "[,...], e.g. L1D=48K:12:64,L2=2M:16:64,LLC=32M:16:64");
	for (;;) {
		size_t len = strcspn(p, ",");
		struct cp_cache_level l;
		enum cp_cache_slot slot = CP_CACHE_L1D;
		int ret;

		if (len == 0)
			return fail(-EINVAL, err, err_sz, "--cache '%s': empty entry (a stray ',')",
				    spec);
		if (len >= sizeof(item))
			return fail(-EINVAL, err, err_sz, "--cache: entry '%.*s...' is too long",
				    32, p);
		memcpy(item, p, len);
		item[len] = '\0';
		ret = parse_override_item(item, &slot, &l, err, err_sz);
		if (ret)
			return ret;
		if (given[slot])
			return fail(-EINVAL, err, err_sz, "--cache: %s given twice",
				    cp_cache_slot_name(slot));
		given[slot] = true;
		parsed[slot] = l;
		p += len;
		if (!*p)
			break;
		p++; /* the ',' */
	}
	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
		if (!given[s])
			continue;
		geo->slot[s] = parsed[s];
		geo->source[s] = CP_GEO_OVERRIDE;
	}
	return 0;
}

int cp_geometry_format(const struct cp_geometry *geo, enum cp_cache_slot slot, char *buf, size_t sz)
{
	char what[96], src[32];

	if (slot >= CP_CACHE_NR_SLOTS)
		return snprintf(buf, sz, "?");
	return snprintf(buf, sz, "%s %s (%s)", cp_cache_slot_name(slot),
			describe(&geo->slot[slot], what, sizeof(what)),
			source_name(geo, slot, src, sizeof(src)));
}

void cp_geometry_print(const struct cp_geometry *geo, FILE *f)
{
	char line[160];

	for (int s = 0; s < CP_CACHE_NR_SLOTS; s++) {
		cp_geometry_format(geo, s, line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	for (unsigned int w = 0; w < geo->nr_warnings; w++)
		fprintf(f, "warning: %s\n", geo->warnings[w]);
	if (geo->warnings_dropped)
		fprintf(f, "warning: %u more cache geometry warnings not shown\n",
			geo->warnings_dropped);
}
