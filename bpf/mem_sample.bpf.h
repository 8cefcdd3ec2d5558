/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The memory-sample pipeline, kernel side: decode, count per instruction,
 * count per (instruction, user stack) when the entry point read the stack,
 * judge in the per-CPU miss-ratio window, forward to the ring buffer.
 * Every entry point (the perf_event programs, the test and bench programs,
 * the soft-tick source) builds a struct cp_mem_input and calls
 * cp_mem_sample_ctx() (the tests' programs, without a perf_event context:
 * cp_mem_sample()), so what the tests run is what profiles.
 */
#ifndef CACHEPERF_MEM_SAMPLE_BPF_H
#define CACHEPERF_MEM_SAMPLE_BPF_H

#include "cacheperf.bpf.h"
#include "wakeup.bpf.h"
#include "stacks.bpf.h"
#include "cacheperf/data_src.h"
#include "cacheperf/window.h"

_Static_assert(CP_STACK_MISS == 1u << 1 && CP_STACK_TICK == 1u << 2 && CP_STACK_L1_HIT == 1u << 4,
	       "cp_mem_pipeline() shifts a miss, a tick and an L1 hit into these bits");
_Static_assert(CP_SAMPLE_MISS == 1u << 1 && CP_SAMPLE_NA == 1u << 2,
	       "cp_mem_pipeline() finds an L1 hit in these bits of its flags");

/* Counters are shared by all CPUs: atomic adds (BPF_XADD, the value is unused). */
#define cp_add(ptr, val) __sync_fetch_and_add((ptr), (val))

/* Initial value of a new counter entry; read-only data, not 160 bytes of stack. */
static const struct cp_ip_counts cp_zero_counts;

/* True when the sample of @tgid is profiled; counts the others. */
static __always_inline bool cp_mem_wanted(__u32 tgid)
{
	if (cp_is_target(tgid))
		return true;
	cp_add(&stats.not_target, 1);
	return false;
}

/* Writes one struct cp_sample to the ring buffer; 1 if written, 0 if dropped. */
static __always_inline int cp_mem_emit(__u32 tgid, __u32 tid, __u32 cpu, __u64 ip, __u64 addr,
				       __u64 data_src, __u64 weight, __u64 time_ns, __u32 flags,
				       __u16 size)
{
	struct cp_sample *r;

	r = cp_events_reserve(sizeof(*r), CP_RINGBUF_FILL_SAMPLES);
	if (!r) {
		cp_add(&stats.drop_ringbuf, 1);
		return 0;
	}
	r->type = CP_REC_SAMPLE;
	r->tgid = tgid;
	r->tid = tid;
	r->cpu = cpu;
	r->ip = ip;
	r->addr = addr;
	r->data_src = data_src;
	r->weight = weight;
	r->time_ns = time_ns;
	r->flags = flags;
	r->size = size;
	r->__pad = 0;
	/*
	 * Wake the reader per batch, not per sample, and at most once a
	 * millisecond per CPU (wakeup.bpf.h): a wakeup is an irq_work and an
	 * IPI (a VM exit in a guest) charged to the interrupted target; once
	 * the soft source charges most ticks to an access (skid) that is
	 * thousands a second, and a reader that lags would be woken by every
	 * one. cp_drain__poll() reads what waits when its timeout ends, and
	 * the loop polls every CP_TICK_MS. The limit reads the clock itself,
	 * only once the threshold is passed: @time_ns may be a window entry's
	 * older time, or synthetic in tests.
	 */
	bpf_ringbuf_submit(r, cp_wakeup_flag(0, 0));
	cp_add(&stats.forwarded, 1);
	return 1;
}

/* The counters of @key, created on first sight; NULL (counted) when the map is full. */
static __always_inline struct cp_ip_counts *cp_ip_counts_get(const struct cp_ip_key *key)
{
	struct cp_ip_counts *c;

	c = bpf_map_lookup_elem(&ip_counts, key);
	if (c)
		return c;
	/* NOEXIST: another CPU may have created it meanwhile; keep theirs */
	bpf_map_update_elem(&ip_counts, key, &cp_zero_counts, BPF_NOEXIST);
	c = bpf_map_lookup_elem(&ip_counts, key);
	if (!c)
		cp_add(&stats.drop_ipmap, 1);
	return c;
}

/* Adds the sample to its instruction's counters, creating them on first sight. */
static __always_inline void cp_mem_count_ip(const struct cp_mem_input *s,
					    const struct cp_data_src *d, __u32 kind)
{
	struct cp_ip_key key = {.tgid = s->tgid, .__pad = 0, .ip = s->ip};
	struct cp_ip_counts *c = cp_ip_counts_get(&key);
	__u32 lvl = d->lvl;

	if (!c)
		return;
	if (kind == CP_ACCESS_STORE) {
		cp_add(&c->stores, 1);
		if (d->miss)
			cp_add(&c->store_misses, 1);
	} else {
		cp_add(&c->loads, 1);
		if (d->miss)
			cp_add(&c->load_misses, 1);
	}
	if (d->snoop == CP_SNOOP_HITM)
		cp_add(&c->hitm, 1);
	if (s->weight)
		cp_add(&c->lat_sum, s->weight);
	if (lvl < CP_LVL_NR)
		cp_add(&c->lvl[lvl], 1);
}

/*
 * Forwards the misses a window push selected, oldest first; returns how many
 * records were written. A plain bounded loop, so 5.x kernels verify it; it
 * costs ~150k verified instructions per program on 6.18 (bpf_loop or an
 * open-coded iterator would be cheaper to verify but need 5.17 / 6.4).
 */
static __always_inline int cp_mem_flush(struct cp_window *w, const struct cp_window_verdict *v,
					__u32 size, __u32 cpu)
{
	__u32 from = v->fwd_from, left = v->fwd_cnt;
	int sent = 0;

	for (__u32 i = 0; i < CP_WINDOW_MAX; i++) {
		__u32 slot = from + i;
		struct cp_window_entry *e;

		if (!left)
			break;
		if (slot >= size)
			slot -= size;
		e = &w->e[slot & (CP_WINDOW_MAX - 1)];
		if (!(e->flags & CP_SAMPLE_MISS))
			continue;
		sent += cp_mem_emit(e->tgid, e->tid, cpu, e->ip, e->addr, e->data_src, e->weight,
				    e->time_ns, e->flags, 0);
		left--;
	}
	return sent;
}

/*
 * The pipeline for one sample of a target process. Returns the number of
 * records it wrote to the ring buffer (this sample and earlier misses of its
 * window), so tests can check each step. Every sample, forwarded or not, is
 * counted on its user call stack (the callers' shares are of all of them):
 * the stack at @ctx's registers (a perf_event program's), or s->stack_id
 * when @ctx is NULL (test programs); one in cp_stack_every_of() (every
 * one unless a test or the bench sets targ_stack_every). Chosen, read
 * and counted inside global functions, so that nothing of it is live at the
 * window's loop: a stack id or a choice that was would multiply the states
 * the verifier walks through the loop, past 1M. The verifier knows a
 * perf_event program's ctx is not NULL, so the test branch is dead there.
 */
static __always_inline int cp_mem_pipeline(const struct cp_mem_input *s, void *ctx)
{
	struct cp_window_verdict v;
	struct cp_window_entry *e;
	struct cp_data_src d;
	struct cp_window *w;
	__u32 kind, flags, idx;
	__u64 src, what;

	/* IBS before swfilt (6.14) samples the kernel too: its system calls are not the target's code */
	if (s->kernel) {
		cp_add(&stats.kernel_ip, 1);
		return 0;
	}
	src = cp_data_src_for_event(s->event, s->data_src);
	cp_data_src_decode(src, &d);
	/* IBS samples every op: only loads and stores are memory accesses */
	if (d.op != CP_OP_LOAD && d.op != CP_OP_STORE && !targ_forward_all) {
		cp_add(&stats.not_mem, 1);
		return 0;
	}
	kind = d.op == CP_OP_STORE ? CP_ACCESS_STORE : CP_ACCESS_LOAD;
	flags = kind == CP_ACCESS_STORE ? CP_SAMPLE_STORE : 0;
	if (d.miss)
		flags |= CP_SAMPLE_MISS;
	if (d.lvl == CP_LVL_NA)
		flags |= CP_SAMPLE_NA;

	cp_add(&stats.samples[kind], 1);
	if (d.miss)
		cp_add(&stats.misses[kind], 1);
	else if (d.lvl == CP_LVL_NA)
		cp_add(&stats.na[kind], 1);
	cp_mem_count_ip(s, &d, kind);
	/* shifts, not branches: one state on the way to the window's loop */
	/* an L1 hit: neither CP_SAMPLE_MISS nor CP_SAMPLE_NA, in bits, not branches */
	what = CP_STACK_ARG(s->tgid, CP_STACK_SAMPLE | ((__u32)d.miss << 1) |
					     ((s->ticks & 1) << 2) |
					     ((~(flags >> 1 | flags >> 2) & 1) << 4));
	if (ctx)
		cp_stack_walked(ctx, what, s->ip, s->weight);
	else /* test programs: on the stack they name, chosen alike */
		cp_stack_counted(s->stack_id, what | CP_STACK_ARG(0, CP_STACK_CHOOSE), s->ip,
				 s->weight);

	if (targ_forward_all)
		return cp_mem_emit(s->tgid, s->tid, s->cpu, s->ip, s->addr, src, s->weight,
				   s->time_ns, flags | CP_SAMPLE_ALL, s->size);

	idx = s->cpu * CP_ACCESS_NR + kind;
	w = bpf_map_lookup_elem(&windows, &idx);
	if (!w) {
		cp_add(&stats.drop_window, 1);
		return 0;
	}
	cp_window_push(w, targ_window_size, targ_window_ratio_ppm, flags, &v);
	if (v.aged_out)
		cp_add(&stats.filtered, 1);
	if (!(flags & CP_SAMPLE_MISS))
		return 0;

	e = &w->e[v.slot & (CP_WINDOW_MAX - 1)];
	e->ip = s->ip;
	e->addr = s->addr;
	e->data_src = src;
	e->time_ns = s->time_ns;
	e->tgid = s->tgid;
	e->tid = s->tid;
	e->weight = s->weight > 0xffffffffULL ? 0xffffffffU : s->weight;
	if (!v.fwd_cnt)
		return 0;
	/* the common case above the ratio: only the new miss is pending */
	if (v.fwd_cnt == 1 && v.fwd_from == v.slot)
		return cp_mem_emit(s->tgid, s->tid, s->cpu, s->ip, s->addr, src, s->weight,
				   s->time_ns, flags, 0);
	return cp_mem_flush(w, &v, cp_window_size(targ_window_size), s->cpu);
}

/* The pipeline for a test program's sample: s->stack_id is its stack. */
static __always_inline int cp_mem_sample(const struct cp_mem_input *s)
{
	return cp_mem_pipeline(s, NULL);
}

/* The pipeline for a perf_event program's sample: its user stack read at @ctx. */
static __always_inline int cp_mem_sample_ctx(const struct cp_mem_input *s, void *ctx)
{
	return cp_mem_pipeline(s, ctx);
}

#endif /* CACHEPERF_MEM_SAMPLE_BPF_H */
