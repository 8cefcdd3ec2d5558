// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pprof profile builder (see pprof_build.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/pprof_build.h"
#include "proto/profile.pb-c.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/printable.h"

#define CP_PPROF_STR_MAX 4096 /* bytes of one string kept (a C++ name can be long) */

typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__ValueType pb_value_type;

/* Byte strings to dense indices: the dedup of every table. */
struct keyset {
	__u32 *slots; /* 1 + index; 0: empty */
	size_t mask;
	char **keys;
	size_t *lens;
	size_t nr, cap;
};

struct location {
	pb_location m;
	pb_line *lines;
	pb_line **ptrs;
};

struct sample {
	pb_sample m;
	uint64_t *locs;
	int64_t *values;
	pb_label *labels;
	pb_label **ptrs;
};

struct cp_pprof {
	struct keyset strings; /* keys are the strings, NUL included */
	struct keyset functions, mappings, locations;
	pb_function *fn;
	size_t nr_fn, cap_fn;
	pb_mapping *map;
	size_t nr_map, cap_map;
	struct location *loc;
	size_t nr_loc, cap_loc;
	struct sample *smp;
	size_t nr_smp, cap_smp;
	unsigned int nr_types;
	pb_value_type types[CP_PPROF_MAX_TYPES];
	pb_value_type period_type;
	bool have_period_type;
	__s64 period, time_ns, duration_ns, default_type;
	int64_t comments[4];
	size_t nr_comments;
};

static __u64 key_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	__u64 h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return cp_hash_mix(h, 31, 29);
}

static int keyset_rehash(struct keyset *k)
{
	size_t cap = k->mask ? 2 * (k->mask + 1) : 64;
	__u32 *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < k->nr; i++) {
		size_t s = cp_hash_slot(key_hash(k->keys[i], k->lens[i]), 0, cap - 1);

		while (slots[s])
			s = cp_probe_next(s, cap - 1);
		slots[s] = (__u32)i + 1;
	}
	free(k->slots);
	k->slots = slots;
	k->mask = cap - 1;
	return 0;
}

/*
 * The index of @key in @k: found, or added as the next one (*@added).
 * Returns 0 or -ENOMEM.
 */
static int keyset_get(struct keyset *k, const void *key, size_t len, __u32 *idx, bool *added)
{
	size_t s;
	char *copy;

	*added = false;
	if ((k->nr + 1) * 2 > k->mask + 1 && keyset_rehash(k))
		return -ENOMEM;
	for (s = cp_hash_slot(key_hash(key, len), 0, k->mask); k->slots[s];
	     s = cp_probe_next(s, k->mask)) {
		__u32 i = k->slots[s] - 1;

		if (k->lens[i] == len && !memcmp(k->keys[i], key, len)) {
			*idx = i;
			return 0;
		}
	}
	if (k->nr == k->cap) {
		size_t cap = k->cap;

		if (cp_grow((void **)&k->keys, &cap, k->nr, sizeof(*k->keys), 64))
			return -ENOMEM;
		cap = k->cap;
		if (cp_grow((void **)&k->lens, &cap, k->nr, sizeof(*k->lens), 64))
			return -ENOMEM;
		k->cap = cap;
	}
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, key, len);
	k->keys[k->nr] = copy;
	k->lens[k->nr] = len;
	k->slots[s] = (__u32)k->nr + 1;
	*idx = (__u32)k->nr++;
	*added = true;
	return 0;
}

static void keyset_free(struct keyset *k)
{
	for (size_t i = 0; i < k->nr; i++)
		free(k->keys[i]);
	free(k->keys);
	free(k->lens);
	free(k->slots);
}

/* The string table index of @s made printable (NULL: 0, ""). -ENOMEM as < 0. */
static int64_t str_index(struct cp_pprof *b, const char *s)
{
	char buf[CP_PPROF_STR_MAX];
	bool added;
	__u32 idx;

	if (!s || !s[0])
		return 0;
	cp_printable(s, buf, sizeof(buf));
	if (keyset_get(&b->strings, buf, strlen(buf) + 1, &idx, &added))
		return -ENOMEM;
	return idx;
}

/* Several indices at once: any < 0 (out of memory) makes the result < 0. */
static int strs(struct cp_pprof *b, int64_t *out, const char *const *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = str_index(b, in[i]);
		if (out[i] < 0)
			return -ENOMEM;
	}
	return 0;
}

static int value_type(struct cp_pprof *b, const struct cp_pprof_value_type *t, pb_value_type *out)
{
	int64_t idx[2];

	if (strs(b, idx, (const char *const[]){t->type, t->unit}, 2))
		return -ENOMEM;
	perftools__profiles__value_type__init(out);
	out->type = idx[0];
	out->unit = idx[1];
	return 0;
}

struct cp_pprof *cp_pprof__new(const struct cp_pprof_header *h)
{
	struct cp_pprof *b;
	bool added;
	__u32 idx;

	if (!h->nr_types || h->nr_types > CP_PPROF_MAX_TYPES)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	/* string 0 is "" (profile.proto) */
	if (keyset_get(&b->strings, "", 1, &idx, &added))
		goto fail;
	b->nr_types = h->nr_types;
	for (unsigned int i = 0; i < h->nr_types; i++)
		if (value_type(b, &h->types[i], &b->types[i]))
			goto fail;
	if (h->period_type.type) {
		if (value_type(b, &h->period_type, &b->period_type))
			goto fail;
		b->have_period_type = true;
	}
	b->period = h->period;
	b->time_ns = h->time_ns;
	b->duration_ns = h->duration_ns;
	b->default_type = str_index(b, h->default_type);
	if (b->default_type < 0)
		goto fail;
	for (size_t i = 0; i < 4 && h->comments[i]; i++) {
		b->comments[i] = str_index(b, h->comments[i]);
		if (b->comments[i] < 0)
			goto fail;
		b->nr_comments++;
	}
	return b;
fail:
	cp_pprof__free(b);
	return NULL;
}

void cp_pprof__free(struct cp_pprof *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nr_loc; i++) {
		free(b->loc[i].lines);
		free(b->loc[i].ptrs);
	}
	for (size_t i = 0; i < b->nr_smp; i++) {
		free(b->smp[i].locs);
		free(b->smp[i].values);
		free(b->smp[i].labels);
		free(b->smp[i].ptrs);
	}
	free(b->fn);
	free(b->map);
	free(b->loc);
	free(b->smp);
	keyset_free(&b->strings);
	keyset_free(&b->functions);
	keyset_free(&b->mappings);
	keyset_free(&b->locations);
	free(b);
}

/* The id of @l's function; 0 for a line without one. < 0: out of memory. */
static int64_t function_id(struct cp_pprof *b, const struct cp_pprof_line *l)
{
	int64_t k[4];
	bool added;
	__u32 idx;

	if (!l->function)
		return 0;
	if (strs(b, k, (const char *const[]){l->function, l->system_name ?: l->function, l->file},
		 3))
		return -ENOMEM;
	k[3] = l->start_line;
	if (keyset_get(&b->functions, k, sizeof(k), &idx, &added))
		return -ENOMEM;
	if (added) {
		pb_function *f;

		if (cp_grow((void **)&b->fn, &b->cap_fn, b->nr_fn, sizeof(*b->fn), 64))
			return -ENOMEM;
		f = &b->fn[b->nr_fn++];
		perftools__profiles__function__init(f);
		f->id = idx + 1;
		f->name = k[0];
		f->system_name = k[1];
		f->filename = k[2];
		f->start_line = k[3];
	}
	return idx + 1;
}

/* The id of mapping @m (NULL: 0). < 0: out of memory. */
static int64_t mapping_id(struct cp_pprof *b, const struct cp_pprof_mapping *m)
{
	int64_t k[5];
	bool added;
	__u32 idx;

	if (!m)
		return 0;
	k[0] = (int64_t)m->start;
	k[1] = (int64_t)m->limit;
	k[2] = (int64_t)m->offset;
	if (strs(b, k + 3, (const char *const[]){m->file, m->build_id}, 2) ||
	    keyset_get(&b->mappings, k, sizeof(k), &idx, &added))
		return -ENOMEM;
	if (added) {
		pb_mapping *pm;

		if (cp_grow((void **)&b->map, &b->cap_map, b->nr_map, sizeof(*b->map), 16))
			return -ENOMEM;
		pm = &b->map[b->nr_map++];
		perftools__profiles__mapping__init(pm);
		pm->id = idx + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = k[3];
		pm->build_id = k[4];
	}
	return idx + 1;
}

int cp_pprof__add_mapping(struct cp_pprof *b, const struct cp_pprof_mapping *m)
{
	return mapping_id(b, m) < 0 ? -ENOMEM : 0;
}

/* What a mapping can say about its locations, from one of them. */
static void mapping_flags(pb_mapping *m, const struct cp_pprof_frame *f)
{
	for (__u32 i = 0; i < f->nr_lines; i++) {
		m->has_functions |= f->lines[i].function != NULL;
		m->has_filenames |= f->lines[i].file != NULL;
		m->has_line_numbers |= f->lines[i].line != 0;
	}
	m->has_inline_frames |= f->nr_lines > 1;
}

static int new_location(struct cp_pprof *b, __u32 idx, __u64 map_id, const struct cp_pprof_frame *f,
			const int64_t *fn_ids)
{
	struct location *l;

	if (cp_grow((void **)&b->loc, &b->cap_loc, b->nr_loc, sizeof(*b->loc), 64))
		return -ENOMEM;
	l = &b->loc[b->nr_loc];
	memset(l, 0, sizeof(*l));
	perftools__profiles__location__init(&l->m);
	if (f->nr_lines) {
		l->lines = calloc(f->nr_lines, sizeof(*l->lines));
		l->ptrs = calloc(f->nr_lines, sizeof(*l->ptrs));
		if (!l->lines || !l->ptrs) {
			free(l->lines);
			free(l->ptrs);
			return -ENOMEM;
		}
	}
	for (__u32 i = 0; i < f->nr_lines; i++) {
		perftools__profiles__line__init(&l->lines[i]);
		l->lines[i].function_id = (uint64_t)fn_ids[i];
		l->lines[i].line = f->lines[i].line;
		l->ptrs[i] = &l->lines[i];
	}
	l->m.id = idx + 1;
	l->m.mapping_id = map_id;
	l->m.address = f->address;
	l->m.n_line = f->nr_lines;
	l->m.line = l->ptrs;
	b->nr_loc++;
	if (map_id)
		mapping_flags(&b->map[map_id - 1], f);
	return 0;
}

/*
 * The id of frame @f's location. Its key: mapping, address (and address
 * space when unmapped), then each line's function and line number.
 */
static int64_t location_id(struct cp_pprof *b, const struct cp_pprof_frame *f)
{
	size_t n = 3 + 2 * (size_t)f->nr_lines;
	int64_t *k = calloc(n, sizeof(*k));
	int64_t map_id = mapping_id(b, f->mapping), ret = -ENOMEM;
	bool added;
	__u32 idx;

	if (!k || map_id < 0)
		goto out;
	k[0] = map_id;
	k[1] = (int64_t)f->address;
	k[2] = map_id ? 0 : f->space;
	for (__u32 i = 0; i < f->nr_lines; i++) {
		k[3 + 2 * i] = function_id(b, &f->lines[i]);
		if (k[3 + 2 * i] < 0)
			goto out;
		k[4 + 2 * i] = f->lines[i].line;
	}
	if (keyset_get(&b->locations, k, n * sizeof(*k), &idx, &added))
		goto out;
	if (added) {
		int64_t *fn_ids = k + 3; /* every other one: copy them together first */

		for (__u32 i = 0; i < f->nr_lines; i++)
			fn_ids[i] = k[3 + 2 * i];
		if (new_location(b, idx, (__u64)map_id, f, fn_ids))
			goto out;
	}
	ret = idx + 1;
out:
	free(k);
	return ret;
}

static int sample_labels(struct cp_pprof *b, const struct cp_pprof_sample *s, struct sample *out)
{
	if (!s->nr_labels)
		return 0;
	out->labels = calloc(s->nr_labels, sizeof(*out->labels));
	out->ptrs = calloc(s->nr_labels, sizeof(*out->ptrs));
	if (!out->labels || !out->ptrs)
		return -ENOMEM;
	for (__u32 i = 0; i < s->nr_labels; i++) {
		const struct cp_pprof_label *in = &s->labels[i];
		pb_label *l = &out->labels[i];
		int64_t k[3];

		if (strs(b, k, (const char *const[]){in->key, in->str, in->num_unit}, 3))
			return -ENOMEM;
		perftools__profiles__label__init(l);
		l->key = k[0];
		l->str = k[1];
		l->num = in->str ? 0 : in->num;
		l->num_unit = in->str ? 0 : k[2];
		out->ptrs[i] = l;
	}
	out->m.n_label = s->nr_labels;
	out->m.label = out->ptrs;
	return 0;
}

int cp_pprof__add(struct cp_pprof *b, const struct cp_pprof_sample *s)
{
	struct sample *o;

	if (!s->nr_frames)
		return -EINVAL;
	if (cp_grow((void **)&b->smp, &b->cap_smp, b->nr_smp, sizeof(*b->smp), 64))
		return -ENOMEM;
	o = &b->smp[b->nr_smp];
	memset(o, 0, sizeof(*o));
	perftools__profiles__sample__init(&o->m);
	o->locs = calloc(s->nr_frames, sizeof(*o->locs));
	o->values = calloc(b->nr_types, sizeof(*o->values));
	if (!o->locs || !o->values)
		goto nomem;
	for (__u32 i = 0; i < s->nr_frames; i++) {
		int64_t id = location_id(b, &s->frames[i]);

		if (id < 0)
			goto nomem;
		o->locs[i] = (uint64_t)id;
	}
	memcpy(o->values, s->values, b->nr_types * sizeof(*o->values));
	if (sample_labels(b, s, o))
		goto nomem;
	o->m.n_location_id = s->nr_frames;
	o->m.location_id = o->locs;
	o->m.n_value = b->nr_types;
	o->m.value = o->values;
	b->nr_smp++;
	return 0;
nomem:
	free(o->locs);
	free(o->values);
	free(o->labels);
	free(o->ptrs);
	return -ENOMEM;
}

size_t cp_pprof__samples(const struct cp_pprof *b)
{
	return b->nr_smp;
}

/* @n pointers to the @n elements of @size bytes at @v: the repeated fields protobuf-c packs. */
static void **pointers(void *v, size_t n, size_t size)
{
	void **p = calloc(n ? n : 1, sizeof(*p));

	for (size_t i = 0; p && i < n; i++)
		p[i] = (char *)v + i * size;
	return p;
}

int cp_pprof__pack(const struct cp_pprof *b, __u8 **out, size_t *len)
{
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type types[CP_PPROF_MAX_TYPES], period_type = b->period_type;
	pb_value_type *type_ptrs[CP_PPROF_MAX_TYPES];
	struct location *loc = b->loc;
	struct sample *smp = b->smp;
	int ret = -ENOMEM;

	*out = NULL;
	memcpy(types, b->types, sizeof(types));
	for (unsigned int i = 0; i < b->nr_types; i++)
		type_ptrs[i] = &types[i];
	pr.n_sample_type = b->nr_types;
	pr.sample_type = type_ptrs;
	pr.sample = (pb_sample **)pointers(smp, b->nr_smp, sizeof(*smp));
	pr.n_sample = b->nr_smp;
	pr.mapping = (pb_mapping **)pointers(b->map, b->nr_map, sizeof(*b->map));
	pr.n_mapping = b->nr_map;
	pr.location = (pb_location **)pointers(loc, b->nr_loc, sizeof(*loc));
	pr.n_location = b->nr_loc;
	pr.function = (pb_function **)pointers(b->fn, b->nr_fn, sizeof(*b->fn));
	pr.n_function = b->nr_fn;
	/* the strings are the keys, in index order */
	pr.string_table = b->strings.keys;
	pr.n_string_table = b->strings.nr;
	pr.time_nanos = b->time_ns;
	pr.duration_nanos = b->duration_ns;
	pr.period_type = b->have_period_type ? &period_type : NULL;
	pr.period = b->period;
	pr.comment = (int64_t *)b->comments;
	pr.n_comment = b->nr_comments;
	pr.default_sample_type = b->default_type;
	if (!pr.sample || !pr.mapping || !pr.location || !pr.function)
		goto out;
	*len = perftools__profiles__profile__get_packed_size(&pr);
	*out = malloc(*len ? *len : 1);
	if (!*out)
		goto out;
	perftools__profiles__profile__pack(&pr, *out);
	ret = 0;
out:
	free(pr.sample);
	free(pr.mapping);
	free(pr.location);
	free(pr.function);
	return ret;
}
