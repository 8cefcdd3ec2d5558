// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Breakpoint sampling: the manager's decisions carried out with perf events and bp_insns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/bp_arm.h"
#include "live/bp_sampler.h"
#include "machine/cpuset.h"
#include "decode/decode_cache.h"
#include "live/perf_events.h"
#include "machine/pmu_attr.h"
#include "objects/proc_maps.h"

#define CP_BP_PRUNE_NS 1000000000ull /* candidate pruning, at most once a second */
/* ticks closer than this do nothing: the loop may wake for every ring-buffer batch */
#define CP_BP_TICK_NS 10000000ull

struct armed {
	__u32 tgid;
	__u64 ip;
	struct cp_perf_events *events;
};

struct cp_bp_sampler {
	struct cp_bp_sampler_cfg cfg;
	struct cp_bp_manager *m;
	struct cp_decode_cache *decoded;
	int map_fd;
	struct cp_cpuset cpus; /* per-CPU events go on these */
	struct armed armed[CP_MAX_BP_INSNS];
	int nr_armed;
	bool stopped;
	__u64 pruned_ns;
	__u64 ticked_ns;
	struct cp_bp_insn entry; /* scratch: a final BPF entry */
	struct cp_bp_summary sum;
};

struct cp_bp_sampler *cp_bp_sampler__new(const struct cp_bp_sampler_cfg *cfg)
{
	struct cp_bp_manager_cfg mcfg = {
		.expiry_ns = cfg->expiry_ns,
		.max_rate = cfg->max_rate,
		.per_cpu = cfg->per_cpu,
		.by_time = cfg->by_time,
	};
	struct cp_bp_sampler *s;
	int ret;

	if (!cfg->skel || !cfg->l1.line_bytes || !cfg->l1.sets || !cfg->l1.ways) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->map_fd = bpf_map__fd(cfg->skel->maps.bp_insns);
	s->m = cp_bp_manager__new(&mcfg);
	s->decoded = cp_decode_cache__new(0);
	if (!s->m || !s->decoded) {
		ret = s->m ? ENOMEM : EINVAL;
		cp_bp_sampler__free(s);
		errno = ret;
		return NULL;
	}
	if (cfg->per_cpu) {
		ret = cp_perf_online_cpus(cfg->sysfs_root ? cfg->sysfs_root : "/", &s->cpus);
		if (ret < 0) {
			cp_bp_sampler__free(s);
			errno = -ret;
			return NULL;
		}
	}
	s->sum.expiry_ms = cfg->expiry_ns / 1000000;
	s->sum.max_rate = cfg->max_rate;
	return s;
}

void cp_bp_sampler__note_miss(struct cp_bp_sampler *s, __u32 tgid, __u32 cpu, __u64 ip, __u64 addr,
			      __u64 now_ns)
{
	cp_bp_manager__note_miss(s->m, tgid, cpu, ip,
				 cp_l1_set(addr, s->cfg.l1.line_bytes, s->cfg.l1.sets), now_ns);
}

/* Closes the events of armed[@i] (no hit after this), delivers the history, forgets the entry. */
static void release(struct cp_bp_sampler *s, int i, enum cp_bp_manager_reason reason, __u64 now_ns)
{
	struct armed a = s->armed[i];
	struct cp_bp_finding f;

	cp_perf_events__free(a.events);
	s->armed[i] = s->armed[--s->nr_armed];
	if (cp_bp_read(s->map_fd, a.tgid, a.ip, &s->entry)) {
		memset(&s->entry, 0, sizeof(s->entry));
	} else {
		cp_bp_disarm(s->map_fd, a.tgid, a.ip);
	}
	cp_bp_finding_of(&s->entry, a.tgid, a.ip, reason, &s->cfg.l1, &f);
	if (f.accesses && s->cfg.on_history)
		s->cfg.on_history(s->cfg.ctx, &f, &s->entry);
	cp_bp_summary_add(&s->sum, &f);
	cp_bp_manager__released(s->m, a.tgid, a.ip, reason, f.accesses, now_ns);
}

/* perf_event_open's "no such event here" errors: breakpoints do not work on this machine. */
static int open_errno(int err)
{
	return err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP ? -EOPNOTSUPP : err;
}

/* Arms @p: decoded operand into bp_insns, then its events. 0 or a negative errno. */
static int arm(struct cp_bp_sampler *s, const struct cp_bp_manager_pick *p)
{
	struct cp_perf_events *events;
	struct cp_maps *maps = NULL;
	struct cp_event_spec spec;
	struct cp_operand op;
	char err[256];
	int ret;

	ret = cp_maps__read(NULL, (pid_t)p->tgid, &maps);
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	ret = cp_decode_cache__get(s->decoded, (pid_t)p->tgid, maps, p->ip, &op);
	cp_maps__free(maps);
	if (ret)
		return ret;
	ret = cp_bp_arm(s->map_fd, p->tgid, p->ip, &op);
	if (ret)
		return ret;
	events = cp_perf_events__new();
	if (!events) {
		cp_bp_disarm(s->map_fd, p->tgid, p->ip);
		return -ENOMEM;
	}
	cp_breakpoint_spec(&spec, p->ip);
	if (s->cfg.per_cpu)
		ret = cp_perf_events__open_cpus(events, &spec, &s->cpus,
						s->cfg.skel->progs.on_breakpoint, err, sizeof(err));
	else
		ret = cp_perf_events__open_threads(events, &spec, (pid_t)p->tgid,
						   s->cfg.skel->progs.on_breakpoint, err,
						   sizeof(err));
	if (ret < 0) {
		cp_perf_events__free(events);
		cp_bp_disarm(s->map_fd, p->tgid, p->ip);
		return open_errno(ret);
	}
	s->armed[s->nr_armed].tgid = p->tgid;
	s->armed[s->nr_armed].ip = p->ip;
	s->armed[s->nr_armed].events = events;
	s->nr_armed++;
	return 0;
}

static void say_enospc(struct cp_bp_sampler *s, const struct cp_bp_manager_pick *p)
{
	if (!s->cfg.log)
		return;
	if (s->cfg.per_cpu)
		fprintf(s->cfg.log,
			"cacheperf-bpf: hardware breakpoint slots are taken (a debugger or another "
			"profiler?): watching %d instruction(s) for now, trying again in %llu s\n",
			s->nr_armed, CP_BPM_RETRY_NS / 1000000000ull);
	else
		fprintf(s->cfg.log,
			"cacheperf-bpf: hardware breakpoint slots of process %u are taken (a "
			"debugger or another profiler?): fewer breakpoints there for now, trying "
			"again in %llu s\n",
			p->tgid, CP_BPM_RETRY_NS / 1000000000ull);
}

/* Arms the best candidates while slots and budget allow. */
static void fill(struct cp_bp_sampler *s, const struct cp_insn_store *insns,
		 const struct cp_miss_store *misses, __u64 now_ns)
{
	struct cp_bp_manager_pick p;

	if (s->stopped)
		return;
	cp_bp_manager__hits(s->m, s->cfg.skel->bss->bp_stats.hits, now_ns);
	while (s->nr_armed < CP_MAX_BP_INSNS &&
	       cp_bp_manager__next(s->m, insns, misses, now_ns, &p)) {
		int ret = arm(s, &p);

		if (ret == -ENOSPC)
			say_enospc(s, &p);
		if (cp_bp_manager__armed(s->m, &p, ret, now_ns)) {
			if (s->cfg.log)
				fprintf(s->cfg.log,
					"cacheperf-bpf: breakpoint sampling off: this machine "
					"refuses hardware breakpoints (%s)\n",
					strerror(-ret));
			break;
		}
	}
	cp_bp_manager__stats(s->m, &s->sum.stats);
}

static int find_armed(const struct cp_bp_sampler *s, __u32 tgid, __u64 ip)
{
	for (int i = 0; i < s->nr_armed; i++)
		if (s->armed[i].tgid == tgid && s->armed[i].ip == ip)
			return i;
	return -1;
}

void cp_bp_sampler__on_event(struct cp_bp_sampler *s, const struct cp_bp_event *e,
			     const struct cp_insn_store *insns, const struct cp_miss_store *misses,
			     __u64 now_ns)
{
	int i = find_armed(s, e->tgid, e->ip);

	if (i >= 0)
		release(s, i, e->kind == CP_BP_CONFLICT ? CP_BPM_SETTLED : CP_BPM_FULL, now_ns);
	fill(s, insns, misses, now_ns);
}

void cp_bp_sampler__tick(struct cp_bp_sampler *s, const struct cp_insn_store *insns,
			 const struct cp_miss_store *misses, __u64 now_ns)
{
	if (now_ns < s->ticked_ns + CP_BP_TICK_NS)
		return;
	s->ticked_ns = now_ns;
	cp_bp_manager__hits(s->m, s->cfg.skel->bss->bp_stats.hits, now_ns);
	for (int i = s->nr_armed - 1; i >= 0; i--) {
		struct cp_bp_manager_view v = {0};
		enum cp_bp_manager_reason why;

		/* an entry that vanished reads as idle since arming */
		if (!cp_bp_read(s->map_fd, s->armed[i].tgid, s->armed[i].ip, &s->entry)) {
			v.state = s->entry.state;
			v.recorded = s->entry.claimed;
			v.last_ns = s->entry.last_ns;
		}
		why = cp_bp_manager__check(s->m, s->armed[i].tgid, s->armed[i].ip, &v, now_ns);
		if (why != CP_BPM_KEEP)
			release(s, i, why, now_ns);
	}
	if (now_ns >= s->pruned_ns + CP_BP_PRUNE_NS) {
		cp_bp_manager__prune(s->m, now_ns);
		s->pruned_ns = now_ns;
	}
	fill(s, insns, misses, now_ns);
}

void cp_bp_sampler__forget(struct cp_bp_sampler *s, __u32 tgid, __u64 now_ns)
{
	for (int i = s->nr_armed - 1; i >= 0; i--)
		if (s->armed[i].tgid == tgid)
			release(s, i, CP_BPM_GONE, now_ns);
	cp_bp_manager__forget(s->m, tgid);
	cp_decode_cache__forget(s->decoded, (pid_t)tgid);
}

void cp_bp_sampler__stop(struct cp_bp_sampler *s, __u64 now_ns)
{
	s->stopped = true;
	while (s->nr_armed)
		release(s, s->nr_armed - 1, CP_BPM_GONE, now_ns);
	cp_bp_manager__hits(s->m, s->cfg.skel->bss->bp_stats.hits, now_ns);
	cp_bp_manager__stats(s->m, &s->sum.stats);
}

const struct cp_bp_summary *cp_bp_sampler__summary(const struct cp_bp_sampler *s)
{
	return &s->sum;
}

void cp_bp_sampler__free(struct cp_bp_sampler *s)
{
	if (!s)
		return;
	if (s->m)
		cp_bp_sampler__stop(s, 0);
	cp_bp_manager__free(s->m);
	cp_decode_cache__free(s->decoded);
	free(s);
}

void cp_bp_sampler__set_rate(struct cp_bp_sampler *s, __u32 max_rate)
{
	cp_bp_manager__set_rate(s->m, max_rate);
}
