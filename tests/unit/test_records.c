// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The record types' table and the dispatcher live and replay share
 * (user/profile/records.c): each known type at a size it may have reaches
 * its consumer; a type this version does not know is counted unknown, a
 * size its type cannot have (or a call site's frames not as many as it
 * says) malformed, and neither reaches a consumer, so neither is written
 * to a recording either; a live-only type (a breakpoint's event, a stack
 * copy) goes to the live callback alone, and a replay, which has none,
 * passes it over.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cacheperf/alloc.h"
#include "cacheperf/breakpoint.h"
#include "cacheperf/stack_copy.h"
#include "profile/records.h"

/* What reached the consumers. */
struct got {
	int samples, records, live;
	__u32 type;
	size_t size;
};

static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct got *g = ctx;

	(void)s;
	g->samples++;
	return 0;
}

static int on_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct got *g = ctx;

	(void)data;
	g->records++;
	g->type = type;
	g->size = size;
	return 0;
}

/* A live-only record: counted apart, with its type and size. */
static int on_live(__u32 type, const void *data, size_t size, void *ctx)
{
	struct got *g = ctx;

	on_record(type, data, size, ctx);
	g->records--;
	g->live++;
	return 0;
}

/* Dispatches a record of @type and @size bytes (zeros but the type); what reached whom. */
static struct got feed(__u32 type, size_t size, struct cp_record_counts *c)
{
	static __u8 buf[sizeof(struct cp_sample_ustack_record) + 64];
	struct got g = {0};
	struct cp_record_ops ops = {
		.sample = on_sample,
		.record = on_record,
		.ctx = &g,
		.live = on_live,
		.live_ctx = &g,
	};

	assert_true(size <= sizeof(buf));
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &type, size < sizeof(type) ? size : sizeof(type));
	cp_record_dispatch(&ops, c, buf, size);
	return g;
}

/* A record type and a size to feed it at. */
struct sized {
	__u32 type;
	size_t size;
};

/* Every type at its size(s) passes to the right consumer; one byte more or less does not. */
static void test_sizes(void **state)
{
	static const struct sized ok[] = {
		{CP_REC_OBJECT, sizeof(struct cp_object_event)},
		/* an exec's sizes: test_proc_sizes */
		{CP_REC_PROC, sizeof(struct cp_proc_event)},
		{CP_REC_BP, sizeof(struct cp_bp_event)},
		{CP_REC_USTACK, sizeof(struct cp_ustack_record)},
		{CP_REC_SAMPLE_USTACK, sizeof(struct cp_sample_ustack_record)},
		{CP_REC_HISTORY, sizeof(struct cp_history_record)},
	};
	/*
	 * a sample and an object event one byte short and long, a history 8 long;
	 * a process event shorter than the event, longer than an exec's, or between;
	 * shorter than a type
	 */
	static const struct sized bad[] = {
		{CP_REC_SAMPLE, sizeof(struct cp_sample) - 1},
		{CP_REC_SAMPLE, sizeof(struct cp_sample) + 1},
		{CP_REC_OBJECT, sizeof(struct cp_object_event) - 1},
		{CP_REC_OBJECT, sizeof(struct cp_object_event) + 1},
		{CP_REC_HISTORY, sizeof(struct cp_history_record) + 8},
		{CP_REC_PROC_DESC, sizeof(struct cp_proc_desc_record) - 8},
		{CP_REC_PROC, sizeof(struct cp_proc_event) - 4},
		{CP_REC_PROC, sizeof(struct cp_proc_exec_event) + 8},
		{CP_REC_PROC, 32},
		{CP_REC_PROC, 52},
		{CP_REC_SAMPLE, 3},
	};
	struct cp_record_counts c = {0};
	struct got g;

	(void)state;
	g = feed(CP_REC_SAMPLE, sizeof(struct cp_sample), &c);
	assert_int_equal(g.samples, 1);
	assert_int_equal(g.records, 0);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		bool live = ok[i].type == CP_REC_BP || ok[i].type == CP_REC_USTACK ||
			    ok[i].type == CP_REC_SAMPLE_USTACK;

		g = feed(ok[i].type, ok[i].size, &c);
		/* live-only records to the live callback, never to the profile's */
		assert_int_equal(g.records, !live);
		assert_int_equal(g.live, live);
		assert_int_equal(cp_record_kind(ok[i].type)->live_only, live);
		assert_int_equal(g.type, ok[i].type);
		assert_int_equal(g.size, ok[i].size);
	}
	assert_int_equal(c.malformed, 0);
	assert_int_equal(c.unknown, 0);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		g = feed(bad[i].type, bad[i].size, &c);
		assert_int_equal(g.samples + g.records + g.live, 0);
	}
	assert_int_equal(c.malformed, 11);
	assert_int_equal(c.unknown, 0);
}

/* A replay has no live callback: live-only records are passed over, not counted. */
static void test_live_only_replayed(void **state)
{
	struct cp_bp_event bp = {.type = CP_REC_BP};
	struct got g = {0};
	struct cp_record_ops ops = {.sample = on_sample, .record = on_record, .ctx = &g};
	struct cp_record_counts c = {0};

	(void)state;
	cp_record_dispatch(&ops, &c, &bp, sizeof(bp));
	assert_int_equal(g.records + g.live, 0);
	assert_int_equal(c.unknown + c.malformed, 0);
	/* ... but a wrong size is malformed all the same */
	cp_record_dispatch(&ops, &c, &bp, sizeof(bp) - 4);
	assert_int_equal(c.malformed, 1);
}

/* An exit is the event alone; only an exec carries its comm and cgroups. */
static void test_proc_sizes(void **state)
{
	struct cp_proc_exec_event e = {.ev = {.type = CP_REC_PROC, .kind = CP_PROC_EXIT}};
	struct got g = {0};
	struct cp_record_ops ops = {.sample = on_sample, .record = on_record, .ctx = &g};
	struct cp_record_counts c = {0};

	(void)state;
	cp_record_dispatch(&ops, &c, &e, sizeof(e.ev));
	assert_int_equal(g.records, 1);
	cp_record_dispatch(&ops, &c, &e, CP_PROC_EXEC_V2_ONLY_SIZE);
	cp_record_dispatch(&ops, &c, &e, sizeof(e));
	assert_int_equal(g.records, 1);
	assert_int_equal(c.malformed, 2);
	e.ev.kind = CP_PROC_EXEC;
	cp_record_dispatch(&ops, &c, &e, sizeof(e.ev));
	cp_record_dispatch(&ops, &c, &e, CP_PROC_EXEC_V2_ONLY_SIZE);
	cp_record_dispatch(&ops, &c, &e, sizeof(e));
	assert_int_equal(g.records, 4);
	assert_int_equal(c.malformed, 2);
}

/* A type this version does not know: counted, handed to no one. */
static void test_unknown(void **state)
{
	static const __u32 types[] = {0, 7, 63, 67, 0xffffffffu};
	struct cp_record_counts c = {0};
	struct cp_record_ops none = {.sample = on_sample};
	__u32 obj = CP_REC_OBJECT;
	__u8 buf[sizeof(struct cp_object_event)] = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct got g = feed(types[i], 64, &c);

		assert_int_equal(g.samples + g.records, 0);
		assert_null(cp_record_kind(types[i]));
	}
	assert_int_equal(c.unknown, 5);
	assert_int_equal(c.malformed, 0);

	/* a known type no callback takes */
	memcpy(buf, &obj, sizeof(obj));
	cp_record_dispatch(&none, &c, buf, sizeof(buf));
	assert_int_equal(c.unknown, 6);
	assert_string_equal(cp_record_kind(CP_REC_OBJECT)->name, "object event");
}

/* A call site's frames: as many as its nr says, for a process and a stack. */
static void test_alloc_stack(void **state)
{
	size_t head = offsetof(struct cp_alloc_stack_record, ips);
	struct cp_alloc_stack_record r = {
		.type = CP_REC_ALLOC_STACK,
		.tgid = 42,
		.stack_id = 3,
		.nr = 2,
		.ips = {0x401000, 0x401100},
	};
	struct got g = {0};
	struct cp_record_ops ops = {.sample = on_sample, .record = on_record, .ctx = &g};
	struct cp_record_counts c = {0};

	(void)state;
	cp_record_dispatch(&ops, &c, &r, head + 2 * sizeof(r.ips[0]));
	assert_int_equal(g.records, 1);
	/* one frame more than it holds, or fewer */
	cp_record_dispatch(&ops, &c, &r, head + 3 * sizeof(r.ips[0]));
	cp_record_dispatch(&ops, &c, &r, head + 1 * sizeof(r.ips[0]));
	/* more frames than a call site keeps */
	r.nr = CP_ALLOC_STACK_DEPTH + 1;
	cp_record_dispatch(&ops, &c, &r, sizeof(r));
	/* no process, no stack */
	r.nr = 2;
	r.tgid = 0;
	cp_record_dispatch(&ops, &c, &r, head + 2 * sizeof(r.ips[0]));
	r.tgid = 42;
	r.stack_id = -1;
	cp_record_dispatch(&ops, &c, &r, head + 2 * sizeof(r.ips[0]));
	assert_int_equal(g.records, 1);
	assert_int_equal(c.malformed, 5);
	/* a whole stack */
	r.stack_id = 3;
	r.nr = CP_ALLOC_STACK_DEPTH;
	cp_record_dispatch(&ops, &c, &r, sizeof(r));
	assert_int_equal(g.records, 2);
	/* the empty stack of a site whose walk found nothing past the caller */
	r.stack_id = 0;
	r.nr = 0;
	cp_record_dispatch(&ops, &c, &r, head);
	assert_int_equal(g.records, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),	    cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_proc_sizes),  cmocka_unit_test(test_live_only_replayed),
		cmocka_unit_test(test_alloc_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
