/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The classifier tests' fixture: an instruction store, a miss store, a
 * 32 KiB 8-way L1D, objects and source lines of a fake work.c, and helpers
 * that feed synthetic sample streams. Included by test_classify*.c.
 */
#ifndef CP_TEST_CLASSIFY_FIXTURE_H
#define CP_TEST_CLASSIFY_FIXTURE_H

#include "classify/classify.h"

#define TGID	100
#define PEER_TGID	200	/* a second process, its instructions in peer.c */
#define MAX_OBJS 64

/* 32 KiB, 8-way, 64-byte lines: 64 sets; addresses 4 KiB apart share a set */
static const struct cp_cache_level l1 = {
	.level = 1, .size_bytes = 32768, .ways = 8, .sets = 64, .line_bytes = 64, .valid = true,
};

struct test_obj {
	enum cp_obj_kind kind;
	__u64 start, size, callsite;
	__u32 tid;		/* allocating thread, 0: unknown */
	__u32 site_line;	/* work.c line of the allocation */
	const char *name;
};

struct fixture {
	struct cp_insn_store *insns;
	struct cp_miss_store *misses;
	struct cp_classify_input in;
	struct cp_classify_cfg cfg;
	struct cp_classification out;
	struct test_obj objs[MAX_OBJS];
	int nr_objs;
	__u64 now_ns;		/* sample time of the accesses misses() adds (soft epochs) */
	__u32 obj_space;	/* the line space objs[] are in; 0: TGID's addresses */
};

/* Source line of an ip: (ip - 0x400000) / 16 in work.c, so ips 16 bytes apart differ. */
#define IP(line)	(0x400000ull + (line) * 16ull)

static inline int locate(void *ctx, __u32 tgid, __u64 ip, struct cp_src_loc *out,
			 struct cp_src_callers *callers)
{
	(void)ctx;
	(void)callers;
	if ((tgid != TGID && tgid != PEER_TGID) || ip < 0x400000)
		return -1;
	snprintf(out->module, sizeof(out->module), tgid == TGID ? "/usr/bin/work" :
				 "/usr/bin/peer");
	snprintf(out->function, sizeof(out->function), "worker");
	snprintf(out->file, sizeof(out->file), tgid == TGID ? "work.c" : "peer.c");
	out->line = (__u32)((ip - 0x400000) / 16);
	return 0;
}

static inline int object_at(void *ctx, __u32 tgid, __u64 addr, struct cp_issue_object *out)
{
	struct fixture *f = ctx;

	for (int i = 0; i < f->nr_objs && tgid == (f->obj_space ? f->obj_space : TGID); i++) {
		const struct test_obj *o = &f->objs[i];

		if (addr < o->start || addr >= o->start + o->size)
			continue;
		out->kind = o->kind;
		out->start = o->start;
		out->size = o->size;
		out->callsite = o->callsite;
		out->nr_objects = 1;
		snprintf(out->name, sizeof(out->name), "%s", o->name ? o->name : "");
		/* tid 0: no allocation seen (before attach, or while backed off) */
		out->nr_tids = o->tid ? 1 : 0;
		out->alloc_tids[0] = o->tid;
		if (o->site_line) {
			out->nr_frames = 1;
			snprintf(out->alloc_stack[0].file, sizeof(out->alloc_stack[0].file), "work.c");
			out->alloc_stack[0].line = o->site_line;
		}
		return 0;
	}
	return -1;
}

static inline struct fixture *fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->insns = cp_insn_store__new(4096);
	f->misses = cp_miss_store__new(&l1, 0);
	assert_non_null(f->insns);
	assert_non_null(f->misses);
	f->in.l1 = &l1;
	f->in.insns = f->insns;
	f->in.misses = f->misses;
	f->in.locate = locate;
	f->in.object_at = object_at;
	f->in.object_ctx = f;
	cp_classify_cfg_defaults(&f->cfg);
	return f;
}

static inline void fixture_free(struct fixture *f)
{
	cp_classification_free(&f->out);
	cp_insn_store__free(f->insns);
	cp_miss_store__free(f->misses);
	free(f);
}

static inline int setup(void **state)
{
	*state = fixture_new();
	return 0;
}

static inline int teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

static inline void object(struct fixture *f, struct test_obj o)
{
	assert_true(f->nr_objs < MAX_OBJS);
	f->objs[f->nr_objs++] = o;
}

/* The counter-map totals of process @tgid's instruction (every sample, forwarded or not). */
static inline void counts_in(struct fixture *f, __u32 tgid, __u64 ip, __u64 loads,
			     __u64 load_misses, __u64 stores, __u64 store_misses)
{
	struct cp_ip_key k = { .tgid = tgid, .ip = ip };
	struct cp_ip_counts c = {
		.loads = loads, .load_misses = load_misses,
		.stores = stores, .store_misses = store_misses,
	};

	assert_int_equal(cp_insn_store__add(f->insns, &k, &c), 0);
	f->in.loads += loads;
	f->in.load_misses += load_misses;
	f->in.stores += stores;
	f->in.store_misses += store_misses;
}

/* The counter-map totals of one instruction of TGID. */
static inline void counts(struct fixture *f, __u64 ip, __u64 loads, __u64 load_misses,
			  __u64 stores, __u64 store_misses)
{
	counts_in(f, TGID, ip, loads, load_misses, stores, store_misses);
}

/*
 * @n forwarded misses of process @tgid's thread @tid at @ip on [@addr,
 * @addr + @size), @addr in the addresses of process @space (0: @tgid's).
 */
static inline void misses_in(struct fixture *f, __u32 tgid, __u32 space, __u32 tid, __u64 ip,
			     __u64 addr, __u32 size, bool store, int n)
{
	struct cp_mem_access a = {
		.tgid = tgid, .tid = tid, .ip = ip, .addr = addr, .size = size, .store = store,
		.time_ns = f->now_ns, .space = space,
	};
	struct cp_ip_key k = { .tgid = tgid, .ip = ip };

	for (int i = 0; i < n; i++) {
		assert_int_equal(cp_miss_store__add(f->misses, &a), 0);
		assert_true(cp_insn_store__note_miss(f->insns, &k, addr,
						     cp_cache_set_of(&l1, addr)) >= 0);
	}
}

/* @n forwarded misses of TGID's thread @tid at @ip on [@addr, @addr + @size). */
static inline void misses(struct fixture *f, __u32 tid, __u64 ip, __u64 addr, __u32 size,
			  bool store, int n)
{
	misses_in(f, TGID, 0, tid, ip, addr, size, store, n);
}

static inline void history(struct fixture *f, __u64 ip, __u64 addr)
{
	struct cp_ip_key k = { .tgid = TGID, .ip = ip };

	assert_int_equal(cp_insn_store__add_history(f->insns, &k, addr), 0);
}

static inline void classify(struct fixture *f)
{
	cp_classification_free(&f->out);
	assert_int_equal(cp_classify(&f->in, &f->cfg, &f->out), 0);
}

/* Classifies and expects exactly one issue, which it returns. */
static inline const struct cp_issue *classify_one(struct fixture *f)
{
	classify(f);
	assert_int_equal(f->out.nr_issues, 1);
	return &f->out.issues[0];
}

#endif /* CP_TEST_CLASSIFY_FIXTURE_H */
