// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The no-PMU source's decisions (pure). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/skid.h"
#include "decode/soft_decide.h"
#include "util/hash.h"

enum cp_soft_action cp_soft_decide(int maps_ret, int get_ret, const struct cp_operand *op,
				   const struct cp_soft_prev *prev, __u64 mm,
				   struct cp_soft_insn *out)
{
	if (maps_ret)
		return CP_SOFT_GONE;
	memset(out, 0, sizeof(*out));
	out->mm = mm;
	if (get_ret) {
		/* [vsyscall], or code unmapped since the tick: nothing to read there */
		out->op.status = CP_OPND_UNREADABLE;
		return CP_SOFT_INSTALL;
	}
	if (prev && prev->ip && prev->op.status == CP_OPND_OK &&
	    (cp_skid_applies(op->status) || (prev->past_access && op->status == CP_OPND_OK))) {
		out->op = prev->op;
		out->charge_ip = prev->ip;
		return CP_SOFT_INSTALL;
	}
	out->op = *op;
	return CP_SOFT_INSTALL;
}

static int cmp_item(const void *a, const void *b)
{
	const struct cp_soft_item *x = a, *y = b;

	if (x->key.tgid != y->key.tgid)
		return x->key.tgid < y->key.tgid ? -1 : 1;
	if (x->key.ip != y->key.ip)
		return x->key.ip < y->key.ip ? -1 : 1;
	return 0;
}

void cp_soft_items_sort(struct cp_soft_item *items, size_t n)
{
	qsort(items, n, sizeof(*items), cmp_item);
}

bool cp_soft_maps_reuse(__u64 read_ns, __u64 now_ns, bool holds)
{
	return holds && now_ns >= read_ns && now_ns - read_ns < CP_SOFT_MAPS_MAX_AGE_NS;
}

_Static_assert((CP_SOFT_SEEN_SLOTS & (CP_SOFT_SEEN_SLOTS - 1)) == 0,
	       "CP_SOFT_SEEN_SLOTS is a power of two");

bool cp_soft_seen_again(struct cp_soft_seen_slot *slots, const struct cp_ip_key *key, __u64 now_ns)
{
	/* full avalanche: the slot takes the low bits, the tag all of them */
	__u64 h = cp_splitmix64(key->ip ^ ((__u64)key->tgid << 47 | (__u64)key->tgid >> 17));
	struct cp_soft_seen_slot *sl = &slots[cp_hash_slot(h, 0, CP_SOFT_SEEN_SLOTS - 1)];
	bool young = sl->ns && now_ns >= sl->ns && now_ns - sl->ns < CP_SOFT_SEEN_MAX_AGE_NS;

	h |= 1; /* a tag, never 0 */
	if (young) {
		if (sl->tag == h)
			sl->ns = 0; /* its second sighting: decoded, the slot free again */
		return true;	    /* or another's: not taken from it, decoded at once */
	}
	sl->tag = h;
	sl->ns = now_ns ? now_ns : 1;
	return false;
}

int cp_soft_registry_init(struct cp_soft_registry *r, size_t cap)
{
	r->keys = calloc(cap ? cap : 1, sizeof(*r->keys));
	r->nr = 0;
	r->cap = cap;
	return r->keys ? 0 : -ENOMEM;
}

void cp_soft_registry_free(struct cp_soft_registry *r)
{
	free(r->keys);
	memset(r, 0, sizeof(*r));
}

int cp_soft_registry_add(struct cp_soft_registry *r, const struct cp_ip_key *key)
{
	/*
	 * A key comes again when on_tick met its entry with another mm (an
	 * exec not forgotten yet). A scan: at most CP_MAX_SOFT_INSNS compares
	 * (~10 us) per install, next to the maps read and decode before it.
	 */
	for (size_t i = 0; i < r->nr; i++)
		if (r->keys[i].tgid == key->tgid && r->keys[i].ip == key->ip)
			return 1;
	if (r->nr == r->cap)
		return -ENOSPC;
	r->keys[r->nr].tgid = key->tgid;
	r->keys[r->nr].__pad = 0;
	r->keys[r->nr].ip = key->ip;
	r->nr++;
	return 0;
}

size_t cp_soft_registry_take_tgid(struct cp_soft_registry *r, __u32 tgid, struct cp_ip_key *out,
				  size_t cap)
{
	size_t n = 0, i = 0;

	while (i < r->nr && n < cap) {
		if (r->keys[i].tgid != tgid) {
			i++;
			continue;
		}
		out[n++] = r->keys[i];
		/* the last one fills the hole; look at index i again */
		r->keys[i] = r->keys[--r->nr];
	}
	return n;
}
