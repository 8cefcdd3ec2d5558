// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Finding the allocator: symbol names (plain and prefixed) and which mapped
 * file implements malloc in symbol lookup order. cp_allocator__find() on
 * this very process (its libc) and cp_allocator__from_file() on a file that
 * is not ELF.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "lib/fake_proc.h"
#include "objects/allocator.h"

static void test_names(void **state)
{
	static const struct {
		const char *sym;
		bool match;
		enum cp_alloc_func func;
		int rank;
	} cases[] = {
		{ "malloc", true, CP_FN_MALLOC, 0 },
		{ "free", true, CP_FN_FREE, 0 },
		{ "je_malloc", true, CP_FN_MALLOC, 1 },
		{ "tc_posix_memalign", true, CP_FN_POSIX_MEMALIGN, 2 },
		{ "mi_reallocarray", true, CP_FN_REALLOCARRAY, 3 },
		{ "aligned_alloc", true, CP_FN_ALIGNED_ALLOC, 0 },
		{ "_Znwm", true, CP_FN_NEW, 0 },
		{ "_ZnamSt11align_val_tRKSt9nothrow_t", true, CP_FN_NEW_ARRAY_ALIGNED_NOTHROW, 0 },
		{ "_ZdlPvm", true, CP_FN_DELETE_SIZED, 0 },
		{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", true, CP_FN_DELETE_ARRAY_ALIGNED_NOTHROW, 0 },
		{ "je__Znwm", false, 0, 0 },		/* mangled names have no prefixed variant */
		{ "_ZnwmPv", false, 0, 0 },		/* placement new allocates nothing */
		{ "__libc_malloc", false, 0, 0 },
		{ "malloc_usable_size", false, 0, 0 },
		{ "xmalloc", false, 0, 0 },
		{ "je_", false, 0, 0 },
		/* the four-byte prefilter: names shorter than it, or differing only past it */
		{ "", false, 0, 0 },
		{ "m", false, 0, 0 },
		{ "mal", false, 0, 0 },
		{ "_Z", false, 0, 0 },
		{ "mallocx", false, 0, 0 },
		{ "frees", false, 0, 0 },
		{ "_ZnwmSt11align_val_", false, 0, 0 },
		{ "_ZN4llvm5Value4dumpEv", false, 0, 0 },
		{ "tc_free", true, CP_FN_FREE, 2 },
		{ "mi__ZdlPv", false, 0, 0 },
		{ "je_je_malloc", false, 0, 0 },
		{ "jx_malloc", false, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum cp_alloc_func f = CP_FN_NR;
		int rank = -1;
		bool m = cp_alloc_func_match(cases[i].sym, &f, &rank);

		if (m != cases[i].match)
			fail_msg("%s: match %d", cases[i].sym, m);
		if (m) {
			assert_int_equal(f, cases[i].func);
			assert_int_equal(rank, cases[i].rank);
			assert_string_equal(cp_alloc_func_name(f),
					    cases[i].sym + strlen(cases[i].sym) -
					    strlen(cp_alloc_func_name(f)));
		}
	}
	assert_null(cp_alloc_func_name(CP_FN_MMAP));
}

static void test_pick(void **state)
{
	const struct cp_alloc_candidate dyn[] = {
		{ "/usr/bin/app", true, false },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", false, true },
	};
	const struct cp_alloc_candidate je[] = {
		{ "/usr/bin/app", true, false },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", false, true },
		{ "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", false, true },
	};
	const struct cp_alloc_candidate stat[] = {
		{ "/usr/bin/app", true, true },
		{ "/usr/lib/libtcmalloc.so.4", false, true },
	};
	const struct cp_alloc_candidate none[] = {
		{ "/usr/bin/app", true, false },
		{ "/usr/lib/libfoo.so", false, false },
	};

	(void)state;
	assert_int_equal(cp_allocator_pick(dyn, 2), 1);
	assert_int_equal(cp_allocator_pick(je, 3), 2);		/* preloaded or linked jemalloc */
	assert_int_equal(cp_allocator_pick(stat, 2), 0);	/* static / own malloc */
	assert_int_equal(cp_allocator_pick(none, 2), -1);
	assert_int_equal(cp_allocator_kind_of("/x/libtcmalloc_minimal.so.4"), CP_ALLOCATOR_TCMALLOC);
	assert_int_equal(cp_allocator_kind_of("/x/libmimalloc.so.2"), CP_ALLOCATOR_MIMALLOC);
	assert_int_equal(cp_allocator_kind_of("/x/libc.so.6"), CP_ALLOCATOR_LIBC);
	assert_string_equal(cp_allocator_kind_name(CP_ALLOCATOR_EXEC), "executable");
}

/* Which functions take a pointer and return nothing: no return probe. */
static void test_frees(void **state)
{
	(void)state;
	assert_true(cp_alloc_func_frees(CP_FN_FREE));
	assert_true(cp_alloc_func_frees(CP_FN_DELETE));
	assert_true(cp_alloc_func_frees(CP_FN_DELETE_ARRAY_ALIGNED_NOTHROW));
	assert_false(cp_alloc_func_frees(CP_FN_MALLOC));
	assert_false(cp_alloc_func_frees(CP_FN_NEW_ARRAY_ALIGNED_NOTHROW));
	assert_false(cp_alloc_func_frees(CP_FN_REALLOC));
	assert_false(cp_alloc_func_frees(CP_FN_MUNMAP));
	assert_true(cp_alloc_func_is_cxx(CP_FN_NEW) && cp_alloc_func_is_cxx(CP_FN_DELETE));
	assert_false(cp_alloc_func_is_cxx(CP_FN_PVALLOC) || cp_alloc_func_is_cxx(CP_FN_MMAP));
}

/*
 * tcmalloc's file: its own operator new and delete are probed (aliases of
 * one another share a file offset); libc's process never gets libstdc++'s.
 */
static void test_cxx_only_in_replacements(void **state)
{
	const char *tc = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4";
	struct cp_allocator a;

	(void)state;
	assert_int_equal(cp_allocator__find(NULL, getpid(), false, NULL, &a), 0);
	for (int f = CP_FN_NEW; f < CP_FN_NR_PROBED; f++)
		assert_false(a.fns[f].found);
	if (access(tc, R_OK))
		skip();		/* packaging/deps.sh installs it */
	assert_int_equal(cp_allocator__from_file(tc, &a), 0);
	assert_int_equal(a.kind, CP_ALLOCATOR_TCMALLOC);
	for (int f = CP_FN_NEW; f < CP_FN_NR_PROBED; f++)
		if (!a.fns[f].found)
			fail_msg("%s not found in %s", cp_alloc_func_name(f), tc);
	/* tcmalloc makes delete an alias of free, and new[] of new */
	assert_int_equal(a.fns[CP_FN_DELETE].file_off, a.fns[CP_FN_FREE].file_off);
	assert_int_equal(a.fns[CP_FN_NEW_ARRAY].file_off, a.fns[CP_FN_NEW].file_off);
	assert_true(a.fns[CP_FN_NEW].file_off != a.fns[CP_FN_MALLOC].file_off);
}

/* This process: libc implements malloc, each function has a distinct file offset. */
static void test_find_self(void **state)
{
	struct cp_allocator a;

	(void)state;
	assert_int_equal(cp_allocator__find(NULL, getpid(), false, NULL, &a), 0);
	assert_int_equal(a.kind, CP_ALLOCATOR_LIBC);
	assert_non_null(strstr(a.path, "libc.so"));
	assert_true(a.fns[CP_FN_MALLOC].found && a.fns[CP_FN_FREE].found);
	assert_true(a.fns[CP_FN_MALLOC].file_off != a.fns[CP_FN_FREE].file_off);
	assert_true(a.fns[CP_FN_MALLOC].size > 0);
	assert_int_equal(cp_allocator__find(NULL, 0x7ffffff0, false, NULL, &a) < 0, 1);
}

/* Writes @text to @root/@pid/maps, the directory made. */
/*
 * -a: a libc whose maps line names the system-wide probes' file is taken
 * without opening it (every process of the host maps it). The files named
 * here exist nowhere: a find that opened them would find no allocator.
 */
static void test_find_probed(void **state)
{
	static const char maps[] =
		"55d000000000-55d000001000 r-xp 00000000 08:01 1111 /nonexistent/bin/prog\n"
		"7f0000000000-7f0000100000 r-xp 00028000 08:01 4242 /nonexistent/libc.so.6\n"
		"7f0000200000-7f0000201000 r-xp 00001000 08:01 3333 "
		"/nonexistent/ld-linux-x86-64.so.2\n";
	struct cp_alloc_probed probed = { .dev = makedev(8, 1), .ino = 4242 };
	char root[] = "/tmp/cp-alloc-probed.XXXXXX", cmd[64];
	struct cp_allocator a;

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_maps(root, 77, maps);
	assert_int_equal(cp_allocator__find(root, 77, false, &probed, &a), 0);
	assert_int_equal(a.kind, CP_ALLOCATOR_LIBC);
	assert_string_equal(a.path, "/nonexistent/libc.so.6");
	assert_int_equal(a.inode, 4242);
	assert_int_equal(makedev(a.dev_major, a.dev_minor), probed.dev);
	for (int f = 0; f < CP_FN_NR_PROBED; f++)
		assert_false(a.fns[f].found);
	/* another inode, or the same on another device, is looked for: and is nowhere */
	probed.ino = 4243;
	assert_int_equal(cp_allocator__find(root, 77, false, &probed, &a), -ENOENT);
	probed = (struct cp_alloc_probed){ .dev = makedev(8, 2), .ino = 4242 };
	assert_int_equal(cp_allocator__find(root, 77, false, &probed, &a), -ENOENT);
	assert_int_equal(cp_allocator__find(root, 77, false, NULL, &a), -ENOENT);
	assert_false(cp_alloc_probed_is(NULL, 8, 1, 4242));
	assert_false(cp_alloc_probed_is(&probed, 8, 2, 0));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* Which allocator a process's maps show, without opening a file. */
static void test_of_maps(void **state)
{
	static const struct {
		const char *maps;
		enum cp_allocator_kind kind;
		bool glibc;
	} cases[] = {
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/redis-server\n"
		  "7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n",
		  CP_ALLOCATOR_LIBC, true },
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/redis-server\n"
		  "7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
		  "7f1000000000-7f1000100000 r-xp 00010000 fe:00 3 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n",
		  CP_ALLOCATOR_JEMALLOC, false },
		{ "7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/libtcmalloc_minimal.so.4\n"
		  "7f1000000000-7f1000100000 r-xp 00010000 fe:00 3 /lib/libc.so.6\n",
		  CP_ALLOCATOR_TCMALLOC, false },
		{ "7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/libmimalloc.so.2.0\n",
		  CP_ALLOCATOR_MIMALLOC, false },
		/* musl: a libc, not glibc's chunks */
		{ "7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /lib/ld-musl-x86_64.so.1\n"
		  "7f1000000000-7f1000100000 r-xp 00010000 fe:00 3 /lib/libc.so\n",
		  CP_ALLOCATOR_LIBC, false },
		/* a static executable: its allocator is not known from the maps */
		{ "400000-500000 r-xp 00001000 fe:00 1 /usr/local/bin/static-server\n",
		  CP_ALLOCATOR_EXEC, false },
		/* only read-only or data mappings of jemalloc: not its code, not counted */
		{ "7f0000000000-7f0000100000 r--p 00000000 fe:00 3 /usr/lib/libjemalloc.so.2\n"
		  "7f1000000000-7f1000100000 r-xp 00026000 fe:00 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n",
		  CP_ALLOCATOR_LIBC, true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_maps *m;
		bool glibc = !cases[i].glibc;

		assert_int_equal(cp_maps__parse(cases[i].maps, strlen(cases[i].maps), &m), 0);
		if (cp_allocator_of_maps(m, &glibc) != cases[i].kind || glibc != cases[i].glibc)
			fail_msg("case %zu: %s, glibc %d", i,
				 cp_allocator_kind_name(cp_allocator_of_maps(m, &glibc)), glibc);
		cp_maps__free(m);
	}
}

/* Right after exec: only the executable and the loader; the allocator is not known yet. */
static void test_loading(void **state)
{
	static const struct {
		const char *maps;
		bool loading;
	} cases[] = {
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/cc1\n"
		  "7f0000000000-7f0000020000 r-xp 00001000 fe:00 2 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
		  "7fff00000000-7fff00002000 r-xp 00000000 00:00 0 [vdso]\n",
		  true },
		/* a library mapped: the loader is at work or done, the allocator can be told */
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/cc1\n"
		  "7f0000000000-7f0000100000 r-xp 00026000 fe:00 3 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
		  "7f1000000000-7f1000020000 r-xp 00001000 fe:00 2 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n",
		  false },
		/* a library's data only, not its code yet: still loading */
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/cc1\n"
		  "7f0000000000-7f0000026000 r--p 00000000 fe:00 3 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
		  "7f1000000000-7f1000020000 r-xp 00001000 fe:00 2 /lib/ld-musl-x86_64.so.1\n",
		  true },
		/* static: no loader, the executable is all there is */
		{ "400000-500000 r-xp 00001000 fe:00 1 /usr/local/bin/static-server\n", false },
		/* the executable's two code mappings are one file; a library's code is another */
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/cc1\n"
		  "555555560000-555555562000 r-xp 00010000 fe:00 1 /usr/bin/cc1\n"
		  "7f1000000000-7f1000020000 r-xp 00001000 fe:00 2 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n",
		  true },
		{ "555555554000-555555556000 r-xp 00001000 fe:00 1 /usr/bin/cc1\n"
		  "7f1000000000-7f1000020000 r-xp 00001000 fe:00 2 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n"
		  "7f2000000000-7f2000100000 r-xp 00010000 fe:00 4 /usr/lib/x86_64-linux-gnu/libtcmalloc.so.4\n",
		  false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_maps *m;

		assert_int_equal(cp_maps__parse(cases[i].maps, strlen(cases[i].maps), &m), 0);
		if (cp_allocator_loading(m) != cases[i].loading)
			fail_msg("case %zu: loading %d", i, !cases[i].loading);
		/* the loader's line, where there is one: the static executable has none */
		if (i == 3)
			assert_null(cp_allocator_loader(m));
		else
			assert_int_equal(cp_allocator_loader(m)->inode, 2);
		cp_maps__free(m);
	}
}

/*
 * A process stopped at its exec, before its loader ran (ptrace): an early
 * find answers -EAGAIN, opening nothing; a last one reads the executable
 * and finds no malloc there (-ENOENT), as before. Once it runs to its
 * libraries, both find libc.
 */
static void test_find_while_loading(void **state)
{
	struct cp_allocator a;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP);
	assert_int_equal(cp_allocator__find(NULL, pid, true, NULL, &a), -EAGAIN);
	assert_int_equal(cp_allocator__find(NULL, pid, false, NULL, &a), -ENOENT);
	/* on to its first system call after the loader: nanosleep, libc mapped by then */
	for (int i = 0; i < 400 && cp_allocator__find(NULL, pid, true, NULL, &a) == -EAGAIN; i++) {
		assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSTOPPED(status));
	}
	assert_int_equal(cp_allocator__find(NULL, pid, true, NULL, &a), 0);
	assert_non_null(strstr(a.path, "libc.so"));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void test_not_elf(void **state)
{
	struct cp_allocator a;
	char path[] = "/tmp/cp_alloc_XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_int_equal(cp_allocator__from_file(path, &a), -EINVAL);
	unlink(path);
	assert_int_equal(cp_allocator__from_file("/nonexistent/libc.so.6", &a), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_frees),
		cmocka_unit_test(test_cxx_only_in_replacements),
		cmocka_unit_test(test_find_self),
		cmocka_unit_test(test_find_probed),
		cmocka_unit_test(test_of_maps),
		cmocka_unit_test(test_loading),
		cmocka_unit_test(test_find_while_loading),
		cmocka_unit_test(test_not_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
