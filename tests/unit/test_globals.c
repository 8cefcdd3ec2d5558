// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Globals and the resolver on a live process: tests/workloads/globals prints
 * the addresses of its own variables (the ground truth, from the compiler
 * and the dynamic linker rather than from our ELF reading) and waits; every
 * address must resolve to the right name, size and kind through the live
 * /proc/PID/maps - a PIE at a random load bias, libc's .dynsym, thread-locals
 * of two threads. The pure placement rules are checked on tables first.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <elf.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "lib/workload_pipe.h"

#include "machine/target_file.h"
#include "objects/elf_syms.h"
#include "objects/globals.h"
#include "objects/objects.h"

/* ---- pure rules ---- */

static struct cp_map map(__u64 start, __u64 end, __u64 offset, unsigned int prot)
{
	struct cp_map m = {
		.start = start, .end = end, .offset = offset, .prot = prot,
		.kind = CP_MAP_FILE, .inode = 1, .path = "/x",
	};

	return m;
}

#define R	CP_MAP_READ
#define RW	(CP_MAP_READ | CP_MAP_WRITE)
#define RX	(CP_MAP_READ | CP_MAP_EXEC)

static void test_load_bias_table(void **state)
{
	/* Debian 12 /usr/bin/cat (PIE, -z separate-code): readelf -lW */
	static const struct cp_load_seg pie[] = {
		{ 0x0, 0x0, 0x1720, 0x1720, PF_R },
		{ 0x2000, 0x2000, 0x4da9, 0x4da9, PF_R | PF_X },
		{ 0x7000, 0x7000, 0x20e8, 0x20e8, PF_R },
		{ 0xac30, 0x9c30, 0x650, 0x7e8, PF_R | PF_W },
	};
	/* a non-PIE executable linked at 0x400000 */
	static const struct cp_load_seg exec[] = {
		{ 0x400000, 0x0, 0x1000, 0x1000, PF_R | PF_X },
		{ 0x601e10, 0x1e10, 0x230, 0x240, PF_R | PF_W },
	};
	/* old two-segment layout: data shares file page 0 with text */
	static const struct cp_load_seg old[] = {
		{ 0x0, 0x0, 0x6f4, 0x6f4, PF_R | PF_X },
		{ 0x200e10, 0xe10, 0x230, 0x238, PF_R | PF_W },
	};
	/* libc's RW segment starts mid-page; RELRO splits its mapping */
	static const struct cp_load_seg libc[] = {
		{ 0x0, 0x0, 0x25388, 0x25388, PF_R },
		{ 0x1cf8d0, 0x1cf8d0, 0x4f98, 0x12680, PF_R | PF_W },
	};
	struct cp_map pie_maps[] = {
		map(0x55e208fd2000, 0x55e208fd4000, 0x0, R),
		map(0x55e208fd4000, 0x55e208fd9000, 0x2000, RX),
		map(0x55e208fdc000, 0x55e208fdd000, 0x9000, R),	/* RELRO part */
		map(0x55e208fdd000, 0x55e208fde000, 0xa000, RW),
	};
	struct cp_map exec_maps[] = { map(0x400000, 0x401000, 0, RX),
				      map(0x601000, 0x602000, 0x1000, RW) };
	struct cp_map old_maps[] = { map(0x7f0000000000, 0x7f0000001000, 0, RX),
				     map(0x7f0000200000, 0x7f0000201000, 0, RW) };
	struct cp_map libc_maps[] = { map(0x7f1c5c1cf000, 0x7f1c5c1d3000, 0x1cf000, R),
				      map(0x7f1c5c1d3000, 0x7f1c5c1d5000, 0x1d3000, RW),
				      map(0x7f1c5c000000, 0x7f1c5c026000, 0x0, R) };
	struct cp_map stray = map(0x1000, 0x2000, 0x55000, R);
	static const struct {
		const char *what;
		const struct cp_load_seg *segs;
		size_t nr_segs;
		size_t map_first, nr_maps;
		int set;		/* 0 pie, 1 exec, 2 old, 3 libc, 4 stray */
		int ret;
		__u64 bias;
	} cases[] = {
		{ "PIE, all mappings", pie, 4, 0, 4, 0, 0, 0x55e208fd2000 },
		{ "PIE, text mapping only", pie, 4, 1, 1, 0, 0, 0x55e208fd2000 },
		{ "PIE, RELRO and data only", pie, 4, 2, 2, 0, 0, 0x55e208fd2000 },
		{ "non-PIE executable", exec, 2, 0, 2, 1, 0, 0 },
		{ "non-PIE, data only", exec, 2, 1, 1, 1, 0, 0 },
		{ "old layout, text first", old, 2, 0, 2, 2, 0, 0x7f0000000000 },
		{ "old layout, data alone: the exec bit picks the segment", old, 2, 1, 1, 2, 0,
		  0x7f0000000000 },
		{ "libc, RELRO part", libc, 2, 0, 1, 3, 0, 0x7f1c5c000000 },
		{ "libc, writable tail only (containment)", libc, 2, 1, 1, 3, 0, 0x7f1c5c000000 },
		{ "libc, first mapping listed last", libc, 2, 2, 1, 3, 0, 0x7f1c5c000000 },
		{ "offset no segment holds", libc, 2, 0, 1, 4, -ENOENT, 0 },
	};
	struct cp_map *sets[] = { pie_maps, exec_maps, old_maps, libc_maps, &stray };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cp_map *ptrs[4];
		__u64 bias = 0xdead;

		print_message("# %s\n", cases[i].what);
		for (size_t k = 0; k < cases[i].nr_maps; k++) {
			size_t at = cases[i].set == 4 ? 0 : cases[i].map_first + k;

			ptrs[k] = &sets[cases[i].set][at];
		}
		assert_int_equal(cp_load_bias(cases[i].segs, cases[i].nr_segs, ptrs,
					      cases[i].nr_maps, &bias), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(bias, cases[i].bias);
	}
}

static void test_tls_exec_offset_table(void **state)
{
	static const struct { __u64 memsz, align, vaddr, off; } cases[] = {
		{ 0x44, 16, 0x3de0, 0x50 },	/* tests/workloads/globals: 64 + 4 bytes */
		{ 0x90, 8, 0x1cf8d0, 0x90 },	/* libc's PT_TLS, were it the executable */
		{ 0x8, 0, 0x1000, 0x8 },	/* align 0 means 1 */
		{ 0x100, 64, 0x1008, 0x138 },	/* misaligned: the block ends 56 below tp */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(cp_tls_exec_offset(cases[i].memsz, cases[i].align,
						    cases[i].vaddr), cases[i].off);
}

/* ---- the live workload ---- */

#define MAX_VARS 16

struct var {
	char what[16], name[64];
	__u64 addr, size, tp;
};

struct workload {
	pid_t pid;
	FILE *out;		/* its stdout */
	int in;			/* its stdin */
	struct var vars[MAX_VARS];
	int nr;
};

static const struct var *var(const struct workload *w, const char *what, const char *name,
			     int nth)
{
	for (int i = 0; i < w->nr; i++)
		if (!strcmp(w->vars[i].what, what) && !strcmp(w->vars[i].name, name) && !nth--)
			return &w->vars[i];
	fail_msg("workload printed no %s %s", what, name);
	return NULL;
}

static int start_workload(void **state)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	struct workload *w = calloc(1, sizeof(*w));
	char path[4096], line[256];

	if (!w)
		return -1;
	snprintf(path, sizeof(path), "%s/tests/workloads/globals", build);
	if (cp_wl_pipe_start((char *const[]){ path, NULL }, &w->pid, &w->in, &w->out))
		return -1;
	while (w->out && fgets(line, sizeof(line), w->out)) {
		struct var *v = &w->vars[w->nr];
		unsigned long long addr, size, tp = 0;
		int n;

		if (!strncmp(line, "ready ", 6)) {
			*state = w;
			return 0;
		}
		n = sscanf(line, "%15s %63s %llx %llu %llx", v->what, v->name, &addr, &size, &tp);
		if (n < 4 || w->nr == MAX_VARS - 1)
			break;
		v->addr = addr;
		v->size = size;
		v->tp = n == 5 ? tp : 0;
		w->nr++;
	}
	fprintf(stderr, "workload %s did not get ready\n", path);
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	return -1;
}

static int stop_workload(void **state)
{
	struct workload *w = *state;
	int status = 0;

	if (write(w->in, "go\n", 3) != 3)
		kill(w->pid, SIGKILL);
	close(w->in);
	waitpid(w->pid, &status, 0);
	fclose(w->out);
	free(w);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static struct cp_resolved resolve(struct cp_objects *o, pid_t pid, __u64 addr)
{
	struct cp_resolved r;

	assert_int_equal(cp_objects__resolve(o, pid, addr, &r), 0);
	return r;
}

#define assert_var(o, pid, addr, kind_, name_, size_, offset_)			\
	do {									\
		struct cp_resolved _r = resolve(o, pid, addr);			\
		assert_string_equal(_r.name, name_);				\
		assert_int_equal(_r.kind, kind_);				\
		assert_int_equal(_r.size, size_);				\
		assert_int_equal(_r.offset, offset_);				\
		assert_int_equal(_r.start, (addr) - (offset_));			\
	} while (0)

static void test_globals_of_the_pie(void **state)
{
	struct workload *w = *state;
	struct cp_objects *o = cp_objects__new(NULL);
	const struct var *arr = var(w, "global", "cp_wl_array", 0);
	const struct var *cfg = var(w, "global", "cp_wl_config", 0);
	const struct var *member = var(w, "member", "cp_wl_config", 0);
	const struct var *st = var(w, "global", "cp_wl_static", 0);
	const struct var *out = var(w, "global", "stdout", 0);
	struct cp_resolved r;

	assert_non_null(o);
	assert_var(o, w->pid, arr->addr, CP_OBJ_GLOBAL, "cp_wl_array", arr->size, 0);
	assert_var(o, w->pid, arr->addr + arr->size - 1, CP_OBJ_GLOBAL, "cp_wl_array", arr->size,
		   arr->size - 1);
	r = resolve(o, w->pid, arr->addr + arr->size);	/* one past the end */
	assert_string_not_equal(r.name, "cp_wl_array");
	assert_var(o, w->pid, cfg->addr, CP_OBJ_GLOBAL, "cp_wl_config", cfg->size, 0);
	assert_var(o, w->pid, member->addr, CP_OBJ_GLOBAL, "cp_wl_config", cfg->size,
		   member->addr - cfg->addr);
	/* file-static: only .symtab has it */
	assert_var(o, w->pid, st->addr, CP_OBJ_GLOBAL, "cp_wl_static", st->size, 0);
	/*
	 * &stdout: on x86-64 a PIE refers to libc's stdout through a copy
	 * relocation, so the pointer lives in this executable's .bss under the
	 * same name; either way it is the 8-byte "stdout".
	 */
	assert_var(o, w->pid, out->addr, CP_OBJ_GLOBAL, "stdout", 8, 0);
	r = resolve(o, w->pid, arr->addr);
	assert_non_null(strstr(r.path, "tests/workloads/globals"));
	cp_objects__free(o);
}

/*
 * The executable is asked of /proc only for its TLS: sleep(1) has none, so
 * its globals name no executable (the workload's own, with TLS, is named
 * above) though libc, mapped, has TLS of its own.
 */
static void test_exec_without_tls(void **state)
{
	struct cp_elf_cache *cache = cp_elf_cache__new(0);
	struct cp_globals *g;
	struct cp_maps *m = NULL;
	bool libc = false;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	/* until the loader has mapped libc */
	for (int i = 0; i < 200 && !libc; i++) {
		usleep(10000);
		cp_maps__free(m);
		assert_int_equal(cp_maps__read(NULL, pid, &m), 0);
		for (size_t j = 0; j < m->nr; j++)
			libc = libc || strstr(m->maps[j].path, "libc.so");
	}
	assert_true(libc);
	assert_int_equal(cp_globals__load(cache, m, NULL, pid, NULL, &g), 0);
	assert_true(g->nr >= 2);
	assert_null(g->exec);
	for (size_t i = 0; i < g->nr; i++)
		assert_false(g->mods[i].is_exec);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cp_globals__free(g);
	cp_maps__free(m);
	cp_elf_cache__free(cache);
}

/* The PIE's load bias is not 0, and the executable is recognised as such. */
static void test_pie_load_bias(void **state)
{
	struct workload *w = *state;
	struct cp_elf_cache *cache = cp_elf_cache__new(0);
	const struct var *arr = var(w, "global", "cp_wl_array", 0);
	const struct cp_module *mod;
	struct cp_globals *g;
	struct cp_maps *m;

	assert_int_equal(cp_maps__read(NULL, w->pid, &m), 0);
	assert_int_equal(cp_globals__load(cache, m, NULL, w->pid, NULL, &g), 0);
	assert_non_null(g->exec);
	mod = cp_globals_module(g, arr->addr);
	assert_ptr_equal(mod, g->exec);
	assert_int_equal(mod->elf->e_type, ET_DYN);
	assert_true(mod->elf->from_symtab);
	assert_int_not_equal(mod->bias, 0);
	/* the bias is where the file's offset-0 mapping landed */
	for (size_t i = 0; i < m->nr; i++) {
		if (m->maps[i].inode == mod->inode && m->maps[i].offset == 0) {
			assert_int_equal(mod->bias, m->maps[i].start);
			break;
		}
	}
	cp_globals__free(g);
	cp_maps__free(m);
	cp_elf_cache__free(cache);
}

/*
 * A second process of the same files (here the same process again) is
 * served by the cache: no file parsed again, one hit per module, and the
 * executable's symbols found from an O_PATH descriptor, which reads nothing.
 */
static void test_second_load_from_cache(void **state)
{
	struct workload *w = *state;
	struct cp_elf_cache *cache = cp_elf_cache__new(0);
	struct cp_elf_cache_stats first, second;
	const struct cp_elf_syms *found;
	struct cp_globals *g1, *g2;
	struct cp_maps *m;
	char exe[64];
	int pfd;

	assert_int_equal(cp_maps__read(NULL, w->pid, &m), 0);
	assert_int_equal(cp_globals__load(cache, m, NULL, w->pid, NULL, &g1), 0);
	cp_elf_cache__stats(cache, &first);
	assert_true(g1->nr >= 2); /* the PIE and libc at least */
	assert_int_equal(first.hits, 0);
	assert_int_equal(cp_globals__load(cache, m, NULL, w->pid, NULL, &g2), 0);
	cp_elf_cache__stats(cache, &second);
	assert_int_equal(second.files_read, first.files_read);
	assert_true(second.hits >= g2->nr); /* and any mapped file that is no module */
	assert_int_equal(g2->nr, g1->nr);
	assert_ptr_equal(g2->exec->elf, g1->exec->elf);

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)w->pid);
	pfd = open(exe, O_PATH | O_CLOEXEC);
	assert_true(pfd >= 0);
	assert_int_equal(cp_elf_cache__find(cache, pfd, &found), 0);
	assert_ptr_equal(found, g1->exec->elf);
	cp_elf_cache__put(cache, found);
	close(pfd);
	pfd = open("/proc/self/exe", O_PATH | O_CLOEXEC); /* this test: never loaded */
	assert_true(pfd >= 0);
	assert_int_equal(cp_elf_cache__find(cache, pfd, &found), -ENOENT);
	close(pfd);

	cp_globals__free(g2);
	cp_globals__free(g1);
	cp_maps__free(m);
	cp_elf_cache__free(cache);
}

/*
 * A process whose files were found lately (cp_tf_seen()) has its modules
 * placed by the maps lines' devices and inodes alone, nothing opened: names
 * that lead nowhere, under a /proc that holds nothing, still find them.
 * Without that memory (cp_tf_seen_for(0)) the same names find no file.
 */
/*
 * Whether every file @m maps is one cp_tf_seen() keeps: root's, writable
 * by no one else, and fstat() naming the device and inode of its line.
 */
static bool all_kept_kind(const struct cp_maps *m)
{
	for (size_t i = 0; i < m->nr; i++) {
		const struct cp_map *x = &m->maps[i];
		struct stat st;

		if (x->kind != CP_MAP_FILE || !x->inode)
			continue;
		if (stat(x->path, &st) || st.st_uid || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
		    st.st_ino != x->inode || major(st.st_dev) != x->dev_major ||
		    minor(st.st_dev) != x->dev_minor)
			return false;
	}
	return true;
}

static void test_load_by_maps_line(void **state)
{
	struct workload *w = *state;
	struct cp_elf_cache *cache = cp_elf_cache__new(0);
	char root[] = "/tmp/cp-noproc-XXXXXX";
	struct cp_globals *g1, *g2, *g3;
	struct cp_maps *m, moved;
	struct cp_map *copy;

	assert_int_equal(cp_maps__read(NULL, w->pid, &m), 0);
	if (!all_kept_kind(m)) {
		/* a build not root's, or a file system whose lines name another device */
		cp_maps__free(m);
		cp_elf_cache__free(cache);
		skip();
	}
	assert_non_null(mkdtemp(root));
	assert_int_equal(cp_globals__load(cache, m, NULL, w->pid, NULL, &g1), 0);
	assert_true(g1->nr >= 2); /* the PIE and libc at least */
	copy = calloc(m->nr, sizeof(*copy));
	assert_non_null(copy);
	memcpy(copy, m->maps, m->nr * sizeof(*copy));
	for (size_t i = 0; i < m->nr; i++)
		if (copy[i].kind == CP_MAP_FILE)
			copy[i].path = "/nonexistent/moved.so";
	moved = (struct cp_maps){.maps = copy, .nr = m->nr};

	assert_int_equal(cp_globals__load(cache, &moved, root, w->pid, NULL, &g2), 0);
	assert_int_equal(g2->nr, g1->nr);
	for (size_t i = 0; i < g1->nr; i++) {
		assert_ptr_equal(g2->mods[i].elf, g1->mods[i].elf);
		assert_int_equal(g2->mods[i].start, g1->mods[i].start);
	}
	cp_tf_seen_for(0);
	assert_int_equal(cp_globals__load(cache, &moved, root, w->pid, NULL, &g3), 0);
	cp_tf_seen_for(CP_TF_SEEN_NS);
	assert_int_equal(g3->nr, 0);

	cp_globals__free(g3);
	cp_globals__free(g2);
	cp_globals__free(g1);
	free(copy);
	cp_maps__free(m);
	cp_elf_cache__free(cache);
	rmdir(root);
}

/*
 * A libc global from libc's own symbols: stdout's value is &_IO_2_1_stdout_,
 * libc's FILE for fd 1 (exported in .dynsym since GLIBC_2.2.5 and never
 * copy-relocated, since programs use the pointer, not the struct).
 */
static void test_shared_library_global(void **state)
{
	struct workload *w = *state;
	struct cp_objects *o = cp_objects__new(NULL);
	const struct var *file = var(w, "libc", "_IO_2_1_stdout_", 0);
	struct cp_resolved r;

	r = resolve(o, w->pid, file->addr + 8);	/* FILE's _IO_read_ptr */
	assert_int_equal(r.kind, CP_OBJ_GLOBAL);
	assert_string_equal(r.name, "_IO_2_1_stdout_");
	assert_int_equal(r.offset, 8);
	assert_int_equal(r.start, file->addr);
	/* struct _IO_FILE_plus: a FILE and its vtable pointer */
	assert_true(r.size >= 216 && r.size <= 256);
	assert_non_null(strstr(r.path, "libc.so"));
	cp_objects__free(o);
}

static void test_thread_locals_need_thread_pointers(void **state)
{
	struct workload *w = *state;
	struct cp_objects *o = cp_objects__new(NULL);
	const struct var *t0 = var(w, "tls", "cp_wl_tls", 0), *t1 = var(w, "tls", "cp_wl_tls", 1);
	const struct var *z1 = var(w, "tls", "cp_wl_tls_zero", 1);
	struct cp_resolved r;

	assert_int_not_equal(t0->tp, t1->tp);	/* two threads, two copies */
	/* without thread pointers a TLS block is just memory of that thread */
	r = resolve(o, w->pid, t1->addr);
	assert_int_not_equal(r.kind, CP_OBJ_TLS);
	assert_int_equal(cp_objects__set_thread_pointer(o, w->pid, 100, t0->tp), 0);
	assert_int_equal(cp_objects__set_thread_pointer(o, w->pid, 101, t1->tp), 0);
	assert_var(o, w->pid, t0->addr, CP_OBJ_TLS, "cp_wl_tls", t0->size, 0);
	assert_var(o, w->pid, t1->addr + 24, CP_OBJ_TLS, "cp_wl_tls", t1->size, 24);
	assert_var(o, w->pid, z1->addr, CP_OBJ_TLS, "cp_wl_tls_zero", z1->size, 0);
	/* forgetting a thread forgets its copy */
	assert_int_equal(cp_objects__set_thread_pointer(o, w->pid, 101, 0), 0);
	r = resolve(o, w->pid, t1->addr);
	assert_int_not_equal(r.kind, CP_OBJ_TLS);
	assert_var(o, w->pid, t0->addr, CP_OBJ_TLS, "cp_wl_tls", t0->size, 0);
	cp_objects__free(o);
}

static void test_stack_heap_and_tracked_objects(void **state)
{
	struct workload *w = *state;
	struct cp_objects *o = cp_objects__new(NULL);
	const struct var *stack = var(w, "stack", "-", 0), *heap = var(w, "heap", "-", 0);
	struct cp_objects_stats st;
	struct cp_resolved r;
	struct cp_object obj = {
		.start = heap->addr - 500, .size = heap->size, .kind = CP_OBJ_HEAP, .tid = 4242,
		.flags = CP_OBJ_F_GUARD_BACKOFF,
	};

	/* the blocked worker's stack, found from its syscall file */
	r = resolve(o, w->pid, stack->addr);
	assert_int_equal(r.kind, CP_OBJ_STACK);
	assert_string_equal(r.name, "thread stack");
	/* malloc'd before anything attached */
	r = resolve(o, w->pid, heap->addr);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	assert_true(r.before_attach);
	assert_string_equal(r.name, "[heap]");
	/* once its allocation is seen, the same address is that object */
	obj.callsite = cp_objects__callsite(o, w->pid, 0x401234, 17);
	assert_int_not_equal(obj.callsite, 0);
	assert_int_equal(cp_objects__on_alloc(o, w->pid, &obj), 0);
	r = resolve(o, w->pid, heap->addr);
	assert_int_equal(r.kind, CP_OBJ_HEAP);
	assert_false(r.before_attach);
	assert_int_equal(r.start, obj.start);
	assert_int_equal(r.size, heap->size);
	assert_int_equal(r.offset, 500);
	assert_int_equal(r.tid, 4242);
	assert_int_equal(r.flags, CP_OBJ_F_GUARD_BACKOFF);
	assert_int_equal(r.callsite, obj.callsite);
	assert_int_equal(cp_objects__callsite_get(o, w->pid, r.callsite)->caller, 0x401234);
	assert_int_equal(cp_objects__callsite_get(o, w->pid, r.callsite)->stack_id, 17);
	/* freed: back to memory of unknown origin */
	assert_int_equal(cp_objects__on_free(o, w->pid, obj.start), 0);
	r = resolve(o, w->pid, heap->addr);
	assert_true(r.before_attach);
	/* exec empties the store and the call sites; the globals are re-read */
	assert_int_equal(cp_objects__on_alloc(o, w->pid, &obj), 0);
	assert_int_equal(cp_objects__on_exec(o, w->pid), 0);
	r = resolve(o, w->pid, heap->addr);
	assert_int_equal(r.kind, CP_OBJ_UNKNOWN);
	assert_null(cp_objects__callsite_get(o, w->pid, obj.callsite));
	assert_var(o, w->pid, var(w, "global", "cp_wl_array", 0)->addr, CP_OBJ_GLOBAL,
		   "cp_wl_array", 4000, 0);
	cp_objects__stats(o, &st);
	assert_int_equal(st.execs, 1);
	assert_int_equal(st.store.inserted, 2);
	assert_int_equal(st.store.removed, 1);
	assert_true(st.resolved[CP_OBJ_HEAP] >= 1 && st.resolved[CP_OBJ_STACK] >= 1);
	assert_true(st.elf.hits >= 1);	/* the exec re-read came from the cache */
	cp_objects__on_exit(o, w->pid);
	assert_false(cp_objects__tracked(o, w->pid));
	cp_objects__free(o);
}

/* nm's value and size of @name in @path (0 size: not found). */
static void nm_symbol(const char *path, const char *name, unsigned long long *value,
		      unsigned long long *size)
{
	char cmd[4200], line[512], sym[256], type;
	unsigned long long v, sz;
	FILE *f;

	*value = *size = 0;
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %llx %c %255s", &v, &sz, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*value = v;
			*size = sz;
		}
	pclose(f);
}

/*
 * A library 1 GiB long, nearly all of it a hole (a sparse file costs a
 * tenant nothing): its data symbols are read from the parts that hold
 * them, with no copy of the file made (clang's processes each copied the
 * 105 MiB of libLLVM for a few MiB of .dynsym and .dynstr), and they are
 * what nm says. Cut after its ELF header, the file reads as no symbols.
 */
static void test_symbols_read_in_parts(void **state)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	char src[4096], dst[] = "/tmp/cp-test-elf-XXXXXX", buf[65536];
	struct cp_copy_stats before, after;
	unsigned long long value, size;
	const struct cp_symbol *s;
	struct cp_elf_syms *e = NULL;
	int in, out, err;
	ssize_t n;
	off_t len = 0;

	(void)state;
	snprintf(src, sizeof(src), "%s/tests/workloads/globals", build);
	nm_symbol(src, "cp_wl_array", &value, &size);
	assert_int_not_equal(size, 0);
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = mkstemp(dst);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		assert_int_equal(write(out, buf, (size_t)n), n);
		len += n;
	}
	close(in);
	assert_int_equal(ftruncate(out, len + (1l << 30)), 0);
	cp_tf_kept_stats(&before);
	assert_int_equal(cp_elf_syms__read_fd(out, &e), 0);
	cp_tf_kept_stats(&after);
	assert_int_equal(after.made, before.made);
	assert_true(e->is_elf && e->from_symtab);
	s = cp_elf_syms__find(e, value + size - 1);
	assert_non_null(s);
	assert_string_equal(s->name, "cp_wl_array");
	assert_int_equal(s->value, value);
	assert_int_equal(s->size, size);
	cp_elf_syms__free(e);
	e = NULL;
	assert_int_equal(ftruncate(out, (off_t)sizeof(Elf64_Ehdr)), 0);
	err = cp_elf_syms__read_fd(out, &e);
	assert_true(err < 0 || !e->nr_objs);
	cp_elf_syms__free(e);
	close(out);
	unlink(dst);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_load_bias_table),
		cmocka_unit_test(test_tls_exec_offset_table),
		cmocka_unit_test(test_symbols_read_in_parts),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_globals_of_the_pie),
		cmocka_unit_test(test_pie_load_bias),
		cmocka_unit_test(test_exec_without_tls),
		cmocka_unit_test(test_second_load_from_cache),
		cmocka_unit_test(test_load_by_maps_line),
		cmocka_unit_test(test_shared_library_global),
		cmocka_unit_test(test_thread_locals_need_thread_pointers),
		cmocka_unit_test(test_stack_heap_and_tracked_objects),
	};
	int failed = cmocka_run_group_tests_name("globals_rules", pure, NULL, NULL);

	return failed + cmocka_run_group_tests_name("globals_live", live, start_workload,
						    stop_workload);
}
