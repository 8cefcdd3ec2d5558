// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * /proc/PID/maps: lines as Linux 6.x writes them (column padding, paths with
 * spaces, " (deleted)", named anonymous regions, [vvar_vclock]), the address
 * classification, the syscall-file stack pointer, and the readers on this
 * very process.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "objects/proc_maps.h"

/* A PIE with a space in its path that was rebuilt while running, and its neighbours. */
static const char sample[] =
	"55d0c6a00000-55d0c6a02000 r--p 00000000 fe:00 1311301                    /opt/my app/bin/server (deleted)\n"
	"55d0c6a02000-55d0c6a07000 r-xp 00002000 fe:00 1311301                    /opt/my app/bin/server (deleted)\n"
	"55d0c6a07000-55d0c6a0a000 r--p 00007000 fe:00 1311301                    /opt/my app/bin/server (deleted)\n"
	"55d0c6a0a000-55d0c6a0b000 rw-p 00009000 fe:00 1311301                    /opt/my app/bin/server (deleted)\n"
	"55d0c6a0b000-55d0c6a0c000 rw-p 00000000 00:00 0 \n"
	"55d0c7e5d000-55d0c7e7e000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f1c54000000-7f1c54021000 rw-p 00000000 00:00 0                          [anon:glibc: malloc arena]\n"
	"7f1c5b7ff000-7f1c5b800000 ---p 00000000 00:00 0\n"
	"7f1c5b800000-7f1c5c000000 rw-p 00000000 00:00 0 \n"
	"7f1c5c000000-7f1c5c026000 r--p 00000000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1c5c026000-7f1c5c17c000 r-xp 00026000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1c5c17c000-7f1c5c1cf000 r--p 0017c000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1c5c1cf000-7f1c5c1d3000 r--p 001cf000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1c5c1d3000-7f1c5c1d5000 rw-p 001d3000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1c5c1d5000-7f1c5c1e2000 rw-p 00000000 00:00 0 \n"
	"7f1c5c1e2000-7f1c5c1e9000 r--s 00000000 fe:00 332280                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache\n"
	"7f1c5c1e9000-7f1c5c1ea000 rw-s 00000000 00:01 2051                       /memfd:ring buffer (deleted)\n"
	"7f1c5c1ea000-7f1c5c1ee000 r--p 00000000 00:00 0                          [vvar]\n"
	"7f1c5c1ee000-7f1c5c1f0000 r--p 00000000 00:00 0                          [vvar_vclock]\n"
	"7f1c5c1f0000-7f1c5c1f2000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7ffc8e3a1000-7ffc8e3c2000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

#define NR_SAMPLE 22

static struct cp_maps *parse_sample(void)
{
	struct cp_maps *m;

	assert_int_equal(cp_maps__parse(sample, strlen(sample), &m), 0);
	assert_int_equal(m->nr, NR_SAMPLE);
	return m;
}

static void test_parse_line_fields(void **state)
{
	static const struct {
		const char *line;
		__u64 start, end, offset, inode;
		__u32 major, minor;
		unsigned int prot;
		bool shared, deleted;
		enum cp_map_kind kind;
		const char *path;
	} cases[] = {
		{ "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon",
		  0x400000, 0x452000, 0, 173521, 8, 2, CP_MAP_READ | CP_MAP_EXEC, false, false,
		  CP_MAP_FILE, "/usr/bin/dbus-daemon" },
		{ "7f1c5c1d3000-7f1c5c1d5000 rw-p 001d3000 fe:00 332835 /lib/libc.so.6",
		  0x7f1c5c1d3000, 0x7f1c5c1d5000, 0x1d3000, 332835, 0xfe, 0,
		  CP_MAP_READ | CP_MAP_WRITE, false, false, CP_MAP_FILE, "/lib/libc.so.6" },
		{ "7f00-8f00 ---s 00000000 00:05 99 /SYSV00000000 (deleted)",
		  0x7f00, 0x8f00, 0, 99, 0, 5, 0, true, true, CP_MAP_FILE, "/SYSV00000000" },
		{ "1000-2000 rw-p 00000000 00:00 0", 0x1000, 0x2000, 0, 0, 0, 0,
		  CP_MAP_READ | CP_MAP_WRITE, false, false, CP_MAP_ANON, "" },
		{ "1000-2000 rw-p 00000000 00:00 0      ", 0x1000, 0x2000, 0, 0, 0, 0,
		  CP_MAP_READ | CP_MAP_WRITE, false, false, CP_MAP_ANON, "" },
		{ "1000-2000 rw-p 00000000 00:00 0   [stack:1234]", 0x1000, 0x2000, 0, 0, 0, 0,
		  CP_MAP_READ | CP_MAP_WRITE, false, false, CP_MAP_STACK, "[stack:1234]" },
		{ "1000-2000 rw-p 00000000 00:00 0   [anon_shmem:jit]", 0x1000, 0x2000, 0, 0, 0, 0,
		  CP_MAP_READ | CP_MAP_WRITE, false, false, CP_MAP_ANON, "[anon_shmem:jit]" },
		{ "1000-2000 r-xp 00000000 00:00 0   [uprobes]", 0x1000, 0x2000, 0, 0, 0, 0,
		  CP_MAP_READ | CP_MAP_EXEC, false, false, CP_MAP_SPECIAL, "[uprobes]" },
		/* a path that only looks deleted without its leading slash stays as is */
		{ "1000-2000 r--p 00000000 00:00 0   [x (deleted)]", 0x1000, 0x2000, 0, 0, 0, 0,
		  CP_MAP_READ, false, false, CP_MAP_SPECIAL, "[x (deleted)]" },
		{ "1000-2000 r--p 0000f000 103:02 7   /a  b/two  spaces.so", 0x1000, 0x2000,
		  0xf000, 7, 0x103, 2, CP_MAP_READ, false, false, CP_MAP_FILE,
		  "/a  b/two  spaces.so" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_map m;
		const char *path;
		size_t path_len;
		char buf[128];

		print_message("# %s\n", cases[i].line);
		assert_int_equal(cp_maps_parse_line(cases[i].line, strlen(cases[i].line), &m,
						    &path, &path_len), 0);
		assert_int_equal(m.start, cases[i].start);
		assert_int_equal(m.end, cases[i].end);
		assert_int_equal(m.offset, cases[i].offset);
		assert_int_equal(m.inode, cases[i].inode);
		assert_int_equal(m.dev_major, cases[i].major);
		assert_int_equal(m.dev_minor, cases[i].minor);
		assert_int_equal(m.prot, cases[i].prot);
		assert_int_equal(m.shared, cases[i].shared);
		assert_int_equal(m.deleted, cases[i].deleted);
		assert_int_equal(m.kind, cases[i].kind);
		assert_true(path_len < sizeof(buf));
		memcpy(buf, path, path_len);
		buf[path_len] = '\0';
		assert_string_equal(buf, cases[i].path);
	}
}

static void test_parse_line_rejects_garbage(void **state)
{
	static const char *const bad[] = {
		"",
		"not a maps line",
		"1000 2000 rw-p 00000000 00:00 0",		/* no dash */
		"2000-1000 rw-p 00000000 00:00 0",		/* end before start */
		"1000-1000 rw-p 00000000 00:00 0",		/* empty */
		"1000-2000 rwzp 00000000 00:00 0",		/* bad permission letter */
		"1000-2000 rw-p 00000000 00-00 0",		/* bad device */
		"1000-2000 rw-p 00000000 00:00",		/* no inode */
		"1000-2000 rw-",				/* truncated */
		"10000000000000000-10000000000000001 rw-p 0 00:00 0",	/* 17 hex digits */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cp_map m;
		const char *path;
		size_t path_len;

		print_message("# %s\n", bad[i]);
		assert_int_equal(cp_maps_parse_line(bad[i], strlen(bad[i]), &m, &path, &path_len),
				 -EINVAL);
	}
}

static void test_parse_sample_snapshot(void **state)
{
	struct cp_maps *m = parse_sample();

	(void)state;
	assert_string_equal(m->maps[0].path, "/opt/my app/bin/server");
	assert_true(m->maps[0].deleted);
	assert_int_equal(m->maps[1].offset, 0x2000);
	assert_int_equal(m->maps[4].kind, CP_MAP_ANON);	/* the executable's .bss tail */
	assert_string_equal(m->maps[4].path, "");
	assert_int_equal(m->maps[5].kind, CP_MAP_HEAP);
	assert_int_equal(m->maps[6].kind, CP_MAP_ANON);
	assert_string_equal(m->maps[6].path, "[anon:glibc: malloc arena]");
	assert_int_equal(m->maps[7].prot, 0);		/* a guard page */
	assert_true(m->maps[15].shared);
	assert_string_equal(m->maps[16].path, "/memfd:ring buffer");
	assert_true(m->maps[16].deleted);
	assert_int_equal(m->maps[17].kind, CP_MAP_VVAR);
	assert_int_equal(m->maps[18].kind, CP_MAP_VVAR);
	assert_int_equal(m->maps[19].kind, CP_MAP_VDSO);
	assert_int_equal(m->maps[20].kind, CP_MAP_STACK);
	assert_int_equal(m->maps[21].kind, CP_MAP_VSYSCALL);
	assert_int_equal(m->maps[21].end, 0xffffffffff601000ull);
	cp_maps__free(m);
}

static void test_parse_rejects_unsorted_and_bad_lines(void **state)
{
	static const char unsorted[] = "2000-3000 r--p 00000000 00:00 0\n"
				       "1000-2000 r--p 00000000 00:00 0\n";
	static const char overlapping[] = "1000-3000 r--p 00000000 00:00 0\n"
					  "2000-4000 r--p 00000000 00:00 0\n";
	static const char bad_middle[] = "1000-2000 r--p 00000000 00:00 0\nhello\n";
	static const char no_final_newline[] = "1000-2000 r--p 00000000 00:00 0 /x";
	struct cp_maps *m = (void *)1;

	(void)state;
	assert_int_equal(cp_maps__parse(unsorted, strlen(unsorted), &m), -EINVAL);
	assert_null(m);
	assert_int_equal(cp_maps__parse(overlapping, strlen(overlapping), &m), -EINVAL);
	assert_int_equal(cp_maps__parse(bad_middle, strlen(bad_middle), &m), -EINVAL);
	assert_int_equal(cp_maps__parse(no_final_newline, strlen(no_final_newline), &m), 0);
	assert_int_equal(m->nr, 1);
	assert_string_equal(m->maps[0].path, "/x");
	cp_maps__free(m);
}

static void test_find_boundaries(void **state)
{
	struct cp_maps *m = parse_sample();
	static const struct { __u64 addr; int index; } cases[] = {
		{ 0x55d0c6a00000, 0 }, { 0x55d0c6a01fff, 0 }, { 0x55d0c6a02000, 1 },
		{ 0x55d0c6a0c000, -1 },			/* gap after the .bss tail */
		{ 0x55d0c7e5cfff, -1 }, { 0x55d0c7e5d000, 5 }, { 0x7ffc8e3c1fff, 20 },
		{ 0x7ffc8e3c2000, -1 }, { 0, -1 }, { 0xffffffffff600000ull, 21 },
		{ UINT64_MAX, -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cp_map *map = cp_maps__find(m, cases[i].addr);

		if (cases[i].index < 0)
			assert_null(map);
		else
			assert_ptr_equal(map, &m->maps[cases[i].index]);
	}
	cp_maps__free(m);
}

static void test_classify(void **state)
{
	struct cp_maps *m = parse_sample();
	/* the thread whose stack is the 8 MiB anonymous mapping after the guard page */
	struct cp_range stacks[] = { { 0x7f1c5b800000, 0x7f1c5c000000 } };
	static const struct {
		__u64 addr;
		int ret;
		enum cp_obj_kind kind;
		const char *label;
		bool before_attach;
		__u64 file_offset;
	} cases[] = {
		{ 0x55d0c6a0a010, 0, CP_OBJ_MAPPING, "/opt/my app/bin/server", false, 0x9010 },
		{ 0x55d0c6a0b008, 0, CP_OBJ_UNKNOWN, "[anon]", true, 0 },
		{ 0x55d0c7e5d100, 0, CP_OBJ_UNKNOWN, "[heap]", true, 0 },
		{ 0x7f1c54000040, 0, CP_OBJ_UNKNOWN, "[anon:glibc: malloc arena]", true, 0 },
		{ 0x7f1c5bfff000, 0, CP_OBJ_STACK, "thread stack", false, 0 },
		{ 0x7f1c5b7ff800, 0, CP_OBJ_UNKNOWN, "[anon]", true, 0 },	/* guard page */
		{ 0x7f1c5c1d4008, 0, CP_OBJ_MAPPING, "/usr/lib/x86_64-linux-gnu/libc.so.6", false,
		  0x1d4008 },
		{ 0x7f1c5c1e9100, 0, CP_OBJ_MAPPING, "/memfd:ring buffer", false, 0x100 },
		{ 0x7f1c5c1ea000, 0, CP_OBJ_MAPPING, "[vvar]", false, 0 },
		{ 0x7f1c5c1f0010, 0, CP_OBJ_MAPPING, "[vdso]", false, 0 },
		{ 0x7ffc8e3c0000, 0, CP_OBJ_STACK, "[stack]", false, 0 },
		{ 0x1000, -ENOENT, CP_OBJ_UNKNOWN, "[unmapped]", false, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_map_class c;

		print_message("# %#llx\n", (unsigned long long)cases[i].addr);
		assert_int_equal(cp_maps_classify(m, cases[i].addr, stacks, 1, &c), cases[i].ret);
		assert_int_equal(c.kind, cases[i].kind);
		assert_string_equal(c.label, cases[i].label);
		assert_int_equal(c.before_attach, cases[i].before_attach);
		assert_int_equal(c.file_offset, cases[i].file_offset);
	}
	/* without the caller's ranges a thread stack is just anonymous memory */
	struct cp_map_class c;
	assert_int_equal(cp_maps_classify(m, 0x7f1c5bfff000, NULL, 0, &c), 0);
	assert_int_equal(c.kind, CP_OBJ_UNKNOWN);
	assert_true(c.before_attach);
	cp_maps__free(m);
}

static void test_syscall_stack_pointer(void **state)
{
	static const struct { const char *text; int ret; __u64 sp; } cases[] = {
		{ "230 0x0 0x0 0x7ffe63367d00 0x7ffe63367d40 0x0 0x0 0x7ffe63367ce8 "
		  "0x7f1836186503\n", 0, 0x7ffe63367ce8 },
		{ "-1 0x7f1c5bffee40 0x55d0c6a02345\n", 0, 0x7f1c5bffee40 },
		{ "running\n", -EAGAIN, 0 },
		{ "", -EINVAL, 0 },
		{ "230 0x0 0x0\n", -EINVAL, 0 },
		{ "-1 zz 0x1\n", -EINVAL, 0 },
		{ "1 2 3 4 5 6 7 8 9 10\n", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 sp = 0;

		assert_int_equal(cp_parse_syscall_sp(cases[i].text, &sp), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(sp, cases[i].sp);
	}
}

static int global_in_this_binary = 42;

/* The readers on this process: our own code, stack and an mmap'd block. */
static void test_read_self(void **state)
{
	struct cp_maps *m;
	struct cp_map_class c;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int local = 0;
	void *big = malloc(64 << 20);	/* above the mmap threshold: its own mapping */

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	assert_non_null(big);
	assert_int_equal(cp_maps__read(NULL, getpid(), &m), 0);
	assert_int_equal(cp_maps_classify(m, (__u64)(uintptr_t)&global_in_this_binary, NULL, 0,
					  &c), 0);
	assert_int_equal(c.kind, CP_OBJ_MAPPING);
	assert_string_equal(c.label, exe);
	assert_int_equal(cp_maps_classify(m, (__u64)(uintptr_t)&local, NULL, 0, &c), 0);
	assert_int_equal(c.kind, CP_OBJ_STACK);
	assert_int_equal(cp_maps_classify(m, (__u64)(uintptr_t)big + (32 << 20), NULL, 0, &c), 0);
	assert_int_equal(c.kind, CP_OBJ_UNKNOWN);
	assert_true(c.before_attach);
	free(big);
	cp_maps__free(m);
	assert_int_equal(cp_maps__read(NULL, -5, &m), -ENOENT);
}

struct blocked {
	int fds[2];
	volatile __u64 local_addr;
};

static void *block_in_read(void *arg)
{
	struct blocked *b = arg;
	char c;
	int local = 1;

	b->local_addr = (__u64)(uintptr_t)&local;
	return read(b->fds[0], &c, 1) == 1 ? NULL : (void *)1;
}

/* A thread blocked in read(2): its stack is found from its syscall file. */
/* Whether @pid's maps, read now, hold a mapping at @addr. */
static bool maps_show(pid_t pid, void *addr)
{
	struct cp_maps *m;
	bool found;

	assert_int_equal(cp_maps__read(NULL, pid, &m), 0);
	found = cp_maps__find(m, (__u64)(uintptr_t)addr) != NULL;
	cp_maps__free(m);
	return found;
}

/* A child that maps 5 pages and says where, then waits to be killed. */
static pid_t mapping_child(void **where)
{
	int fds[2];
	pid_t child;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		void *q;

		/* a failed assert in the test leaves no child behind */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		q = mmap(NULL, 5 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (write(fds[1], &q, sizeof(q)) != sizeof(q))
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fds[0], where, sizeof(*where)), sizeof(*where));
	assert_true(*where != MAP_FAILED);
	close(fds[0]);
	close(fds[1]);
	return child;
}

/*
 * A held process's maps are those of the hold's first read: a mapping made
 * after it is not seen until the release (an exec record's handlers see one
 * moment), and another process's maps are read afresh meanwhile.
 */
static void test_hold(void **state)
{
	struct cp_maps_how how, how2;
	char *text, *again;
	size_t len, len2;
	void *p, *theirs;
	pid_t child;

	(void)state;
	cp_maps_hold(getpid());
	assert_int_equal(cp_maps_read_text(NULL, getpid(), &text, &len, &how), 0);
	/* ours, read whole, and a read takes time */
	assert_int_equal(how.owner, geteuid());
	assert_false(how.cut);
	assert_true(how.cost_ns > 0);
	p = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_false(maps_show(getpid(), p));
	assert_int_equal(cp_maps_read_text("/proc", getpid(), &again, &len2, &how2), 0);
	assert_int_equal(len2, len);
	assert_memory_equal(again, text, len);
	/* the copy is the read's: its refreshes are spaced by what the read took */
	assert_int_equal(how2.cost_ns, how.cost_ns);
	assert_int_equal(how2.owner, how.owner);
	free(again);
	/* another process: its own maps, read now */
	child = mapping_child(&theirs);
	assert_false(maps_show(getpid(), theirs));
	assert_true(maps_show(child, theirs));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	cp_maps_release();
	assert_true(maps_show(getpid(), p));
	/* a new hold takes the maps of its own moment */
	cp_maps_hold(getpid());
	assert_true(maps_show(getpid(), p));
	munmap(p, 3 * 4096);
	assert_true(maps_show(getpid(), p));
	cp_maps_release();
	assert_false(maps_show(getpid(), p));
	free(text);
}

/*
 * In a turn of the live loop, the holds of several exec records last to its
 * end: each process's maps stay those of its first read, through the
 * release each record's handlers make; another hold does not end them; the
 * turn's end does. Holding a process again (a new exec) reads it afresh.
 */
static void test_hold_turn(void **state)
{
	struct cp_maps_how how;
	void *p, *theirs;
	char *text;
	size_t len;
	pid_t child;

	(void)state;
	child = mapping_child(&theirs);
	cp_maps_turn(true);
	cp_maps_hold(getpid());
	/* the hold's first read */
	assert_int_equal(cp_maps_read_text(NULL, getpid(), &text, &len, &how), 0);
	free(text);
	p = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	/* the hold read before the mapping: not seen, through a release */
	cp_maps_release();
	assert_false(maps_show(getpid(), p));
	/* a second process held: the first stays held */
	cp_maps_hold(child);
	assert_true(maps_show(child, theirs));
	cp_maps_release();
	assert_false(maps_show(getpid(), p));
	/* held again: a new exec, the maps of now */
	cp_maps_hold(getpid());
	assert_true(maps_show(getpid(), p));
	munmap(p, 3 * 4096);
	assert_true(maps_show(getpid(), p));
	/* the turn's end releases every hold */
	cp_maps_turn(false);
	assert_false(maps_show(getpid(), p));
	/* outside a turn, a hold ends the one before; holding the same process again holds it */
	cp_maps_hold(getpid());
	cp_maps_hold(getpid());
	assert_false(maps_show(getpid(), p));
	p = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_false(maps_show(getpid(), p));
	cp_maps_hold(child);
	assert_true(maps_show(child, theirs));
	assert_true(maps_show(getpid(), p));
	cp_maps_release();
	munmap(p, 3 * 4096);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_thread_stacks_of_self(void **state)
{
	struct blocked b = { .local_addr = 0 };
	struct cp_range r[CP_MAX_THREAD_STACKS];
	struct cp_map_class c;
	struct cp_maps *m;
	pthread_t th;
	int nr = 0;

	(void)state;
	assert_int_equal(pipe(b.fds), 0);
	assert_int_equal(pthread_create(&th, NULL, block_in_read, &b), 0);
	assert_int_equal(cp_maps__read(NULL, getpid(), &m), 0);
	/* wait until the thread sleeps in read (its syscall file stops saying "running") */
	for (int tries = 0; tries < 200 && nr <= 0; tries++) {
		usleep(5000);
		nr = cp_maps_thread_stacks(NULL, getpid(), m, r, CP_MAX_THREAD_STACKS);
	}
	assert_true(nr >= 1);
	assert_int_equal(cp_maps_classify(m, b.local_addr, r, (size_t)nr, &c), 0);
	assert_int_equal(c.kind, CP_OBJ_STACK);
	assert_string_equal(c.label, "thread stack");
	assert_int_equal(write(b.fds[1], "x", 1), 1);
	pthread_join(th, NULL);
	close(b.fds[0]);
	close(b.fds[1]);
	cp_maps__free(m);
}

/* The walk looks at @max threads at most, and counts the ones it left. */
static void test_thread_walk_capped(void **state)
{
	struct blocked b[2] = {{.local_addr = 0}, {.local_addr = 0}};
	__u64 before[CP_TF_NR], after[CP_TF_NR];
	struct cp_range r[1];
	struct cp_maps *m;
	pthread_t th[2];

	(void)state;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pipe(b[i].fds), 0);
		assert_int_equal(pthread_create(&th[i], NULL, block_in_read, &b[i]), 0);
	}
	assert_int_equal(cp_maps__read(NULL, getpid(), &m), 0);
	cp_tf_refusals(before);
	/* three threads, one looked at: one range at most, the walk's stop counted once */
	assert_in_range(cp_maps_thread_stacks(NULL, getpid(), m, r, 1), 0, 1);
	cp_tf_refusals(after);
	assert_int_equal(after[CP_TF_THREADS_CAP], before[CP_TF_THREADS_CAP] + 1);
	/* room for all: nothing left, nothing counted */
	assert_in_range(cp_maps_thread_stacks(NULL, getpid(), m, (struct cp_range[4]){0}, 4), 0, 3);
	cp_tf_refusals(before);
	assert_int_equal(before[CP_TF_THREADS_CAP], after[CP_TF_THREADS_CAP]);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(write(b[i].fds[1], "x", 1), 1);
		pthread_join(th[i], NULL);
		close(b[i].fds[0]);
		close(b[i].fds[1]);
	}
	cp_maps__free(m);
}

/*
 * A snapshot is taken again after the caller's interval, or twenty times
 * what the last one took when that is longer: 150 ms of reading waits 3 s.
 */
static void test_refresh_due(void **state)
{
	const __u64 ms = 1000000ull, t = 1000 * ms;

	(void)state;
	assert_false(cp_maps_refresh_due(t, 0, t + 20 * ms - 1, 20 * ms));
	assert_true(cp_maps_refresh_due(t, 0, t + 20 * ms, 20 * ms));
	/* 1 ms twenty times is the interval itself */
	assert_true(cp_maps_refresh_due(t, ms, t + 20 * ms, 20 * ms));
	assert_false(cp_maps_refresh_due(t, 150 * ms, t + 3000 * ms - 1, 20 * ms));
	assert_true(cp_maps_refresh_due(t, 150 * ms, t + 3000 * ms, 20 * ms));
	/* a clock before the read: not yet */
	assert_false(cp_maps_refresh_due(t, 0, t - 1, 0));
	assert_true(cp_maps_refresh_due(t, 0, t, 0));
}

/*
 * The reads' bank: full at first (1 s), spent by what reads past their
 * free bytes took, refilled at 5 % of the time passing up to full again,
 * owing one bank at most.
 */
static void test_bank(void **state)
{
	const __u64 ms = 1000000ull, s = 1000 * ms, t = 5 * s;
	struct cp_maps_bank b = {0};

	(void)state;
	assert_true(cp_maps_bank_may(&b, t));
	cp_maps_bank_charge(&b, 900 * ms);
	assert_true(cp_maps_bank_may(&b, t));
	cp_maps_bank_charge(&b, 150 * ms); /* 50 ms owed */
	assert_false(cp_maps_bank_may(&b, t));
	/* a second later: 50 ms more, nothing banked yet; a clock gone back gives nothing */
	assert_false(cp_maps_bank_may(&b, t + s));
	assert_true(cp_maps_bank_may(&b, t + s + 20 * ms));
	assert_true(cp_maps_bank_may(&b, t));
	/* 1 ms banked, then a read of a minute: it owes what one bank holds, not more */
	cp_maps_bank_charge(&b, 60 * s);
	assert_int_equal(b.ns, (__s64)ms - CP_MAPS_BANK_NS);
	/* repaid in 19.98 s at 5 % */
	assert_false(cp_maps_bank_may(&b, t + s + 20 * ms + 19980 * ms));
	assert_true(cp_maps_bank_may(&b, t + s + 20 * ms + 20000 * ms));
	/* a long while: full, not more */
	assert_true(cp_maps_bank_may(&b, t + 3600 * s));
	assert_int_equal(b.ns, CP_MAPS_BANK_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line_fields),
		cmocka_unit_test(test_parse_line_rejects_garbage),
		cmocka_unit_test(test_parse_sample_snapshot),
		cmocka_unit_test(test_parse_rejects_unsorted_and_bad_lines),
		cmocka_unit_test(test_find_boundaries),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_syscall_stack_pointer),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_thread_stacks_of_self),
		cmocka_unit_test(test_thread_walk_capped),
		cmocka_unit_test(test_refresh_due),
		cmocka_unit_test(test_bank),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_hold_turn),
	};

	return cmocka_run_group_tests_name("proc_maps", tests, NULL, NULL);
}
