// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stack counters' drain and the stack map's sweep (see stack_drain.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "live/stack_drain.h"

/* The frames of one stack id, read once, kept while the id is in use. */
struct known {
	__u32 used;   /* the interval that last used it; 0: not read */
	__u32 spared; /* the sweep that found it unused and kept it; 0: none since its use */
	__u32 nr;
	__u32 kind; /* enum cp_stack_kind told to BPF; 0: not judged */
	__u64 pcs[CP_STACK_DEPTH];
};

struct cp_stack_drain {
	struct cacheperf *skel;
	/* by stack id: ids are bucket numbers, below the map's size (cacheperf/stack_walk.h).
	 * Calloc'd, so the pages of ids never used are never touched. */
	struct known *ids;
	__u32 nr_ids;
	__u32 interval; /* 1, 2, ...: the one filling */
	bool no_lookup_and_delete;
	__u64 lost;
	struct cp_stack_unwinder u; /* whole == NULL: no copies */
	struct cp_stack_copy_tally copies;
	/* of the take in progress */
	struct cp_stack_sample *out;
	size_t n;
};

int cp_stack_copies_prepare(struct cacheperf *skel, __u32 copy_bytes)
{
	int err = 0;

	skel->rodata->targ_stack_copy_bytes =
		copy_bytes < CP_USTACK_BYTES ? copy_bytes : CP_USTACK_BYTES;
	/* off: a page of ring (its least) and one kind, never used */
	if (!copy_bytes)
		err = bpf_map__set_max_entries(skel->maps.stack_copies, 4096)
			      ?: bpf_map__set_max_entries(skel->maps.stack_kinds, 1);
	return err;
}

struct cp_stack_drain *cp_stack_drain__new(struct cacheperf *skel)
{
	struct cp_stack_drain *sd = calloc(1, sizeof(*sd));

	if (!sd)
		return NULL;
	sd->skel = skel;
	sd->interval = 1;
	sd->nr_ids = CP_MAX_SAMPLE_STACKS;
	sd->ids = calloc(sd->nr_ids, sizeof(*sd->ids));
	if (!sd->ids) {
		free(sd);
		errno = ENOMEM;
		return NULL;
	}
	return sd;
}

void cp_stack_drain__free(struct cp_stack_drain *sd)
{
	if (!sd)
		return;
	free(sd->ids);
	free(sd);
}

/* Reads the frames of @id from the map into @k; false when it is gone. */
static bool read_stack(struct cp_stack_drain *sd, __u32 id, struct known *k)
{
	__u64 v[CP_STACK_DEPTH] = {0};
	__u32 nr = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(sd->skel->maps.sample_stacks), &id, v))
		return false;
	/* the map's value is zero-filled past the walk's last frame */
	while (nr < CP_STACK_DEPTH && v[nr])
		nr++;
	if (!nr)
		return false;
	memcpy(k->pcs, v, nr * sizeof(v[0]));
	k->nr = nr;
	return true;
}

/*
 * Judges the walk of @id just read into @k, with copies on, and tells BPF:
 * whole (or cut at CP_STACK_DEPTH, which CFI would cut too) or short.
 */
static void judge(struct cp_stack_drain *sd, __u32 tgid, __u32 id, struct known *k)
{
	__u32 kind;

	if (!sd->u.whole || k->kind)
		return;
	kind = k->nr >= CP_STACK_DEPTH || sd->u.whole(sd->u.ctx, tgid, k->pcs, k->nr)
		       ? CP_STACK_KIND_WHOLE
		       : CP_STACK_KIND_SHORT;
	if (!bpf_map_update_elem(bpf_map__fd(sd->skel->maps.stack_kinds), &id, &kind, BPF_ANY))
		k->kind = kind;
}

/*
 * The frames of stack @id of process @tgid, read from the map at the id's
 * first use since a sweep and judged; NULL when @id is out of range or gone.
 */
static struct known *known_stack(struct cp_stack_drain *sd, __u32 tgid, __s32 id)
{
	struct known *k;

	if (id < 0 || (__u32)id >= sd->nr_ids)
		return NULL;
	k = &sd->ids[id];
	if (!k->used && !read_stack(sd, (__u32)id, k))
		return NULL;
	judge(sd, tgid, (__u32)id, k);
	return k;
}

/*
 * True when frames whose first is @first can be those of a counter of
 * @ip: the instruction itself, or for a skid tick (the time charged to the
 * access before) the instruction after it, at most 15 bytes on.
 */
static bool first_frame_fits(__u64 first, __u64 ip)
{
	return first >= ip && first - ip < 16;
}

static void take_one(void *ctx, const void *key_p, const void *val)
{
	struct cp_stack_drain *sd = ctx;
	struct cp_stack_sample *o = &sd->out[sd->n];
	struct cp_stack_key key;
	struct known *k;

	memcpy(&key, key_p, sizeof(key));
	k = known_stack(sd, key.tgid, key.stack_id);
	if (!k || !first_frame_fits(k->pcs[0], key.ip)) {
		sd->lost++;
		return;
	}
	k->used = sd->interval;
	k->spared = 0;
	o->tgid = key.tgid;
	o->nr = k->nr;
	memcpy(o->pcs, k->pcs, k->nr * sizeof(k->pcs[0]));
	o->pcs[0] = key.ip;
	memcpy(&o->c, val, sizeof(o->c));
	sd->n++;
}

int cp_stack_drain__take(struct cp_stack_drain *sd, struct cp_stack_sample *out, size_t cap,
			 size_t *moved)
{
	int ret;

	sd->out = out;
	sd->n = 0;
	ret = cp_map_drain(bpf_map__fd(sd->skel->maps.stack_counts), sizeof(struct cp_stack_key),
			   sizeof(struct cp_stack_counts), cap, &sd->no_lookup_and_delete, take_one,
			   sd);
	sd->out = NULL;
	*moved = sd->n;
	return ret;
}

int cp_stack_drain__copy(struct cp_stack_drain *sd, const struct cp_sample_ustack_record *r,
			 struct cp_stack_sample *out)
{
	__u64 cfi[CP_STACK_DEPTH];
	const __u64 *pcs = NULL;
	struct known *k = NULL;
	size_t nr = 0, n = 0;

	sd->copies.copies++;
	k = known_stack(sd, r->tgid, r->stack_id);
	if (k) {
		k->used = sd->interval;
		k->spared = 0;
		pcs = k->pcs;
		nr = k->nr;
	}
	if (!k || k->kind != CP_STACK_KIND_WHOLE) {
		n = sd->u.unwind ? sd->u.unwind(sd->u.ctx, &r->u, cfi, CP_STACK_DEPTH) : 0;
		if (n > nr) {
			pcs = cfi;
			nr = n;
			sd->copies.deeper++;
		}
	}
	if (!nr) {
		sd->lost++;
		return -ENOENT;
	}
	out->tgid = r->tgid;
	out->nr = (__u32)nr;
	memcpy(out->pcs, pcs, nr * sizeof(*pcs));
	out->pcs[0] = r->ip;
	out->c = r->c;
	return 0;
}

void cp_stack_drain__set_unwinder(struct cp_stack_drain *sd, const struct cp_stack_unwinder *u)
{
	sd->u = u ? *u : (struct cp_stack_unwinder){0};
}

struct cp_stack_copy_tally cp_stack_drain__copies(const struct cp_stack_drain *sd)
{
	return sd->copies;
}

int cp_stack_drain__sweep(struct cp_stack_drain *sd)
{
	int fd = bpf_map__fd(sd->skel->maps.sample_stacks), deleted = 0;
	int kinds = bpf_map__fd(sd->skel->maps.stack_kinds);
	__u32 *ids, n;

	if (fd < 0)
		return fd;
	/* listed first, deleted after; a stack BPF adds meanwhile is swept the next time */
	ids = malloc(sd->nr_ids * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	n = cp_map_keys_u32(fd, ids, sd->nr_ids);
	for (__u32 i = 0; i < n; i++) {
		__u32 id = ids[i];

		if (id >= sd->nr_ids || sd->ids[id].used == sd->interval)
			continue;
		/*
		 * Unused at one sweep only: BPF may have made it after the take,
		 * its counter waiting for the next one (deleted, every sample
		 * of that stack was lost: a path's whole share beside CPU hogs)
		 */
		if (!sd->ids[id].spared) {
			sd->ids[id].spared = sd->interval;
			continue;
		}
		if (!bpf_map_delete_elem(fd, &id))
			deleted++;
		/* after the stack: a new one in the bucket meanwhile keeps no stale kind for long
		 */
		if (sd->ids[id].kind)
			bpf_map_delete_elem(kinds, &id);
		sd->ids[id].used = 0;
		sd->ids[id].spared = 0;
		sd->ids[id].kind = 0;
	}
	free(ids);
	sd->interval++;
	return deleted;
}

__u64 cp_stack_drain__lost(const struct cp_stack_drain *sd)
{
	return sd->lost;
}
