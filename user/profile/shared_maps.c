// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shared mappings between processes: one process's addresses for a file's bytes. */
#include <stdlib.h>

#include "util/hash.h"

#include "profile/shared_maps.h"

#define SLOTS (2 * CP_MAX_SHARED_FILES) /* open addressing, at most half full */

/* A shared file and the mapping of it whose addresses its accesses take. */
struct view {
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 tgid; /* the lender; 0: none (it exec'd), the next access lends */
	bool used;
	__u64 start; /* the lender's mapping of the file */
	__u64 end;
	__u64 offset; /* file offset at start */
};

struct cp_shared_maps {
	struct view slots[SLOTS];
	struct cp_shared_maps_stats st;
};

struct cp_shared_maps *cp_shared_maps__new(void)
{
	return calloc(1, sizeof(struct cp_shared_maps));
}

void cp_shared_maps__free(struct cp_shared_maps *s)
{
	free(s);
}

/* The view of @m's file, taken if new; NULL when the table is full. */
static struct view *view_of(struct cp_shared_maps *s, const struct cp_map *m)
{
	__u64 dev = (__u64)m->dev_major << 32 | m->dev_minor;
	size_t mask = SLOTS - 1, i = cp_hash_slot(cp_hash64(m->inode ^ cp_hash64(dev)), 0, mask);

	for (; s->slots[i].used; i = cp_probe_next(i, mask))
		if (s->slots[i].inode == m->inode && s->slots[i].dev_major == m->dev_major &&
		    s->slots[i].dev_minor == m->dev_minor)
			return &s->slots[i];
	if (s->st.files >= CP_MAX_SHARED_FILES)
		return NULL;
	s->st.files++;
	s->slots[i] = (struct view){.inode = m->inode,
				    .dev_major = m->dev_major,
				    .dev_minor = m->dev_minor,
				    .used = true};
	return &s->slots[i];
}

bool cp_shared_maps__place(struct cp_shared_maps *s, __u32 tgid, const struct cp_map *m,
			   __u64 *addr, __u32 *space)
{
	struct view *v = view_of(s, m);
	__u64 file_off = m->offset + (*addr - m->start);

	if (!v) {
		s->st.full++;
		return false;
	}
	if (!v->tgid) {
		v->tgid = tgid;
		v->start = m->start;
		v->end = m->end;
		v->offset = m->offset;
	}
	if (v->tgid == tgid)
		return false;
	if (file_off < v->offset || file_off - v->offset >= v->end - v->start) {
		s->st.outside++;
		return false;
	}
	*addr = v->start + (file_off - v->offset);
	*space = v->tgid;
	s->st.moved++;
	return true;
}

void cp_shared_maps__forget(struct cp_shared_maps *s, __u32 tgid)
{
	for (size_t i = 0; i < SLOTS; i++)
		if (s->slots[i].used && s->slots[i].tgid == tgid)
			s->slots[i].tgid = 0;
}

void cp_shared_maps__stats(const struct cp_shared_maps *s, struct cp_shared_maps_stats *out)
{
	*out = s->st;
}
