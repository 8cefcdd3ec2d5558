// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Object events into the object store: a table of events for one process
 * and what the store must answer afterwards (kind, start, size, thread,
 * call site, flags), plus malformed records.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "objects/alloc_events.h"

static struct cp_object_event ev(__u16 kind, __u64 addr, __u64 size, __u64 old, __u64 caller,
				 __u32 tid)
{
	struct cp_object_event e = {
		.type = CP_REC_OBJECT, .kind = kind, .tgid = 0, .tid = tid, .addr = addr,
		.size = size, .old_addr = old, .caller = caller, .stack_id = -1, .time_ns = 1,
	};

	e.tgid = getpid();	/* a live process: the store snapshots its maps */
	return e;
}

struct expect {
	__u64 addr;
	bool tracked;
	enum cp_obj_kind kind;
	__u64 start, size, caller;
	__u32 tid;
	bool realloc;
};

static void test_sequence(void **state)
{
	const struct cp_object_event evs[] = {
		ev(CP_OBJ_EV_ALLOC, 0x10000, 100, 0, 0x401000, 11),
		ev(CP_OBJ_EV_ALLOC, 0x20000, 50, 0, 0x401100, 12),
		ev(CP_OBJ_EV_FREE, 0x20000, 0, 0, 0, 12),
		ev(CP_OBJ_EV_REALLOC, 0x30000, 4096, 0x10000, 0x401200, 13),
		ev(CP_OBJ_EV_MAP, 0x7f0000000000, 1 << 20, 0, 0x401300, 11),
		ev(CP_OBJ_EV_REMAP, 0x7f1000000000, 2 << 20, 0x7f0000000000, 0x401300, 11),
		ev(CP_OBJ_EV_ALLOC, 0x50000, 8, 0, 0x401000, 14),
		ev(CP_OBJ_EV_UNMAP, 0x50000, 0, 0, 0, 14),
	};
	const struct expect want[] = {
		{ .addr = 0x10000 },				/* moved by the realloc */
		{ .addr = 0x20031 },				/* freed */
		{ 0x30fff, true, CP_OBJ_HEAP, 0x30000, 4096, 0x401200, 13, true },
		{ .addr = 0x31000 },				/* one past the end */
		{ .addr = 0x7f0000000000 },			/* remapped away */
		{ 0x7f10001fffff, true, CP_OBJ_MAPPING, 0x7f1000000000, 2 << 20, 0x401300, 11, false },
		{ .addr = 0x50000 },
	};
	struct cp_objects *o = cp_objects__new(NULL);
	pid_t pid = getpid();

	(void)state;
	assert_non_null(o);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		assert_int_equal(cp_alloc_event_apply(o, &evs[i], sizeof(evs[i])), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct cp_callsite *cs;
		struct cp_resolved r;

		cp_objects__resolve(o, pid, want[i].addr, &r);
		if (!want[i].tracked) {
			if ((r.kind == CP_OBJ_HEAP || r.kind == CP_OBJ_MAPPING) && r.callsite)
				fail_msg("%#llx: still tracked", (unsigned long long)want[i].addr);
			continue;
		}
		assert_int_equal(r.kind, want[i].kind);
		assert_int_equal(r.start, want[i].start);
		assert_int_equal(r.size, want[i].size);
		assert_int_equal(r.tid, want[i].tid);
		assert_int_equal(!!(r.flags & CP_OBJ_F_REALLOC), want[i].realloc);
		cs = cp_objects__callsite_get(o, pid, r.callsite);
		assert_non_null(cs);
		assert_int_equal(cs->caller, want[i].caller);
		assert_int_equal(cs->stack_id, CP_NO_STACK);
	}
	cp_objects__free(o);
}

/* An object from glibc's chunk headers: a heap object with no call site and no thread. */
static void test_chunk_object(void **state)
{
	struct cp_object_event e = ev(CP_OBJ_EV_ALLOC, 0x10010, 104, 0, 0, 0);
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_objects_stats st;
	struct cp_resolved r;

	(void)state;
	e.flags = CP_OBJ_EV_F_CHUNK;
	e.stack_id = -1;
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), 0x10010 + 103, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_HEAP);
	assert_int_equal(r.start, 0x10010);
	assert_int_equal(r.size, 104);
	assert_int_equal(r.callsite, 0);
	assert_int_equal(r.tid, 0);
	assert_int_equal(r.flags, CP_OBJ_F_CHUNK);
	assert_false(r.before_attach);
	/* no call site was interned for it */
	assert_null(cp_objects__callsite_get(o, getpid(), 1));
	/* a probed allocation over it replaces it, as any stale object */
	e = ev(CP_OBJ_EV_ALLOC, 0x10010, 64, 0, 0x401000, 11);
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), 0x10020, &r), 0);
	assert_int_equal(r.flags, 0);
	assert_int_equal(r.tid, 11);
	cp_objects__stats(o, &st);
	assert_int_equal(st.store.replaced, 1);
	cp_objects__free(o);
}

static void test_malformed(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_object_event e = ev(CP_OBJ_EV_ALLOC, 0x1000, 8, 0, 1, 1);

	(void)state;
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e) - 1), -EINVAL);
	e.type = CP_REC_SAMPLE;
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), -EINVAL);
	e = ev(99, 0x1000, 8, 0, 1, 1);
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), -EINVAL);
	e = ev(CP_OBJ_EV_ALLOC, 0, 8, 0, 1, 1);
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), -EINVAL);
	e = ev(CP_OBJ_EV_FREE, 0x1000, 0, 0, 0, 1);
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), -ENOENT);
	assert_string_equal(cp_obj_event_kind_name(CP_OBJ_EV_REMAP), "remap");
	assert_string_equal(cp_obj_event_kind_name(0), "?");
	cp_objects__free(o);
}

/*
 * The call site an event names, as a live run asks before feeding its
 * frames: only events that make an object of a process, with its stack id.
 */
static void test_site_of_event(void **state)
{
	struct cp_object_event e = ev(CP_OBJ_EV_ALLOC, 0x1000, 8, 0, 0x401000, 1);
	const __u16 with_site[] = { CP_OBJ_EV_ALLOC, CP_OBJ_EV_REALLOC, CP_OBJ_EV_MAP,
				    CP_OBJ_EV_REMAP };
	__s64 stack_id = 0;
	__u64 caller = 0;

	(void)state;
	e.stack_id = 7;
	for (size_t i = 0; i < sizeof(with_site) / sizeof(with_site[0]); i++) {
		e.kind = with_site[i];
		caller = 0;
		assert_true(cp_alloc_event_site(&e, &caller, &stack_id));
		assert_int_equal(caller, 0x401000);
		assert_int_equal(stack_id, 7);
	}
	e.stack_id = -5;	/* no stack taken: the one "none" the table knows */
	assert_true(cp_alloc_event_site(&e, &caller, &stack_id));
	assert_int_equal(stack_id, CP_NO_STACK);
	e.kind = CP_OBJ_EV_FREE;
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
	e.kind = CP_OBJ_EV_UNMAP;
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
	e.kind = 99;
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
	e.kind = CP_OBJ_EV_ALLOC;
	e.flags = CP_OBJ_EV_F_CHUNK;	/* from the chunk headers: no call site */
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
	e.flags = 0;
	e.addr = 0;	/* refused by cp_alloc_event_apply(): no site either */
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
	e.kind = CP_OBJ_EV_MAP;
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
	e.addr = 0x1000;
	e.tgid = 0;
	assert_false(cp_alloc_event_site(&e, &caller, &stack_id));
}

/*
 * A site's frames come before its first event (a live run reads them,
 * a replay reads them back): the event's object then has them, once; a
 * site whose stack could not be read is not asked again.
 */
static void test_frames_before_event(void **state)
{
	struct cp_object_event e = ev(CP_OBJ_EV_ALLOC, 0x10000, 64, 0, 0x401000, 1);
	const __u64 ips[] = { 0x401000, 0x402000, 0x403000 };
	struct cp_objects *o = cp_objects__new(NULL);
	pid_t pid = getpid();
	const __u64 *f;
	struct cp_resolved r;
	size_t n;

	(void)state;
	e.stack_id = 3;
	assert_true(cp_objects__callsite_unread(o, pid, 0x401000, 3));
	assert_true(cp_objects__callsite_unread(o, pid, 0x401000, 3));	/* asking reads nothing */
	assert_false(cp_objects__callsite_unread(o, pid, 0x401000, CP_NO_STACK));
	cp_objects__callsite_frames(o, pid, 0x401000, 3, ips, 3);
	assert_false(cp_objects__callsite_unread(o, pid, 0x401000, 3));
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), 0);
	assert_int_equal(cp_objects__resolve(o, pid, 0x10010, &r), 0);
	f = cp_objects__callsite_stack(o, pid, r.callsite, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(f, ips, sizeof(ips));
	/* another stack id, unreadable: an empty record marks it read */
	assert_true(cp_objects__callsite_unread(o, pid, 0x401000, 4));
	cp_objects__callsite_frames(o, pid, 0x401000, 4, NULL, 0);
	assert_false(cp_objects__callsite_unread(o, pid, 0x401000, 4));
	/* a third id with the first one's frames is the first site */
	cp_objects__callsite_frames(o, pid, 0x401000, 5, ips, 3);
	assert_false(cp_objects__callsite_unread(o, pid, 0x401000, 5));
	assert_int_equal(cp_objects__callsite(o, pid, 0x401000, 5), r.callsite);
	cp_objects__free(o);
}

/*
 * A full call-site table: a new site's frames are not asked for (they
 * could not be kept), and asking drops nothing; only the event counts the
 * site it could not keep, once, as a replay would.
 */
static void test_full_table(void **state)
{
	struct cp_objects_opts opts = { .max_callsites = 1 };
	struct cp_object_event e = ev(CP_OBJ_EV_ALLOC, 0x10000, 64, 0, 0x401000, 1);
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_objects_stats st;
	pid_t pid = getpid();

	(void)state;
	e.stack_id = 3;
	assert_true(cp_objects__callsite_unread(o, pid, 0x401000, 3));
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), 0);
	/* kept without frames: still to be read */
	assert_true(cp_objects__callsite_unread(o, pid, 0x401000, 3));
	e = ev(CP_OBJ_EV_ALLOC, 0x20000, 64, 0, 0x402000, 1);
	e.stack_id = 4;
	assert_false(cp_objects__callsite_unread(o, pid, 0x402000, 4));
	cp_objects__stats(o, &st);
	assert_int_equal(st.callsites_dropped, 0);
	assert_int_equal(cp_alloc_event_apply(o, &e, sizeof(e)), 0);
	cp_objects__stats(o, &st);
	assert_int_equal(st.callsites_dropped, 1);
	cp_objects__free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_chunk_object),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_site_of_event),
		cmocka_unit_test(test_frames_before_event),
		cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
