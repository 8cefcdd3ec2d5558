// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shared mappings between processes: their accesses in the file's own line space. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

#include "profile/shared_maps.h"

#define SLOTS (2 * CP_MAX_SHARED_FILES) /* the index: open addressing, at most half full */

/* A followed file. */
struct file {
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 space;	/* its line space */
	__u64 last_use; /* the table's access count at its last access */
	struct cp_shared_file f;
};

struct cp_shared_maps {
	struct file files[CP_MAX_SHARED_FILES];
	__u16 index[SLOTS]; /* 1 + the file's place in files[]; 0: free */
	__u64 uses;
	__u32 next_space; /* the next file's line space */
	struct cp_shared_maps_stats st;
};

struct cp_shared_maps *cp_shared_maps__new(void)
{
	struct cp_shared_maps *s = calloc(1, sizeof(*s));

	if (s)
		s->next_space = CP_SPACE_FILE_FIRST;
	return s;
}

void cp_shared_maps__free(struct cp_shared_maps *s)
{
	free(s);
}

static size_t home_of(__u64 inode, __u32 major, __u32 minor)
{
	__u64 h = cp_hash64(inode ^ cp_hash64((__u64)major << 32 | minor));

	return cp_hash_slot(cp_hash_fold(h, 29), 0, SLOTS - 1);
}

/* The index slot of @m's file, or the free slot where it would go. */
static size_t slot_of(const struct cp_shared_maps *s, __u64 inode, __u32 major, __u32 minor)
{
	size_t i = home_of(inode, major, minor);

	for (; s->index[i]; i = cp_probe_next(i, SLOTS - 1)) {
		const struct file *f = &s->files[s->index[i] - 1];

		if (f->inode == inode && f->dev_major == major && f->dev_minor == minor)
			break;
	}
	return i;
}

/*
 * At the cap: the least recently accessed file's place, which the caller
 * fills, and the index rebuilt without it (a file past the cap costs one
 * pass over the table: no deletion in the probe chains to get wrong).
 */
static size_t drop_coldest(struct cp_shared_maps *s)
{
	size_t victim = 0;

	for (size_t k = 1; k < s->st.files; k++)
		if (s->files[k].last_use < s->files[victim].last_use)
			victim = k;
	s->files[victim] = (struct file){0};
	memset(s->index, 0, sizeof(s->index));
	for (size_t k = 0; k < s->st.files; k++) {
		const struct file *f = &s->files[k];

		if (k != victim)
			s->index[slot_of(s, f->inode, f->dev_major, f->dev_minor)] = (__u16)(k + 1);
	}
	s->st.dropped++;
	return victim;
}

/* The file of @m, followed from now on if new; NULL when no space is left. */
static struct file *file_of(struct cp_shared_maps *s, const struct cp_map *m)
{
	size_t i = slot_of(s, m->inode, m->dev_major, m->dev_minor), k;
	struct file *f;

	if (s->index[i])
		return &s->files[s->index[i] - 1];
	/* never a space twice: lines of a dropped file must not meet a new one's */
	if (s->next_space < CP_SPACE_FILE_FIRST)
		return NULL;
	if (s->st.files < CP_MAX_SHARED_FILES) {
		k = s->st.files++;
	} else {
		k = drop_coldest(s);
		i = slot_of(s, m->inode, m->dev_major, m->dev_minor);
	}
	s->index[i] = (__u16)(k + 1);
	f = &s->files[k];
	*f = (struct file){.inode = m->inode,
			   .dev_major = m->dev_major,
			   .dev_minor = m->dev_minor,
			   .space = s->next_space++};
	snprintf(f->f.name, sizeof(f->f.name), "%s%s", m->path ? m->path : "",
		 m->deleted ? " (deleted)" : "");
	return f;
}

bool cp_shared_maps__place(struct cp_shared_maps *s, const struct cp_map *m, __u64 *addr,
			   __u32 *space)
{
	struct file *f = file_of(s, m);
	__u64 end = m->offset + (m->end - m->start);

	if (!f) {
		s->st.refused++;
		return false;
	}
	f->last_use = ++s->uses;
	if (end > f->f.mapped)
		f->f.mapped = end;
	*addr = m->offset + (*addr - m->start);
	*space = f->space;
	s->st.given++;
	return true;
}

int cp_shared_maps__file(const struct cp_shared_maps *s, __u32 space, struct cp_shared_file *out)
{
	for (size_t k = 0; k < s->st.files; k++) {
		if (s->files[k].space == space) {
			*out = s->files[k].f;
			return 0;
		}
	}
	return -ENOENT;
}

void cp_shared_maps__stats(const struct cp_shared_maps *s, struct cp_shared_maps_stats *out)
{
	*out = s->st;
}
