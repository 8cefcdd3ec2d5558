// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Side facts fed as records through the profile's one dispatcher: a call
 * site's frames before the object event that names the site, an object
 * from glibc's chunk headers. What a user would see: the object's call
 * stack, the counts of object events and chunk objects, and what the
 * recording holds, in order. And a process's comm and cgroup, as a live run
 * read them from /proc, go into the recording (CP_REC_PROC_DESC) after the
 * record that made it read them, so that a replay's process table and
 * labels name the process as the live run's did: a process first seen by a
 * sample, and two processes exec'd in one container, the second described
 * from the first's cgroup without a read. A hostile recording's strings are
 * cut, and a container id that is not one is no container.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A profile with @hooks (NULL: none, a replay's) and @describe (NULL: none, a replay's). */
static struct cp_profile *new_profile(const struct cp_profile_hooks *hooks,
				      cp_proc_describe_fn describe)
{
	struct cp_profile_cfg cfg = {
		.l1d = {.level = 1,
			.type = CP_CACHE_TYPE_DATA,
			.size_bytes = 32768,
			.ways = 8,
			.sets = 64,
			.line_bytes = 64,
			.valid = true},
		.describe = describe,
	};

	return cp_profile__new(&cfg, hooks);
}

static struct cp_profile *profile(struct seen *s)
{
	return new_profile(&(struct cp_profile_hooks){.record = on_recorded, .ctx = s}, NULL);
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
 * A live run feeds a new site's frames once unwound, after the object event
 * that named it. In a new stack-map generation the same stack has a new id:
 * the event interns a second site, and the frames make it another name of
 * the first. An object that took the second id resolves to the first site,
 * with its frames, as when the frames came first.
 */
static void test_frames_after_event_new_generation(void **state)
{
	__u64 gen0 = CP_ALLOC_STACK_ID(0, 5), gen1 = CP_ALLOC_STACK_ID(1, 5);
	struct cp_alloc_stack_record r = {
		.type = CP_REC_ALLOC_STACK,
		.tgid = (__u32)getpid(),
		.caller = 0x401000,
		.stack_id = gen0,
		.nr = 3,
		.ips = {0x401000, 0x402000, 0x403000},
	};
	size_t size = offsetof(struct cp_alloc_stack_record, ips) + 3 * sizeof(r.ips[0]);
	struct cp_object_event first = alloc_at(0x10000, gen0, 0), again = alloc_at(0x20000, gen1, 0);
	struct seen s = {0};
	struct cp_profile *p = profile(&s);
	struct cp_resolved one, two;
	const __u64 *f;
	size_t n;

	(void)state;
	assert_non_null(p);
	assert_int_equal(cp_profile__feed(p, &first, sizeof(first)), 0);
	assert_int_equal(cp_profile__feed(p, &r, size), 0);
	assert_int_equal(cp_profile__feed(p, &again, sizeof(again)), 0);
	r.stack_id = gen1;
	assert_int_equal(cp_profile__feed(p, &r, size), 0);
	assert_int_equal(cp_objects__resolve(p->objects, getpid(), 0x10008, &one), 0);
	assert_int_equal(cp_objects__resolve(p->objects, getpid(), 0x20008, &two), 0);
	assert_int_not_equal(one.callsite, 0);
	assert_int_equal(two.callsite, one.callsite);
	f = cp_objects__callsite_stack(p->objects, getpid(), two.callsite, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(f, r.ips, 3 * sizeof(r.ips[0]));
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

#define CGROUP_ID 777
#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CGROUP_PATH "/system.slice/docker-" ID64 ".scope"
#define PID_SAMPLED 31001
#define PID_EXEC1 31002
#define PID_EXEC2 31003

struct tape {
	unsigned char *bytes[16];
	size_t size[16];
	size_t nr;
	unsigned int describes;
};

static struct tape *the_tape;

static void on_tape(void *ctx, const void *data, size_t size)
{
	struct tape *t = ctx;

	assert_true(t->nr < 16);
	t->bytes[t->nr] = malloc(size);
	assert_non_null(t->bytes[t->nr]);
	memcpy(t->bytes[t->nr], data, size);
	t->size[t->nr++] = size;
}

/* What /proc would say: every process in one docker container, of cgroup CGROUP_ID. */
static void describe(void *ctx, struct cp_proc_summary *s, unsigned int what)
{
	(void)ctx;
	the_tape->describes++;
	if (what & CP_DESCRIBE_COMM)
		snprintf(s->comm, sizeof(s->comm), "from-proc");
	if (what & CP_DESCRIBE_CGROUP) {
		cp_cgroup_info_unknown(&s->cg);
		snprintf(s->cg.path, sizeof(s->cg.path), "%s", CGROUP_PATH);
		s->cg.v2 = true;
		s->cg.id = CGROUP_ID;
		cp_container_id(s->cg.path, strlen(s->cg.path), s->cg.container_id,
				&s->cg.runtime);
	}
}

static struct cp_profile *tape_profile(struct tape *t)
{
	if (!t)
		return new_profile(NULL, NULL);
	return new_profile(&(struct cp_profile_hooks){.record = on_tape, .ctx = t}, describe);
}

static __u32 type_of(const struct tape *t, size_t i)
{
	__u32 type;

	memcpy(&type, t->bytes[i], sizeof(type));
	return type;
}

static struct cp_proc_exec_event exec_of(__u32 pid)
{
	struct cp_proc_exec_event e = {
		.ev = {.type = CP_REC_PROC, .kind = CP_PROC_EXEC, .tgid = pid, .time_ns = 1},
		.cgroup_id = CGROUP_ID,
	};

	snprintf(e.comm, sizeof(e.comm), "worker");
	return e;
}

static void free_tape(struct tape *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->bytes[i]);
}

static void assert_in_container(const struct cp_profile *p, pid_t pid, const char *comm)
{
	const struct cp_proc_summary *s = cp_proc_summaries__find(p->procs, pid);

	assert_non_null(s);
	assert_string_equal(s->comm, comm);
	assert_string_equal(s->cg.path, CGROUP_PATH);
	assert_true(s->cg.v2);
	assert_string_equal(s->cg.container_id, ID64);
	assert_string_equal(s->cg.runtime, "docker");
}

static void test_live_description_replayed(void **state)
{
	struct tape t = {0};
	struct cp_profile *live, *replay;
	struct cp_sample smp = {
		.type = CP_REC_SAMPLE, .tgid = PID_SAMPLED, .tid = PID_SAMPLED, .ip = 0x401000,
		.flags = CP_SAMPLE_ALL | CP_SAMPLE_NA, .size = 8,
	};
	struct cp_proc_exec_event e1 = exec_of(PID_EXEC1), e2 = exec_of(PID_EXEC2);

	(void)state;
	the_tape = &t;
	live = tape_profile(&t);
	assert_non_null(live);
	assert_int_equal(cp_profile__feed(live, &smp, sizeof(smp)), 0);
	assert_int_equal(cp_profile__feed(live, &e1, sizeof(e1)), 0);
	assert_int_equal(cp_profile__feed(live, &e2, sizeof(e2)), 0);
	/* the sample's process read whole, the first exec's cgroup read, the second's known */
	assert_int_equal(t.describes, 2);
	/* each description after the record that made it */
	assert_int_equal(t.nr, 6);
	assert_int_equal(type_of(&t, 0), CP_REC_SAMPLE);
	assert_int_equal(type_of(&t, 1), CP_REC_PROC_DESC);
	assert_int_equal(type_of(&t, 2), CP_REC_PROC);
	assert_int_equal(type_of(&t, 3), CP_REC_PROC_DESC);
	assert_int_equal(type_of(&t, 4), CP_REC_PROC);
	assert_int_equal(type_of(&t, 5), CP_REC_PROC_DESC);
	assert_int_equal(t.size[1], sizeof(struct cp_proc_desc_record));

	/* the replay reads no /proc: the recording names them */
	replay = tape_profile(NULL);
	assert_non_null(replay);
	for (size_t i = 0; i < t.nr; i++)
		assert_int_equal(cp_profile__feed(replay, t.bytes[i], t.size[i]), 0);
	assert_int_equal(replay->counts.unknown + replay->counts.malformed, 0);
	assert_in_container(live, PID_SAMPLED, "from-proc");
	assert_in_container(replay, PID_SAMPLED, "from-proc");
	assert_in_container(replay, PID_EXEC1, "worker");
	assert_in_container(replay, PID_EXEC2, "worker");
	cp_profile__free(replay);
	cp_profile__free(live);
	free_tape(&t);
}

static void test_hostile_description(void **state)
{
	struct cp_profile *replay = tape_profile(NULL);
	struct cp_proc_desc_record d;
	const struct cp_proc_summary *s;

	(void)state;
	assert_non_null(replay);
	/* no NUL anywhere; an id of 64 characters that are not hex; a runtime nobody has */
	memset(&d, 'X', sizeof(d));
	d.type = CP_REC_PROC_DESC;
	d.pid = PID_SAMPLED;
	d.v2 = 1;
	memset(d.__pad, 0, sizeof(d.__pad));
	memcpy(d.runtime, "docker", 7);
	assert_int_equal(cp_profile__feed(replay, &d, sizeof(d)), 0);
	s = cp_proc_summaries__find(replay->procs, PID_SAMPLED);
	assert_non_null(s);
	assert_int_equal(strlen(s->comm), sizeof(s->comm) - 1);
	assert_int_equal(strlen(s->cg.path), sizeof(d.cgroup) - 1);
	assert_string_equal(s->cg.container_id, "");
	assert_string_equal(s->cg.runtime, "");
	/* a real id under an unknown runtime is no container either */
	memcpy(d.container_id, ID64, sizeof(ID64));
	memcpy(d.runtime, "lxc", 4);
	assert_int_equal(cp_profile__feed(replay, &d, sizeof(d)), 0);
	assert_string_equal(cp_proc_summaries__find(replay->procs, PID_SAMPLED)->cg.container_id,
			    "");
	/* pid 0 and a short record are malformed, counted */
	d.pid = 0;
	assert_int_equal(cp_profile__feed(replay, &d, sizeof(d)), 0);
	d.pid = PID_SAMPLED;
	assert_int_equal(cp_profile__feed(replay, &d, sizeof(d) - 8), 0);
	assert_int_equal(replay->counts.malformed, 2);
	cp_profile__free(replay);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_then_event),
		cmocka_unit_test(test_frames_after_event_new_generation),
		cmocka_unit_test(test_chunk_objects),
		cmocka_unit_test(test_live_description_replayed),
		cmocka_unit_test(test_hostile_description),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
