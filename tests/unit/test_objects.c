// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The per-process table: processes kept apart, the least recently used one
 * evicted at the cap, exit and exec, counters that outlive a process, and
 * processes that do not exist (their samples must still get an answer).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <malloc.h>
#include <pthread.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "lib/fake_proc.h"
#include "objects/allocator.h"
#include "objects/objects.h"

/* Above any pid_max (2^22): /proc has no such directory. */
#define GHOST(n)	((pid_t)(100000000 + (n)))
#define ADDR		0x7f0000001000ull

static struct cp_object heap_obj(__u64 start, __u64 size, __u32 tid)
{
	struct cp_object o = { .start = start, .size = size, .tid = tid, .kind = CP_OBJ_HEAP };

	return o;
}

static __u32 tid_at(struct cp_objects *o, pid_t pid, __u64 addr)
{
	struct cp_resolved r;

	if (cp_objects__resolve(o, pid, addr, &r) || r.kind != CP_OBJ_HEAP)
		return 0;
	return r.tid;
}

static void test_processes_are_kept_apart(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_object a = heap_obj(ADDR, 64, 1), b = heap_obj(ADDR, 64, 2);

	(void)state;
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &a), 0);
	assert_int_equal(cp_objects__on_alloc(o, GHOST(2), &b), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR + 8), 1);
	assert_int_equal(tid_at(o, GHOST(2), ADDR + 8), 2);
	assert_int_equal(cp_objects__on_free(o, GHOST(1), ADDR), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR + 8), 0);
	assert_int_equal(tid_at(o, GHOST(2), ADDR + 8), 2);
	/* a free in the wrong process is an unknown free there */
	assert_int_equal(cp_objects__on_free(o, GHOST(1), ADDR), -ENOENT);
	/* call-site ids are per process too */
	assert_int_equal(cp_objects__callsite(o, GHOST(1), 0x400100, 3), 1);
	assert_int_equal(cp_objects__callsite(o, GHOST(2), 0x400200, 4), 1);
	assert_int_equal(cp_objects__callsite_get(o, GHOST(2), 1)->caller, 0x400200);
	cp_objects__free(o);
}

static void test_realloc_moves_object(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_object a = heap_obj(ADDR, 64, 1), b = heap_obj(ADDR + 0x10000, 4096, 1);

	(void)state;
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &a), 0);
	assert_int_equal(cp_objects__on_realloc(o, GHOST(1), ADDR, &b), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR + 0x10000 + 4095), 1);
	cp_objects__free(o);
}

static void test_cap_evicts_least_recently_used(void **state)
{
	struct cp_objects_opts opts = { .max_processes = 2 };
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_object a = heap_obj(ADDR, 64, 1);
	struct cp_objects_stats st;

	(void)state;
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &a), 0);
	assert_int_equal(cp_objects__on_alloc(o, GHOST(2), &a), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR), 1);	/* 1 is now the more recent */
	assert_int_equal(cp_objects__on_alloc(o, GHOST(3), &a), 0);
	assert_true(cp_objects__tracked(o, GHOST(1)));
	assert_false(cp_objects__tracked(o, GHOST(2)));
	assert_true(cp_objects__tracked(o, GHOST(3)));
	cp_objects__stats(o, &st);
	assert_int_equal(st.processes, 2);
	assert_int_equal(st.evicted, 1);
	/* the evicted process's counters remain; its object no longer lives */
	assert_int_equal(st.store.inserted, 3);
	assert_int_equal(st.store.live, 2);
	cp_objects__free(o);
}

/* Many processes coming and going: the pid table never loses one. */
static void test_churn_keeps_table_consistent(void **state)
{
	struct cp_objects_opts opts = { .max_processes = 64 };
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_objects_stats st;

	(void)state;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 50; i++) {
			struct cp_object a = heap_obj(ADDR, 64, round * 100 + i);

			assert_int_equal(cp_objects__on_alloc(o, GHOST(round * 50 + i), &a), 0);
		}
		for (int i = 0; i < 50; i += 2)
			cp_objects__on_exit(o, GHOST(round * 50 + i));
		for (int i = 1; i < 50; i += 2) {
			pid_t pid = GHOST(round * 50 + i);

			/* odd ones of this round: live unless evicted by the cap */
			if (cp_objects__tracked(o, pid))
				assert_int_equal(tid_at(o, pid, ADDR), round * 100 + i);
		}
	}
	cp_objects__stats(o, &st);
	assert_true(st.processes <= 64);
	assert_int_equal(st.processes + st.evicted + st.exits, st.store.inserted);
	assert_true(st.evicted > 0);
	cp_objects__free(o);
}

static void test_exit_and_exec(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_object a = heap_obj(ADDR, 64, 1);
	struct cp_objects_stats st;

	(void)state;
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &a), 0);
	assert_int_equal(cp_objects__set_thread_pointer(o, GHOST(1), 5, 0x7f00000f0000), 0);
	cp_objects__on_exec(o, GHOST(1));
	assert_int_equal(tid_at(o, GHOST(1), ADDR), 0);
	assert_true(cp_objects__tracked(o, GHOST(1)));
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &a), 0);
	cp_objects__on_exit(o, GHOST(1));
	assert_false(cp_objects__tracked(o, GHOST(1)));
	cp_objects__on_exit(o, GHOST(1));	/* twice: harmless */
	cp_objects__stats(o, &st);
	assert_int_equal(st.exits, 1);
	assert_int_equal(st.execs, 1);
	assert_int_equal(st.processes, 0);
	/* gone, but its samples are classified after it exited: the object is still there */
	assert_int_equal(tid_at(o, GHOST(1), ADDR), 1);
	/* its pid is reused: the new process's first event drops the old state */
	struct cp_object b = heap_obj(ADDR + 4096, 64, 2);
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &b), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR), 0);
	assert_int_equal(tid_at(o, GHOST(1), ADDR + 4096), 2);
	assert_true(cp_objects__tracked(o, GHOST(1)));
	cp_objects__free(o);
}

/* Memory pressure drops exited processes' state, all of it, and nothing of live ones. */
static void test_shrink_drops_exited(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_object a = heap_obj(ADDR, 64, 1);

	(void)state;
	/* enough processes that removals shift probe chains */
	for (int i = 1; i <= 40; i++)
		assert_int_equal(cp_objects__on_alloc(o, GHOST(i), &a), 0);
	for (int i = 1; i <= 40; i += 2)
		cp_objects__on_exit(o, GHOST(i));
	assert_int_equal(tid_at(o, GHOST(1), ADDR), 1);
	assert_int_equal(cp_objects__shrink(o), 20);
	assert_int_equal(cp_objects__shrink(o), 0);
	for (int i = 1; i <= 40; i++)
		assert_int_equal(tid_at(o, GHOST(i), ADDR), i % 2 ? 0 : 1);
	cp_objects__free(o);
}

/* Processes GHOST(@from) to GHOST(@to) allocate an object of thread 1 each, and exit. */
static void ghosts_exit(struct cp_objects *o, int from, int to)
{
	struct cp_object a = heap_obj(ADDR, 64, 1);

	for (int i = from; i <= to; i++) {
		assert_int_equal(cp_objects__on_alloc(o, GHOST(i), &a), 0);
		cp_objects__on_exit(o, GHOST(i));
	}
}

/* At most max_exited exited processes are kept: the least recently used go first. */
static void test_exited_capped(void **state)
{
	struct cp_objects_opts opts = { .max_exited = 2 };
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_objects_stats st;

	(void)state;
	ghosts_exit(o, 1, 5);
	cp_objects__stats(o, &st);
	assert_int_equal(st.exited_dropped, 3);
	for (int i = 1; i <= 5; i++)
		assert_int_equal(tid_at(o, GHOST(i), ADDR), i >= 4 ? 1 : 0);
	cp_objects__free(o);
}

/*
 * Past the cap the least recently used exited processes go, down to three
 * quarters of it at once: with a cap of 8, the ninth exit drops three, and
 * the next two none.
 */
static void test_exited_trimmed_in_batches(void **state)
{
	struct cp_objects_opts opts = { .max_exited = 8 };
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_objects_stats st;

	(void)state;
	ghosts_exit(o, 1, 8);
	/* 2 used last of all: kept; 1, 3 and 4 the least recently used */
	assert_int_equal(tid_at(o, GHOST(2), ADDR), 1);
	cp_objects__stats(o, &st);
	assert_int_equal(st.exited_dropped, 0);
	ghosts_exit(o, 9, 9);
	cp_objects__stats(o, &st);
	assert_int_equal(st.exited_dropped, 3);
	for (int i = 1; i <= 9; i++)
		assert_int_equal(tid_at(o, GHOST(i), ADDR), i == 1 || i == 3 || i == 4 ? 0 : 1);
	/* the next exits drop nothing until the cap is passed again */
	for (int i = 10; i <= 12; i++) {
		ghosts_exit(o, i, i);
		cp_objects__stats(o, &st);
		assert_int_equal(st.exited_dropped, i < 12 ? 3 : 6);
	}
	cp_objects__free(o);
}

/* A process that is gone still gets an answer: tracked objects, else "[unmapped]". */
static void test_missing_process(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	struct cp_object a = heap_obj(ADDR, 64, 9);
	struct cp_objects_stats st;
	struct cp_resolved r;

	(void)state;
	assert_int_equal(cp_objects__resolve(o, GHOST(7), ADDR, &r), -ENOENT);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	assert_string_equal(r.name, "[unmapped]");
	assert_int_equal(cp_objects__on_alloc(o, GHOST(7), &a), 0);
	assert_int_equal(cp_objects__resolve(o, GHOST(7), ADDR + 63, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_HEAP);
	assert_string_equal(r.name, "heap");
	cp_objects__stats(o, &st);
	assert_int_equal(st.maps_errors, st.maps_reads);
	assert_int_equal(st.unmapped, 1);
	cp_objects__free(o);
}

static int late_global[512];

/*
 * The maps snapshots capped at one byte: a child's snapshot lets this
 * process's go (counted), the bytes held are the child's alone, and this
 * process's is read again at its next miss.
 */
static void test_maps_byte_cap(void **state)
{
	struct cp_objects_opts opts = {.maps_refresh_ns = 1};
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_objects_stats st, before;
	struct cp_resolved r;
	int err = -ENOENT;
	pid_t child;

	(void)state;
	cp_objects__set_max_maps_bytes(o, 1);
	assert_int_equal(cp_objects__resolve(o, getpid(), (__u64)(uintptr_t)late_global, &r), 0);
	cp_objects__stats(o, &before);
	assert_true(before.maps_bytes > 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	/* the child's copy of late_global, where it is here */
	assert_int_equal(cp_objects__resolve(o, child, (__u64)(uintptr_t)late_global, &r), 0);
	assert_string_equal(r.name, "late_global");
	cp_objects__stats(o, &st);
	assert_int_equal(st.maps_evicted, 1);
	assert_int_equal(st.maps_reads, 2);
	assert_true(st.maps_bytes > 0 && st.maps_bytes < before.maps_bytes * 2);
	/* this process again: read once its spacing passed, the child's let go in turn */
	for (int tries = 0; tries < 500 && err; tries++) {
		err = cp_objects__resolve(o, getpid(), (__u64)(uintptr_t)late_global, &r);
		if (err)
			usleep(2000);
	}
	assert_int_equal(err, 0);
	cp_objects__stats(o, &st);
	assert_int_equal(st.maps_evicted, 2);
	assert_int_equal(st.maps_reads, 3);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	cp_objects__free(o);
}

/*
 * A mapping created after the snapshot is found by the refresh on a miss,
 * once twenty times what the snapshot took has passed (cp_maps_refresh_due():
 * a miss before is unmapped, and reads nothing).
 */
static void test_refresh_on_unmapped_address(void **state)
{
	struct cp_objects_opts opts = { .maps_refresh_ns = 1 };
	struct cp_objects *o = cp_objects__new(&opts);
	struct cp_objects_stats st;
	struct cp_resolved r;
	char *late;
	int err = -ENOENT;

	(void)state;
	assert_int_equal(cp_objects__resolve(o, getpid(), (__u64)(uintptr_t)late_global, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_GLOBAL);
	assert_string_equal(r.name, "late_global");
	late = malloc(32 << 20);	/* a fresh mmap, after the snapshot */
	assert_non_null(late);
	late[0] = 1;
	for (int tries = 0; tries < 500 && err == -ENOENT; tries++) {
		err = cp_objects__resolve(o, getpid(), (__u64)(uintptr_t)late + (16 << 20), &r);
		cp_objects__stats(o, &st);
		assert_int_equal(st.maps_reads, err ? 1 : 2);
		if (err)
			usleep(2000);
	}
	assert_int_equal(err, 0);
	assert_true(r.before_attach);
	/* that memory was not mapped at the first snapshot */
	assert_int_equal(st.maps_reads, 2);
	free(late);
	cp_objects__free(o);
}

/*
 * The shared file mappings of this process, mapped after the first
 * snapshot (found by the re-read): an anonymous MAP_SHARED region (the
 * kernel's "/dev/zero (deleted)", a shmem inode) is one; a private
 * anonymous one and the executable's private file mapping are not.
 */
static void test_shared_map(void **state)
{
	struct cp_objects_opts opts = { .maps_refresh_ns = 1 };
	struct cp_objects *o = cp_objects__new(&opts);
	char *shared, *private;
	const struct cp_map *m;

	(void)state;
	assert_null(cp_objects__shared_map(o, getpid(), (__u64)(uintptr_t)late_global));
	shared = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	private = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(shared != MAP_FAILED && private != MAP_FAILED);
	shared[4100] = private[0] = 1;
	/* found by a refresh, once the first snapshot's cost has passed twenty times */
	m = NULL;
	for (int tries = 0; tries < 500 && !m; tries++) {
		m = cp_objects__shared_map(o, getpid(), (__u64)(uintptr_t)shared + 4100);
		if (!m)
			usleep(2000);
	}
	assert_non_null(m);
	assert_int_equal(m->start, (__u64)(uintptr_t)shared);
	assert_int_equal(m->end - m->start, 8192);
	assert_true(m->shared && m->inode);
	assert_string_equal(m->path, "/dev/zero");
	assert_true(m->deleted);
	assert_null(cp_objects__shared_map(o, getpid(), (__u64)(uintptr_t)private));
	munmap(shared, 8192);
	munmap(private, 8192);
	cp_objects__free(o);
}

/*
 * Which mappings of a process are shared files, from a maps file of the
 * test's making (the files named exist nowhere): a POSIX shm file, a
 * memfd, System V shm and anonymous shared memory are; a perf ring buffer
 * (an "anon_inode:" mapping, whose inode unrelated processes' buffers
 * share), a private mapping of a file, a shared one with no inode and a
 * heap are not.
 */
static void test_shared_map_kinds(void **state)
{
	static const char maps[] =
		"10000-11000 rw-s 00000000 00:1a 11 /dev/shm/q\n"
		"11000-12000 rw-s 00000000 00:01 12 /memfd:ring (deleted)\n"
		"12000-13000 rw-s 00000000 00:01 13 /SYSV0000abcd (deleted)\n"
		"13000-14000 rw-s 00000000 00:01 14 /dev/zero (deleted)\n"
		"14000-15000 rw-s 00000000 00:10 15 anon_inode:[perf_event]\n"
		"15000-16000 rw-p 00000000 08:01 16 /nonexistent/data\n"
		"16000-17000 rw-s 00000000 00:00 0 /nonexistent/none\n"
		"17000-18000 rw-p 00000000 00:00 0 [heap]\n";
	static const struct {
		__u64 addr;
		__u64 inode;	/* 0: not a shared file */
	} cases[] = {
		{ 0x10008, 11 }, { 0x11008, 12 }, { 0x12008, 13 }, { 0x13008, 14 },
		{ 0x14008, 0 }, { 0x15008, 0 }, { 0x16008, 0 }, { 0x17008, 0 }, { 0x20000, 0 },
	};
	char root[] = "/tmp/cp-shared-map.XXXXXX", cmd[64];
	struct cp_objects_opts opts = { .proc_root = root };
	struct cp_objects *o;

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_maps(root, 77, maps);
	o = cp_objects__new(&opts);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cp_map *m = cp_objects__shared_map(o, 77, cases[i].addr);

		assert_int_equal(m ? m->inode : 0, cases[i].inode);
	}
	/*
	 * A heap object the probes saw in the shm file's range, or a mapping
	 * wider than the memfd's: the snapshot is older than an unmap; not
	 * shared (no re-read within the second). A mapping the program made
	 * that the anonymous shared region holds stays shared.
	 */
	assert_int_equal(cp_objects__on_alloc(o, 77, &(struct cp_object){ .start = 0x10000,
				.size = 16, .kind = CP_OBJ_HEAP }), 0);
	assert_int_equal(cp_objects__on_alloc(o, 77, &(struct cp_object){ .start = 0x11000,
				.size = 0x2000, .kind = CP_OBJ_MAPPING }), 0);
	assert_int_equal(cp_objects__on_alloc(o, 77, &(struct cp_object){ .start = 0x13000,
				.size = 0x1000, .kind = CP_OBJ_MAPPING }), 0);
	assert_null(cp_objects__shared_map(o, 77, 0x10008));
	assert_null(cp_objects__shared_map(o, 77, 0x11008));
	assert_non_null(cp_objects__shared_map(o, 77, 0x13008));
	cp_objects__free(o);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* Ranges the caller knows to be stacks hold across refreshes; exec forgets them. */
static void test_caller_thread_stacks(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	char *stack = malloc(16 << 20);	/* anonymous memory standing in for a thread stack */
	__u64 lo = (__u64)(uintptr_t)stack, hi = lo + (16 << 20);
	struct cp_resolved r;

	(void)state;
	assert_non_null(stack);
	stack[0] = 1;
	assert_int_equal(cp_objects__resolve(o, getpid(), lo + 100, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	assert_int_equal(cp_objects__add_thread_stack(o, getpid(), lo, hi), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), lo + 100, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_STACK);
	assert_string_equal(r.name, "thread stack");
	assert_int_equal(cp_objects__refresh(o, getpid()), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), hi - 1, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_STACK);
	assert_int_equal(cp_objects__on_exec(o, getpid()), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), lo + 100, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	free(stack);
	cp_objects__free(o);
}

/* A thread blocked in read() on its pipe until the test writes to it. */
static void *blocked_thread(void *arg)
{
	char c;

	return read(*(int *)arg, &c, 1) == 1 ? NULL : (void *)1;
}

/*
 * A process first seen has its blocked threads' stacks read (their stack
 * pointers, /proc/PID/task/TID/syscall). A snapshot of an exec record does
 * not read them: exec leaves one thread, whose stack is [stack], so under
 * -a the task directory of every short process was read for nothing. (This
 * process did not exec: its thread's stack shows what is not read then.)
 */
static void test_exec_snapshot_reads_no_threads(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	pthread_attr_t attr;
	struct cp_resolved r;
	struct timespec settle = { .tv_nsec = 20000000 };
	void *stack = NULL;
	size_t size = 1 << 20;
	pthread_t th;
	int fds[2];
	__u64 lo;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	/* a stack of its own, an anonymous mapping (not the malloc'd arena) */
	stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(stack != MAP_FAILED);
	lo = (__u64)(uintptr_t)stack;
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstack(&attr, stack, size), 0);
	assert_int_equal(pthread_create(&th, &attr, blocked_thread, &fds[0]), 0);
	/* once blocked in read(), its stack pointer is in /proc (a busy machine: later) */
	for (int i = 0; i < 250; i++) {
		assert_int_equal(cp_objects__refresh(o, getpid()), 0);
		assert_int_equal(cp_objects__resolve(o, getpid(), lo + 64, &r), 0);
		if (r.kind == CP_OBJ_STACK)
			break;
		nanosleep(&settle, NULL);
	}
	assert_int_equal(r.kind, CP_OBJ_STACK);
	assert_int_equal(cp_objects__on_exec(o, getpid()), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), lo + 64, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	/* a later snapshot reads them again */
	assert_int_equal(cp_objects__refresh(o, getpid()), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), lo + 64, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_STACK);
	/* the first news of a process an exec record (-a): the same */
	cp_objects__free(o);
	o = cp_objects__new(NULL);
	assert_int_equal(cp_objects__on_exec(o, getpid()), 0);
	assert_int_equal(cp_objects__resolve(o, getpid(), lo + 64, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_attr_destroy(&attr);
	munmap(stack, size);
	close(fds[0]);
	close(fds[1]);
	cp_objects__free(o);
}

static bool doubtful(struct cp_objects *o, pid_t pid, __u64 addr)
{
	struct cp_resolved r;

	assert_int_equal(cp_objects__resolve(o, pid, addr, &r), 0);
	assert_int_equal(r.kind, CP_OBJ_HEAP);
	return r.flags & CP_OBJ_F_GUARD_BACKOFF;
}

/*
 * The allocation guard backs off: objects that lived through it resolve as
 * maybe stale, objects allocated after the resume do not, heap memory with
 * no object is maybe from the back-off; -a backs off every process; each
 * answer is counted.
 */
static void test_guard_backoff(void **state)
{
	struct cp_objects *o = cp_objects__new(NULL);
	char *heap = malloc(32 << 20);	/* real anonymous memory of this process */
	__u64 base = (__u64)(uintptr_t)heap;
	struct cp_object old = heap_obj(base, 64, 1), young = heap_obj(base + 4096, 64, 1);
	struct cp_object other = heap_obj(ADDR, 64, 2);
	struct cp_objects_stats st;
	struct cp_resolved r;
	pid_t me = getpid();

	(void)state;
	assert_non_null(heap);
	heap[0] = 1;
	old.alloc_ns = 100;
	young.alloc_ns = 400;
	other.alloc_ns = 100;
	assert_int_equal(cp_objects__on_alloc(o, me, &old), 0);
	assert_int_equal(cp_objects__on_alloc(o, GHOST(1), &other), 0);
	assert_false(doubtful(o, me, base + 8));
	assert_int_equal(cp_objects__resolve(o, me, base + (16 << 20), &r), 0);
	assert_true(r.before_attach);
	assert_false(r.backoff);

	assert_int_equal(cp_objects__on_guard(o, me, true, 200), 0);
	assert_true(doubtful(o, me, base + 8));
	assert_int_equal(cp_objects__on_guard(o, me, false, 300), 0);
	assert_int_equal(cp_objects__on_alloc(o, me, &young), 0);
	assert_true(doubtful(o, me, base + 63));
	assert_false(doubtful(o, me, base + 4096));
	/* memory no allocation was seen for: before attach, or during the back-off */
	assert_int_equal(cp_objects__resolve(o, me, base + (16 << 20), &r), 0);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	assert_true(r.before_attach);
	assert_true(r.backoff);
	/* another process's probes never backed off */
	assert_false(doubtful(o, GHOST(1), ADDR));
	cp_objects__stats(o, &st);
	assert_int_equal(st.backoff_doubtful, 2);
	assert_int_equal(st.backoff_unseen, 1);

	/* -a: one guard for every process */
	assert_int_equal(cp_objects__on_guard(o, -1, true, 500), 0);
	assert_int_equal(cp_objects__on_guard(o, -1, false, 600), 0);
	assert_true(doubtful(o, GHOST(1), ADDR));
	assert_true(doubtful(o, me, base + 4096));
	cp_objects__stats(o, &st);
	assert_int_equal(st.backoff_doubtful, 4);
	free(heap);
	cp_objects__free(o);
}

/*
 * An object this process allocated before anything watched it: resolved as
 * memory with no allocation seen (and glibc as its allocator), then found in
 * glibc's chunk headers through opts.read_mem, as an allocation event.
 * Without read_mem (offline) nothing is read.
 */
static void test_chunk_event(void **state)
{
	struct cp_objects_opts opts = { .read_mem = cp_proc_read_mem };
	struct cp_objects *o = cp_objects__new(&opts), *offline = cp_objects__new(NULL);
	char *obj = malloc(100);
	__u64 addr = (__u64)(uintptr_t)obj;
	struct cp_object_event ev;
	struct cp_objects_stats st;
	struct cp_resolved r;

	(void)state;
	assert_non_null(obj);
	assert_int_equal(cp_objects__resolve(o, getpid(), addr + 50, &r), 0);
	assert_true(r.before_attach);
	assert_int_equal(r.allocator, CP_ALLOCATOR_LIBC);
	assert_int_equal(cp_objects__chunk_event(o, getpid(), addr + 50, 77, &ev), 0);
	assert_int_equal(ev.type, CP_REC_OBJECT);
	assert_int_equal(ev.kind, CP_OBJ_EV_ALLOC);
	assert_int_equal(ev.flags, CP_OBJ_EV_F_CHUNK);
	assert_int_equal(ev.tgid, getpid());
	assert_int_equal(ev.addr, addr);
	assert_int_equal(ev.size, malloc_usable_size(obj));
	assert_int_equal(ev.caller, 0);
	assert_true(ev.stack_id < 0);
	assert_int_equal(ev.time_ns, 77);
	/* a global is no heap memory; a process that does not exist has none */
	assert_int_equal(cp_objects__chunk_event(o, getpid(), (__u64)(uintptr_t)late_global, 1,
						 &ev), -ENOENT);
	assert_int_equal(cp_objects__chunk_event(o, GHOST(1), addr, 1, &ev), -ENOENT);
	assert_int_equal(cp_objects__chunk_event(offline, getpid(), addr + 50, 1, &ev), -EOPNOTSUPP);
	cp_objects__stats(o, &st);
	assert_int_equal(st.chunks.found, 1);
	free(obj);
	cp_objects__free(offline);
	cp_objects__free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_processes_are_kept_apart),
		cmocka_unit_test(test_realloc_moves_object),
		cmocka_unit_test(test_cap_evicts_least_recently_used),
		cmocka_unit_test(test_churn_keeps_table_consistent),
		cmocka_unit_test(test_exit_and_exec),
		cmocka_unit_test(test_shrink_drops_exited),
		cmocka_unit_test(test_exited_capped),
		cmocka_unit_test(test_missing_process),
		cmocka_unit_test(test_maps_byte_cap),
		cmocka_unit_test(test_refresh_on_unmapped_address),
		cmocka_unit_test(test_shared_map),
		cmocka_unit_test(test_shared_map_kinds),
		cmocka_unit_test(test_caller_thread_stacks),
		cmocka_unit_test(test_exec_snapshot_reads_no_threads),
		cmocka_unit_test(test_exited_trimmed_in_batches),
		cmocka_unit_test(test_guard_backoff),
		cmocka_unit_test(test_chunk_event),
	};

	return cmocka_run_group_tests_name("process_objects", tests, NULL, NULL);
}
