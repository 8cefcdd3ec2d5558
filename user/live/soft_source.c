// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The no-PMU source: cpu-clock events, pending instructions to descriptors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "decode/decode_cache.h"
#include "live/drain.h"
#include "live/perf_events.h"
#include "machine/pmu_attr.h"
#include "objects/proc_maps.h"
#include "decode/skid.h"
#include "live/soft_source.h"
#include "symbols/symbolizer.h"
#include "util/clock.h"
#include "util/log.h"

#define CP_SOFT_FORGET_BATCH 256
/*
 * Instructions whose operand and charge are kept (96 bytes each, 3 MiB):
 * under -a a build's compilers tick at tens of thousands of instructions
 * of one binary, and with the decode cache's default of 4096, 49735 of
 * 53833 decoded in 15 s were evicted and decoded again, each charge's
 * function swept again.
 */
#define CP_SOFT_DECODED 32768

/* A process's maps snapshot, kept for the next ticks (cp_soft_maps_reuse()). */
struct kept_maps {
	__u32 tgid;
	int err;       /* of the read: 0, or a negative errno (maps NULL) */
	__u64 read_ns; /* 0: a free slot */
	struct cp_maps *maps;
};

struct cp_soft_source {
	int pending_fd;
	int insns_fd;
	struct cp_decode_cache *decoded;
	struct cp_soft_registry installed;
	struct cp_soft_item *items; /* CP_MAX_SOFT_PENDING */
	size_t nr_items;	    /* taken by the last take_pending() */
	bool no_lookup_and_delete;  /* cp_map_drain()'s */
	struct cp_symbolizer *sym;  /* function bounds for the skid walk; NULL: none */
	__u8 *code;		    /* CP_SKID_MAX_FUNC_BYTES: the walked function */
	struct kept_maps kept[CP_SOFT_MAPS_KEPT];
	__u64 max_maps_bytes;		/* what the kept snapshots may hold (kept_fit()) */
	struct cp_soft_seen_slot *seen; /* CP_SOFT_SEEN_SLOTS: ticked once, not decoded */
	__u64 seen_once;		/* instructions taken and left for their next tick */
	struct cp_soft_stats stats;
};

int cp_soft_events_open(struct cp_perf_events *set, const struct cp_cpuset *cpus, __u32 freq_hz,
			struct bpf_program *prog, char *err, size_t err_sz)
{
	struct cp_event_spec spec;

	cp_cpu_clock_spec(&spec, freq_hz);
	return cp_perf_events__open_cpus(set, &spec, cpus, prog, err, err_sz);
}

struct cp_soft_source *cp_soft_source__new(struct cacheperf *skel, struct cp_symbolizer *sym)
{
	struct cp_soft_source *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pending_fd = bpf_map__fd(skel->maps.soft_pending);
	s->insns_fd = bpf_map__fd(skel->maps.soft_insns);
	s->decoded = cp_decode_cache__new(CP_SOFT_DECODED);
	s->items = calloc(CP_MAX_SOFT_PENDING, sizeof(*s->items));
	s->sym = sym;
	s->max_maps_bytes = cp_maps_kept_max_bytes(0);
	s->code = malloc(CP_SKID_MAX_FUNC_BYTES);
	s->seen = calloc(CP_SOFT_SEEN_SLOTS, sizeof(*s->seen));
	if (!s->decoded || !s->items || !s->code || !s->seen ||
	    cp_soft_registry_init(&s->installed, bpf_map__max_entries(skel->maps.soft_insns))) {
		cp_soft_source__free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (s->pending_fd < 0 || s->insns_fd < 0) {
		cp_soft_source__free(s);
		errno = EBADF;
		return NULL;
	}
	return s;
}

void cp_soft_source__free(struct cp_soft_source *s)
{
	struct cp_decode_cache_stats st;

	if (!s)
		return;
	if (s->decoded) {
		cp_decode_cache__stats(s->decoded, &st);
		cp_log(CP_LOG_INFO,
		       "soft source: %llu instructions left for their next tick; %llu decoded, "
		       "%llu found decoded, %llu evicted; %llu charges found decided; %llu "
		       "functions swept, %llu sweeps found kept",
		       (unsigned long long)s->seen_once, (unsigned long long)st.decodes,
		       (unsigned long long)st.hits, (unsigned long long)st.evictions,
		       (unsigned long long)st.charge_hits, (unsigned long long)st.walks,
		       (unsigned long long)st.walk_hits);
	}
	cp_decode_cache__free(s->decoded);
	for (int i = 0; i < CP_SOFT_MAPS_KEPT; i++)
		cp_maps__free(s->kept[i].maps);
	cp_soft_registry_free(&s->installed);
	free(s->items);
	free(s->code);
	free(s->seen);
	free(s);
}

static void take_item(void *ctx, const void *key, const void *val)
{
	struct cp_soft_source *s = ctx;
	struct cp_soft_item *it = &s->items[s->nr_items++];

	memcpy(&it->key, key, sizeof(it->key));
	memcpy(&it->val, val, sizeof(it->val));
}

/* Moves the pending entries into s->items, deleting them; returns how many. */
static size_t take_pending(struct cp_soft_source *s)
{
	s->nr_items = 0;
	cp_map_drain(s->pending_fd, sizeof(struct cp_ip_key), sizeof(struct cp_soft_pending),
		     CP_MAX_SOFT_PENDING, &s->no_lookup_and_delete, take_item, s);
	return s->nr_items;
}

static int install(struct cp_soft_source *s, const struct cp_ip_key *key,
		   const struct cp_soft_insn *v)
{
	int ret;

	if (bpf_map_update_elem(s->insns_fd, key, v, BPF_ANY)) {
		s->stats.drop_insns++;
		return -errno;
	}
	ret = cp_soft_registry_add(&s->installed, key);
	if (ret < 0) {
		/* not forgettable: better no descriptor than one that outlives an exec */
		bpf_map_delete_elem(s->insns_fd, key);
		s->stats.drop_insns++;
		return ret;
	}
	if (v->op.status == CP_OPND_OK)
		s->stats.descriptors++;
	else
		s->stats.markers++;
	if (v->charge_ip)
		s->stats.skid++;
	return 0;
}

/*
 * The code of the function holding @ip in process @pid, read whole from the
 * mapped file into s->code: its size, with its entry in @entry and the
 * entry's key in @key, or a negative errno (-ENOENT: no sized function
 * symbol holds @ip; -EAGAIN: its file waits for its parse worker, nothing
 * about it is decided yet).
 */
static int func_code(struct cp_soft_source *s, pid_t pid, const struct cp_maps *maps, __u64 ip,
		     __u64 *entry, struct cp_decode_key *key)
{
	struct cp_symbol_info info;
	const struct cp_map *map;
	int n = s->sym ? cp_symbolizer__resolve_now(s->sym, pid, ip, 0, &info) : -ENOENT;

	if (n == -EAGAIN)
		return n;
	if (n || !info.sym_size || info.sym_size > CP_SKID_MAX_FUNC_BYTES || ip < info.sym_start ||
	    ip - info.sym_start >= info.sym_size)
		return -ENOENT;
	map = cp_maps__find(maps, info.sym_start);
	if (!map || info.sym_start + info.sym_size > map->end)
		return -ENOENT;
	n = cp_insn_read(s->decoded, pid, map, info.sym_start, s->code, (size_t)info.sym_size);
	if (n < 0 || (__u64)n != info.sym_size)
		return n < 0 ? n : -EIO;
	*entry = info.sym_start;
	cp_decode_key_of(pid, map, info.sym_start, key);
	return n;
}

/* A load's charge: a read-modify-write when the code right after it stores its bytes back. */
static int load_charge(struct cp_soft_source *s, pid_t pid, const struct cp_maps *maps, __u64 ip,
		       const struct cp_operand *op, struct cp_decode_charge *ch)
{
	/* only the straight-line code from it matters */
	const struct cp_map *map = cp_maps__find(maps, ip);
	int n = map ? cp_insn_read(s->decoded, pid, map, ip, s->code, CP_SKID_RMW_BYTES) : -ENOENT;

	if (n <= 0)
		return n < 0 ? n : -EIO;
	ch->rmw = cp_skid_stored_back(s->code, (size_t)n, 0, op);
	return 0;
}

/*
 * What the ticks on the instruction at @ip of process @pid, whose operand
 * is @op, are charged to, decided from the code into @ch: the access
 * before it (cp_skid_charge(), from the code of its function), or, for a
 * load whose bytes the code right after it stores back, @op made a
 * read-modify-write; or neither. 0, or a negative errno when the code
 * could not be read (or, for an instruction without an access of its own,
 * its function found); an access in no sized function symbol keeps its
 * ticks.
 */
static int decide_charge(struct cp_soft_source *s, pid_t pid, const struct cp_maps *maps, __u64 ip,
			 const struct cp_operand *op, struct cp_decode_charge *ch)
{
	bool own = op->status == CP_OPND_OK;
	const struct cp_code_walk *walk;
	struct cp_decode_key fkey;
	struct cp_skid sk;
	__u64 entry;
	int n;

	memset(ch, 0, sizeof(*ch));
	if (!own && !cp_skid_applies(op->status))
		return 0;
	n = func_code(s, pid, maps, ip, &entry, &fkey);
	if (n == -ENOENT && own)
		return op->access == CP_OPND_READ ? load_charge(s, pid, maps, ip, op, ch) : 0;
	if (n < 0)
		return n;
	/* the function's sweep, kept for its other instructions (NULL: swept for this one);
	 * an entry has no instruction before it, and needs none */
	walk = ip == entry ? NULL : cp_decode_cache__walk(s->decoded, &fkey, s->code, (size_t)n);
	if (cp_skid_charge(s->code, (size_t)n, walk, (size_t)(ip - entry), op, &sk) ==
	    CP_SKID_CHARGE) {
		ch->to_prev = true;
		ch->back = (__u32)(ip - entry - sk.prev_off);
		ch->op = sk.op;
	} else if (own && op->access == CP_OPND_READ) {
		ch->rmw = cp_skid_stored_back(s->code, (size_t)n, (size_t)(ip - entry), op);
	}
	return 0;
}

/*
 * The charge of the ticks on @ip (decide_charge()), kept with its operand
 * for the code's file position: the processes of one binary (a build's
 * thousand compilers) read and walk a function once, not each. @op made a
 * read-modify-write when it is one; @prev filled and returned when the
 * ticks go to the access before, else NULL.
 */
static struct cp_soft_prev *charge_of(struct cp_soft_source *s, pid_t pid,
				      const struct cp_maps *maps, __u64 ip, struct cp_operand *op,
				      struct cp_soft_prev *prev)
{
	const struct cp_map *map = cp_maps__find(maps, ip);
	struct cp_decode_charge ch;
	struct cp_decode_key key;

	if (!map)
		return NULL;
	cp_decode_key_of(pid, map, ip, &key);
	if (!cp_decode_cache__charge(s->decoded, &key, &ch)) {
		/* not kept when the code could not be read: a later tick tries again */
		if (decide_charge(s, pid, maps, ip, op, &ch))
			return NULL;
		cp_decode_cache__set_charge(s->decoded, &key, &ch);
	}
	if (ch.rmw)
		op->access = CP_OPND_RMW;
	if (!ch.to_prev)
		return NULL;
	prev->op = ch.op;
	prev->ip = ip - ch.back;
	/* charged past an access of its own (decide_charge()) */
	prev->past_access = op->status == CP_OPND_OK;
	return prev;
}

/*
 * The maps of process @tgid for an instruction at @ip, as of @now_ns (this
 * tick): the kept snapshot while cp_soft_maps_reuse() says it serves, or
 * read again (at most once a tick: a snapshot of this tick is never read
 * again; nor one sooner than its read's cost says, or cut short while the
 * bank could not read it whole: cp_maps_may_refresh()), in the slot of the
 * process or the least recently read one. Returns the read's result, @out
 * set when 0.
 */
/*
 * The kept snapshots' bytes within their cap: the least recently read
 * others than @keep (just read) let go. A tenant's processes of 16 MiB
 * maps each made the eight kept 128 MiB and more.
 */
static void kept_fit(struct cp_soft_source *s, const struct kept_maps *keep)
{
	for (;;) {
		struct kept_maps *old = NULL;
		__u64 bytes = 0;

		for (int i = 0; i < CP_SOFT_MAPS_KEPT; i++) {
			struct kept_maps *k = &s->kept[i];

			if (!k->maps)
				continue;
			bytes += k->maps->bytes;
			if (k != keep && (!old || k->read_ns < old->read_ns))
				old = k;
		}
		if (bytes <= s->max_maps_bytes || !old)
			return;
		cp_maps__free(old->maps);
		*old = (struct kept_maps){0};
	}
}

void cp_soft_source__set_max_maps_bytes(struct cp_soft_source *s, __u64 max)
{
	s->max_maps_bytes = max;
}

static int maps_for(struct cp_soft_source *s, __u32 tgid, __u64 ip, __u64 now_ns,
		    const struct cp_maps **out)
{
	struct kept_maps *k = &s->kept[0];
	const struct cp_maps_how *how;

	for (int i = 0; i < CP_SOFT_MAPS_KEPT; i++) {
		if (s->kept[i].read_ns && s->kept[i].tgid == tgid) {
			k = &s->kept[i];
			break;
		}
		if (s->kept[i].read_ns < k->read_ns)
			k = &s->kept[i];
	}
	how = k->maps ? &k->maps->how : NULL;
	if (!k->read_ns || k->tgid != tgid ||
	    (k->read_ns != now_ns &&
	     !cp_soft_maps_reuse(k->read_ns, now_ns, !k->err && cp_maps__find(k->maps, ip)) &&
	     (k->err || cp_maps_may_refresh(how, k->read_ns, how ? how->cost_ns : 0, 0)))) {
		cp_maps__free(k->maps);
		k->maps = NULL;
		k->tgid = tgid;
		k->read_ns = now_ns;
		k->err = cp_maps__read(NULL, (pid_t)tgid, &k->maps);
		kept_fit(s, k);
	}
	*out = k->maps;
	return k->err;
}

int cp_soft_source__tick(struct cp_soft_source *s)
{
	size_t n = take_pending(s);
	const struct cp_maps *maps = NULL;
	int maps_ret = 0, installed = 0;
	__u64 now = n ? cp_now_ns() : 0;

	cp_soft_items_sort(s->items, n);
	for (size_t i = 0; i < n; i++) {
		const struct cp_soft_item *it = &s->items[i];
		__u32 tgid = it->key.tgid;
		struct cp_operand op = {0};
		struct cp_soft_prev prev, *pp = NULL;
		struct cp_soft_insn v;
		int get_ret = -ENOENT;

		/* decoded at its second tick: most instructions of -a's short processes get one */
		if (!cp_soft_seen_again(s->seen, &it->key, now)) {
			s->seen_once++;
			continue;
		}
		s->stats.taken++; /* the report's "instructions decoded" */
		maps_ret = maps_for(s, tgid, it->key.ip, now, &maps);
		if (!maps_ret)
			get_ret = cp_decode_cache__get(s->decoded, (pid_t)tgid, maps, it->key.ip,
						       &op);
		if (!get_ret)
			pp = charge_of(s, (pid_t)tgid, maps, it->key.ip, &op, &prev);
		if (cp_soft_decide(maps_ret, get_ret, &op, pp, it->val.mm, &v) == CP_SOFT_GONE) {
			s->stats.gone++;
			continue;
		}
		if (!install(s, &it->key, &v))
			installed++;
	}
	return installed;
}

void cp_soft_source__forget(struct cp_soft_source *s, __u32 tgid)
{
	struct cp_ip_key keys[CP_SOFT_FORGET_BATCH];
	size_t n;

	cp_decode_cache__forget(s->decoded, (pid_t)tgid);
	/* a new address space, or none: its snapshot goes */
	for (int i = 0; i < CP_SOFT_MAPS_KEPT; i++) {
		if (s->kept[i].read_ns && s->kept[i].tgid == tgid) {
			cp_maps__free(s->kept[i].maps);
			s->kept[i] = (struct kept_maps){0};
		}
	}
	do {
		n = cp_soft_registry_take_tgid(&s->installed, tgid, keys, CP_SOFT_FORGET_BATCH);
		for (size_t i = 0; i < n; i++)
			if (!bpf_map_delete_elem(s->insns_fd, &keys[i]))
				s->stats.forgotten++;
	} while (n == CP_SOFT_FORGET_BATCH);
}

void cp_soft_source__stats(const struct cp_soft_source *s, struct cp_soft_stats *out)
{
	*out = s->stats;
}
