// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Side facts fed as records through the profile's one dispatcher: a call
 * site's frames before the object event that names the site, an object
 * from glibc's chunk headers. What a user would see: the object's call
 * stack, the counts of object events and chunk objects, and what the
 * recording holds, in order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile/profile.h"

struct seen {
	__u32 types[8];
	size_t nr;
};

static void on_recorded(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;

	assert_true(size >= sizeof(__u32));
	assert_true(s->nr < 8);
	memcpy(&s->types[s->nr++], data, sizeof(__u32));
}

static struct cp_profile *profile(struct seen *s)
{
	struct cp_profile_cfg cfg = {
		.l1d = {.level = 1,
			.type = CP_CACHE_TYPE_DATA,
			.size_bytes = 32768,
			.ways = 8,
			.sets = 64,
			.line_bytes = 64,
			.valid = true},
	};
	struct cp_profile_hooks hooks = {.record = on_recorded, .ctx = s};

	return cp_profile__new(&cfg, &hooks);
}

static struct cp_object_event alloc_at(__u64 addr, __s64 stack_id, __u16 flags)
{
	return (struct cp_object_event){
		.type = CP_REC_OBJECT,
		.kind = CP_OBJ_EV_ALLOC,
		.flags = flags,
		.tgid = (__u32)getpid(),
		.tid = 7,
		.addr = addr,
		.size = 64,
		.caller = flags ? 0 : 0x401000,
		.stack_id = stack_id,
		.time_ns = 1,
	};
}

static void test_frames_then_event(void **state)
{
	struct cp_alloc_stack_record r = {
		.type = CP_REC_ALLOC_STACK,
		.tgid = (__u32)getpid(),
		.caller = 0x401000,
		.stack_id = 9,
		.nr = 3,
		.ips = {0x401000, 0x402000, 0x403000},
	};
	struct cp_object_event ev = alloc_at(0x10000, 9, 0);
	struct seen s = {0};
	struct cp_profile *p = profile(&s);
	struct cp_resolved res;
	const __u64 *f;
	size_t n;

	(void)state;
	assert_non_null(p);
	assert_int_equal(cp_profile__feed(p, &r,
					  offsetof(struct cp_alloc_stack_record, ips) +
						  3 * sizeof(r.ips[0])),
			 0);
	assert_int_equal(cp_profile__feed(p, &ev, sizeof(ev)), 0);
	/* recorded as fed: the frames first, so a replay has them for the event */
	assert_int_equal(s.nr, 2);
	assert_int_equal(s.types[0], CP_REC_ALLOC_STACK);
	assert_int_equal(s.types[1], CP_REC_OBJECT);
	assert_int_equal(p->object_events, 1);
	assert_int_equal(cp_objects__resolve(p->objects, getpid(), 0x10020, &res), 0);
	f = cp_objects__callsite_stack(p->objects, getpid(), res.callsite, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(f, r.ips, 3 * sizeof(r.ips[0]));
	/* a stack that could not be read: a record without frames, the site read */
	r.stack_id = 10;
	r.nr = 0;
	assert_int_equal(cp_profile__feed(p, &r, offsetof(struct cp_alloc_stack_record, ips)), 0);
	assert_int_equal(s.nr, 3);
	assert_false(cp_objects__callsite_unread(p->objects, getpid(), 0x401000, 10));
	/* more frames than the record's size holds: refused, counted, not recorded */
	r.nr = 2;
	assert_int_equal(cp_profile__feed(p, &r, offsetof(struct cp_alloc_stack_record, ips)), 0);
	assert_int_equal(p->counts.malformed, 1);
	assert_int_equal(s.nr, 3);
	cp_profile__free(p);
}

/*
 * An object from the chunk headers is counted apart from the probes'
 * events and recorded; one the table cannot take is neither (find_chunk()
 * tries again at the next sample, and a replay must not find it).
 */
static void test_chunk_objects(void **state)
{
	struct cp_object_event ev = alloc_at(0x20000, -1, CP_OBJ_EV_F_CHUNK);
	struct seen s = {0};
	struct cp_profile *p = profile(&s);
	struct cp_resolved res;

	(void)state;
	assert_non_null(p);
	assert_int_equal(cp_profile__feed(p, &ev, sizeof(ev)), 0);
	assert_int_equal(p->chunk_objects, 1);
	assert_int_equal(p->object_events, 0);
	assert_int_equal(s.nr, 1);
	assert_int_equal(cp_objects__resolve(p->objects, getpid(), 0x20010, &res), 0);
	assert_int_equal(res.flags, CP_OBJ_F_CHUNK);
	ev.addr = 0; /* refused by the object table */
	assert_int_equal(cp_profile__feed(p, &ev, sizeof(ev)), 0);
	assert_int_equal(p->chunk_objects, 1);
	assert_int_equal(s.nr, 1);
	cp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_then_event),
		cmocka_unit_test(test_chunk_objects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
