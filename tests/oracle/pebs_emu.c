// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The simulated PEBS run: samples, windows, counters, objects, breakpoint histories, recording. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cacheperf/abi.h"
#include "cacheperf/alloc.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf/window.h"
#include "breakpoints/bp_manager.h"
#include "symbols/build_id.h"
#include "machine/event_spec.h"
#include "util/grow.h"
#include "profile/insn_store.h"
#include "record/rec_io.h"

#include "pebs_emu.h"

#define MAX_IPS		65536	/* instructions counted; more are dropped (drop_ipmap) */
#define START_NS	1000000000ull

/* One armed instruction and the accesses its breakpoint saw. */
struct armed {
	__u64 ip;
	__u32 n;
	__u64 last_ns;
	struct cp_bp_access hist[CP_BP_HISTORY];
};

struct core {
	__u64 left[CP_ACCESS_NR];	/* events until the next sample */
	__u64 period[CP_ACCESS_NR];
	struct cp_window win[CP_ACCESS_NR];
};

struct cp_pebs_emu {
	struct cp_pebs_emu_cfg cfg;
	struct core core[CP_SIM_MAX_CORES];
	struct cp_insn *insns;		/* counters, one per instruction */
	__u32 *index;			/* open-addressing index into insns, 0 empty */
	size_t nr_insns;
	struct cp_rec_buf events;	/* u32 size, then the record, in order */
	struct cp_stats bpf;
	struct cp_bp_manager *bpm;
	struct armed armed[CP_BPM_SLOTS];
	__u32 nr_armed;
	__u64 bp_hits;
	__u64 histories;
	__u64 objects;		/* object events */
	__u64 accesses;
	__u64 next_tick;
	__u64 rng;
};

static __u64 now_of(const struct cp_pebs_emu *e)
{
	return START_NS + e->accesses * e->cfg.ns_per_access;
}

static __u64 rnd(struct cp_pebs_emu *e)
{
	e->rng ^= e->rng << 13;
	e->rng ^= e->rng >> 7;
	e->rng ^= e->rng << 17;
	return e->rng;
}

struct cp_pebs_emu *cp_pebs_emu__new(const struct cp_pebs_emu_cfg *cfg)
{
	struct cp_bp_manager_cfg bcfg = { .expiry_ns = cfg->bp_expiry_ns,
					   .max_rate = cfg->bp_rate };
	struct cp_pebs_emu *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->rng = cfg->seed | 1;
	e->insns = calloc(MAX_IPS, sizeof(*e->insns));
	e->index = calloc(2 * MAX_IPS, sizeof(*e->index));
	e->bpm = cp_bp_manager__new(&bcfg);
	if (!e->insns || !e->index || !e->bpm || !cfg->cores || cfg->cores > CP_SIM_MAX_CORES) {
		cp_pebs_emu__free(e);
		return NULL;
	}
	for (__u32 c = 0; c < cfg->cores; c++) {
		/* the live events: one per CPU, its period jittered with the CPU as key */
		e->core[c].period[CP_ACCESS_LOAD] = cp_period_jitter(cfg->load_period,
						cfg->jitter_pct, cfg->seed, c, 1);
		e->core[c].period[CP_ACCESS_STORE] = cp_period_jitter(cfg->store_period,
						cfg->jitter_pct, cfg->seed, c + 1000, 1);
		/* the counters start at a random phase: the program was not started with them */
		for (int k = 0; k < CP_ACCESS_NR; k++)
			e->core[c].left[k] = 1 + rnd(e) % e->core[c].period[k];
	}
	e->next_tick = START_NS + CP_PEBS_EMU_TICK_NS;
	return e;
}

void cp_pebs_emu__free(struct cp_pebs_emu *e)
{
	if (!e)
		return;
	cp_bp_manager__free(e->bpm);
	free(e->insns);
	free(e->index);
	cp_rec_buf_free(&e->events);
	free(e);
}

static void add_event(struct cp_pebs_emu *e, const void *rec, __u32 size)
{
	cp_rec_put_u32(&e->events, size);
	cp_rec_put(&e->events, rec, size);
}

static struct cp_insn *insn_of(struct cp_pebs_emu *e, __u64 ip)
{
	size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 20) & (2 * MAX_IPS - 1);

	for (; e->index[i]; i = (i + 1) & (2 * MAX_IPS - 1))
		if (e->insns[e->index[i] - 1].key.ip == ip)
			return &e->insns[e->index[i] - 1];
	if (e->nr_insns == MAX_IPS) {
		e->bpf.drop_ipmap++;
		return NULL;
	}
	e->insns[e->nr_insns].key = (struct cp_ip_key){ .tgid = (__u32)e->cfg.pid, .ip = ip };
	e->index[i] = (__u32)++e->nr_insns;
	return &e->insns[e->nr_insns - 1];
}

/* PEBS data_src and latency of an access served at @level (Skylake-style lvl_num encoding). */
static __u64 data_src_of(enum cp_sim_level level, bool write, __u64 *weight)
{
	static const struct {
		__u64 lvl, num, snoop, weight;
	} loads[CP_SIM_LEVEL_NR] = {
		[CP_SIM_L1] = { CP_MEM_LVL_L1, CP_MEM_LVLNUM_L1, CP_MEM_SNOOP_NONE, 5 },
		[CP_SIM_L2] = { CP_MEM_LVL_L2, CP_MEM_LVLNUM_L2, CP_MEM_SNOOP_NONE, 14 },
		[CP_SIM_L3] = { CP_MEM_LVL_L3, CP_MEM_LVLNUM_L3, CP_MEM_SNOOP_HIT, 45 },
		[CP_SIM_HITM] = { CP_MEM_LVL_L3, CP_MEM_LVLNUM_L3, CP_MEM_SNOOP_HITM, 75 },
		[CP_SIM_DRAM] = { CP_MEM_LVL_LOC_RAM, CP_MEM_LVLNUM_RAM, CP_MEM_SNOOP_MISS, 220 },
	};
	__u64 na = CP_MEM_S(LOCK, NA) | CP_MEM_S(TLB, NA);

	if (write) {
		/* precise stores report only whether L1 had the line (intel_pmu precise_store_data) */
		*weight = 0;
		return CP_MEM_S(OP, STORE) | na | CP_MEM_S(SNOOP, NA) | CP_MEM_S(LVLNUM, L1) |
		       ((level == CP_SIM_L1 ? CP_MEM_LVL_HIT : CP_MEM_LVL_MISS) | CP_MEM_LVL_L1)
		       << CP_MEM_LVL_SHIFT;
	}
	*weight = loads[level].weight;
	return CP_MEM_S(OP, LOAD) | na | (loads[level].lvl | CP_MEM_LVL_HIT) << CP_MEM_LVL_SHIFT |
	       loads[level].num << CP_MEM_LVLNUM_SHIFT | loads[level].snoop << CP_MEM_SNOOP_SHIFT;
}

/* One sample through the BPF pipeline (bpf/mem_sample.bpf.h, cp_mem_sample). */
static void sample(struct cp_pebs_emu *e, __u32 tid, __u32 core, __u64 ip, __u64 addr,
		   bool write, enum cp_sim_level level)
{
	__u32 kind = write ? CP_ACCESS_STORE : CP_ACCESS_LOAD, flags = write ? CP_SAMPLE_STORE : 0;
	struct cp_window *w = &e->core[core].win[kind];
	struct cp_window_verdict v;
	struct cp_window_entry *ent;
	struct cp_data_src d;
	struct cp_insn *in;
	__u64 weight, src = data_src_of(level, write, &weight);

	cp_data_src_decode(src, &d);
	if (d.miss)
		flags |= CP_SAMPLE_MISS;
	e->bpf.samples[kind]++;
	e->bpf.misses[kind] += d.miss;
	in = insn_of(e, ip);
	if (in) {
		struct cp_ip_counts *c = &in->counts;

		if (write) {
			c->stores++;
			c->store_misses += d.miss;
		} else {
			c->loads++;
			c->load_misses += d.miss;
		}
		c->hitm += d.snoop == CP_SNOOP_HITM;
		c->lat_sum += weight;
		c->lvl[d.lvl < CP_LVL_NR ? d.lvl : CP_LVL_NA]++;
	}
	cp_window_push(w, e->cfg.window, e->cfg.window_ratio_ppm, flags, &v);
	e->bpf.filtered += v.aged_out;
	if (!(flags & CP_SAMPLE_MISS))
		return;
	ent = &w->e[v.slot];
	*ent = (struct cp_window_entry){
		.ip = ip, .addr = addr, .data_src = src, .time_ns = now_of(e),
		.tgid = (__u32)e->cfg.pid, .tid = (__u32)e->cfg.pid + tid, .weight = (__u32)weight,
		.flags = flags,
	};
	for (__u32 i = 0, slot = v.fwd_from, left = v.fwd_cnt; left && i < CP_WINDOW_MAX; i++) {
		const struct cp_window_entry *f = &w->e[slot];

		if (f->flags & CP_SAMPLE_MISS) {
			struct cp_sample s = {
				.type = CP_REC_SAMPLE, .tgid = f->tgid, .tid = f->tid, .cpu = core,
				.ip = f->ip, .addr = f->addr, .data_src = f->data_src,
				.weight = f->weight, .time_ns = f->time_ns, .flags = f->flags,
			};

			add_event(e, &s, sizeof(s));
			e->bpf.forwarded++;
			/* the live run hands forwarded misses to the breakpoint manager */
			cp_bp_manager__note_miss(e->bpm, f->tgid, core, f->ip,
						 cp_l1_set(f->addr,
							   e->cfg.cache[CP_CACHE_L1D].line_bytes,
							   e->cfg.cache[CP_CACHE_L1D].sets),
						 f->time_ns);
			left--;
		}
		slot = cp_window_next(slot, cp_window_size(e->cfg.window));
	}
}

/* Lets armed[@i] go: its history becomes the CP_REC_HISTORY record the live run writes. */
static void release(struct cp_pebs_emu *e, __u32 i, enum cp_bp_manager_reason why, __u64 now)
{
	struct armed *a = &e->armed[i];
	struct cp_history_record h = {
		.type = CP_REC_HISTORY, .tgid = (__u32)e->cfg.pid, .ip = a->ip, .nr = a->n,
	};

	for (__u32 k = 0; k < a->n; k++)
		h.addrs[k] = a->hist[k].addr;
	if (a->n) {
		add_event(e, &h, sizeof(h));
		e->histories++;
	}
	cp_bp_manager__released(e->bpm, (__u32)e->cfg.pid, a->ip, why, a->n, now);
	e->armed[i] = e->armed[--e->nr_armed];
}

/* bp_sampler's tick: budget, expiry, then arm what the manager picks. */
static void tick(struct cp_pebs_emu *e, __u64 now)
{
	struct cp_bp_manager_pick p;

	cp_bp_manager__hits(e->bpm, e->bp_hits, now);
	for (__u32 i = 0; i < e->nr_armed; i++) {
		struct cp_bp_manager_view v = { .state = CP_BP_ARMED, .recorded = e->armed[i].n,
					 .last_ns = e->armed[i].last_ns };
		enum cp_bp_manager_reason why =
			cp_bp_manager__check(e->bpm, (__u32)e->cfg.pid, e->armed[i].ip, &v, now);

		if (why != CP_BPM_KEEP)
			release(e, i--, why, now);
	}
	while (e->nr_armed < CP_BPM_SLOTS && cp_bp_manager__next(e->bpm, NULL, NULL, now, &p)) {
		e->armed[e->nr_armed++] = (struct armed){ .ip = p.ip };
		cp_bp_manager__armed(e->bpm, &p, 0, now);
	}
}

/* An access of an armed instruction: the breakpoint's hit (bpf/breakpoint.bpf.c). */
static void bp_hit(struct cp_pebs_emu *e, __u32 i, __u32 tid, __u64 addr, __u64 now)
{
	const struct cp_cache_level *l1 = &e->cfg.cache[CP_CACHE_L1D];
	struct armed *a = &e->armed[i];

	e->bp_hits++;
	a->hist[a->n++] = (struct cp_bp_access){
		.addr = addr, .time_ns = now, .tid = tid,
		.set = cp_l1_set(addr, l1->line_bytes, l1->sets),
	};
	a->last_ns = now;
	if (a->n == CP_BP_HISTORY)
		release(e, i, CP_BPM_FULL, now);
	else if (cp_bp_conflict_run(a->hist, a->n - 1, l1->line_bytes, cp_bp_settle_run(l1->ways)))
		release(e, i, CP_BPM_SETTLED, now);
}

void cp_pebs_emu__access(struct cp_pebs_emu *e, __u32 tid, __u32 core, __u64 ip, __u64 addr,
			 __u32 size, bool write, enum cp_sim_level level)
{
	struct core *c = &e->core[core % e->cfg.cores];
	__u32 kind = write ? CP_ACCESS_STORE : CP_ACCESS_LOAD;
	__u64 now = now_of(e);

	(void)size;
	e->accesses++;
	if (e->cfg.breakpoints) {
		if (now >= e->next_tick) {
			tick(e, now);
			e->next_tick = now + CP_PEBS_EMU_TICK_NS;
		}
		for (__u32 i = 0; i < e->nr_armed; i++) {
			if (e->armed[i].ip == ip) {
				bp_hit(e, i, tid, addr, now);
				break;
			}
		}
	}
	if (--c->left[kind])
		return;
	c->left[kind] = c->period[kind];
	sample(e, tid, core % e->cfg.cores, ip, addr, write, level);
}

void cp_pebs_emu__object(struct cp_pebs_emu *e, __u32 tid, __u64 ip, __u64 addr, __u64 size,
			 bool alloc)
{
	struct cp_object_event ev = {
		.type = CP_REC_OBJECT, .kind = alloc ? CP_OBJ_EV_ALLOC : CP_OBJ_EV_FREE,
		.func = alloc ? CP_FN_MALLOC : CP_FN_FREE, .tgid = (__u32)e->cfg.pid,
		.tid = (__u32)e->cfg.pid + tid, .addr = addr, .size = size,
		.caller = ip + 1,	/* the return address, as the probes read it */
		.stack_id = -1, .time_ns = now_of(e),
	};

	add_event(e, &ev, sizeof(ev));
	e->objects++;
}

void cp_pebs_emu__stats(const struct cp_pebs_emu *e, struct cp_pebs_emu_stats *out)
{
	*out = (struct cp_pebs_emu_stats){
		.samples = { e->bpf.samples[0], e->bpf.samples[1] },
		.misses = { e->bpf.misses[0], e->bpf.misses[1] },
		.forwarded = e->bpf.forwarded, .filtered = e->bpf.filtered,
		.histories = e->histories, .bp_hits = e->bp_hits,
	};
}

static void write_info(struct cp_pebs_emu *e, struct cp_rec_writer *w, struct cp_rec_buf *b)
{
	struct cp_run_info in = {
		.source = CP_SOURCE_PEBS, .nr_targets = 1, .launched = true, .start_ns = START_NS,
		.load_period = e->cfg.load_period, .store_period = e->cfg.store_period,
		.ldlat_cycles = 3, .window = e->cfg.window, .window_ratio_ppm = e->cfg.window_ratio_ppm,
	};

	snprintf(in.source_reason, sizeof(in.source_reason),
		 "pebs: simulated by the oracle from a complete memory trace (tests/oracle)");
	in.targets[0].pid = e->cfg.pid;
	snprintf(in.targets[0].comm, sizeof(in.targets[0].comm), "%s", e->cfg.comm);
	memcpy(in.cache, e->cfg.cache, sizeof(in.cache));
	cp_rec_encode_info(b, &in);
	cp_rec_writer__section(w, CP_SEC_HEADER, b->p, b->len);
	b->len = 0;
}

static void write_maps(struct cp_pebs_emu *e, struct cp_rec_writer *w, struct cp_rec_buf *b,
		       const char *maps, size_t len, const char *exe)
{
	struct cp_rec_build_id id = { 0 };
	struct stat st;
	int n;

	for (__u32 who = CP_REC_MAPS_OBJECTS; who <= CP_REC_MAPS_SYMBOLS; who++) {
		cp_rec_encode_maps(b, &(struct cp_rec_maps){ .pid = e->cfg.pid, .who = who,
							     .text = maps, .len = len });
		cp_rec_writer__section(w, CP_SEC_MAPS, b->p, b->len);
		b->len = 0;
	}
	snprintf(id.path, sizeof(id.path), "%s", exe);
	id.inode = stat(exe, &st) ? 0 : st.st_ino;
	n = cp_build_id_read(exe, id.id, sizeof(id.id));
	id.id_len = n > 0 ? (__u32)n : 0;
	cp_rec_encode_build_id(b, &id);
	cp_rec_writer__section(w, CP_SEC_BUILD_ID, b->p, b->len);
	b->len = 0;
}

int cp_pebs_emu__write(struct cp_pebs_emu *e, const char *path, const char *maps, size_t maps_len,
		       const char *exe, char *err, size_t err_sz)
{
	struct cp_rec_writer *w = cp_rec_writer__open(path, err, err_sz);
	struct cp_proc_event exit_ev = { .type = CP_REC_PROC, .kind = CP_PROC_EXIT };
	struct cp_run_end end = { 0 };
	struct cp_rec_buf b = { 0 };
	__u64 now = now_of(e);
	int ret;

	if (!w)
		return -EIO;
	while (e->nr_armed)
		release(e, 0, CP_BPM_GONE, now);
	write_info(e, w, &b);
	write_maps(e, w, &b, maps, maps_len, exe);
	for (size_t off = 0; off + 4 <= e->events.len;) {
		__u32 size;

		memcpy(&size, e->events.p + off, 4);
		cp_rec_writer__event(w, e->events.p + off + 4, size);
		off += 4 + size;
	}
	cp_rec_encode_counters(&b, e->insns, e->nr_insns);
	cp_rec_writer__section(w, CP_SEC_COUNTERS, b.p, b.len);
	b.len = 0;
	exit_ev.tgid = (__u32)e->cfg.pid;
	exit_ev.time_ns = now;
	cp_rec_writer__event(w, &exit_ev, sizeof(exit_ev));
	end.end_ns = now;
	snprintf(end.end_reason, sizeof(end.end_reason), "the command exited with status 0");
	end.bpf = e->bpf;
	end.have_alloc = true;	/* every allocation was traced */
	end.alloc.bpf.events = e->objects;
	cp_rec_encode_end(&b, &end);
	cp_rec_writer__section(w, CP_SEC_END, b.p, b.len);
	ret = b.oom || e->events.oom ? -ENOMEM : 0;
	cp_rec_buf_free(&b);
	if (cp_rec_writer__close(w) && !ret)
		ret = -EIO;
	if (ret)
		snprintf(err, err_sz, "%s: writing the recording failed (%d)", path, ret);
	return ret;
}
