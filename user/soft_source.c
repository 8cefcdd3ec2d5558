// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The no-PMU source: cpu-clock events, pending instructions to descriptors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "decode_cache.h"
#include "perf_events.h"
#include "pmu_attr.h"
#include "proc_maps.h"
#include "soft_source.h"

#define CP_SOFT_FORGET_BATCH	256

struct cp_soft_source {
	int pending_fd;
	int insns_fd;
	struct cp_decode_cache *decoded;
	struct cp_soft_registry installed;
	struct cp_soft_item *items;		/* CP_MAX_SOFT_PENDING */
	struct cp_soft_stats stats;
};

int cp_soft_events_open(struct cp_perf_events *set, const struct cp_cpuset *cpus, __u32 freq_hz,
			struct bpf_program *prog, char *err, size_t err_sz)
{
	struct cp_event_spec spec;

	cp_cpu_clock_spec(&spec, freq_hz);
	return cp_perf_events__open_cpus(set, &spec, cpus, prog, err, err_sz);
}

struct cp_soft_source *cp_soft_source__new(struct cacheperf *skel)
{
	struct cp_soft_source *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pending_fd = bpf_map__fd(skel->maps.soft_pending);
	s->insns_fd = bpf_map__fd(skel->maps.soft_insns);
	s->decoded = cp_decode_cache__new(0);
	s->items = calloc(CP_MAX_SOFT_PENDING, sizeof(*s->items));
	if (!s->decoded || !s->items ||
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
	if (!s)
		return;
	cp_decode_cache__free(s->decoded);
	cp_soft_registry_free(&s->installed);
	free(s->items);
	free(s);
}

/* Moves the pending entries into s->items, deleting them; returns how many. */
static size_t take_pending(struct cp_soft_source *s)
{
	struct cp_ip_key key, next;
	size_t n = 0;
	bool more;

	if (bpf_map_get_next_key(s->pending_fd, NULL, &key))
		return 0;
	do {
		/* the successor first: a deleted key has none */
		more = !bpf_map_get_next_key(s->pending_fd, &key, &next);
		if (!bpf_map_lookup_and_delete_elem(s->pending_fd, &key, &s->items[n].val))
			s->items[n++].key = key;
		key = next;
	} while (more && n < CP_MAX_SOFT_PENDING);
	return n;
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
	return 0;
}

int cp_soft_source__tick(struct cp_soft_source *s)
{
	size_t n = take_pending(s);
	struct cp_maps *maps = NULL;
	int maps_ret = 0, installed = 0;
	__u32 tgid = 0;

	s->stats.taken += n;
	cp_soft_items_sort(s->items, n);
	for (size_t i = 0; i < n; i++) {
		const struct cp_soft_item *it = &s->items[i];
		struct cp_operand op = { 0 };
		struct cp_soft_insn v;
		int get_ret = -ENOENT;

		if (i == 0 || it->key.tgid != tgid) {
			cp_maps__free(maps);
			maps = NULL;
			tgid = it->key.tgid;
			maps_ret = cp_maps__read(NULL, (pid_t)tgid, &maps);
		}
		if (!maps_ret)
			get_ret = cp_decode_cache__get(s->decoded, (pid_t)tgid, maps, it->key.ip, &op);
		if (cp_soft_decide(maps_ret, get_ret, &op, it->val.mm, &v) == CP_SOFT_GONE) {
			s->stats.gone++;
			continue;
		}
		if (!install(s, &it->key, &v))
			installed++;
	}
	cp_maps__free(maps);
	return installed;
}

void cp_soft_source__forget(struct cp_soft_source *s, __u32 tgid)
{
	struct cp_ip_key keys[CP_SOFT_FORGET_BATCH];
	size_t n;

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
