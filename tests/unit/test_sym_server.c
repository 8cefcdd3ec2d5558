// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The describe server (symbols/sym_server.h) on real files the project
 * builds: it names every function of a library and of a program as
 * cp_sym_describe() does in-process over the same copy (the ground truth),
 * says -ENOENT where no module is and -ENOEXEC for a file that is no ELF,
 * cuts strings to the caller's buffer, drops a late answer, refuses the
 * file whose request a crash or an overrun ended and serves the next file
 * from a new server, spends the parse workers' CPU budget (its files wait
 * once it is spent), and runs sandboxed (no_new_privs, seccomp, no
 * capability, a user and group no one holds, which a tenant running as
 * nobody cannot signal). Needs root (the sandbox changes users).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_server.h"
#include "symbols/unwind.h"
#include "symbols/parse_worker.h"
#include "util/clock.h"
#include "util/self_usage.h"
#include "lib/require_root.h"
#include "lib/tenant_signal.h"

/* Debian 12's libc: its DWARF is in libc6-dbg's debug file, found by build-id. */
#define CP_TEST_LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* A sealed copy of a file, its content key, and its separate debug file's copy (-1: none). */
struct copy {
	int mfd;
	struct cp_copy_key key;
	int debug;
};

static struct copy copy_path(const char *path)
{
	enum cp_tf_refusal why;
	struct copy c = {.debug = -1};
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("no %s: build with `make tests`", path);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(cp_tf_key(fd, &c.key), 0);
	c.mfd = cp_tf_copy(fd, (__u64)st.st_size, &why);
	assert_true(c.mfd >= 0);
	close(fd);
	return c;
}

static struct copy copy_built(const char *rel)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", build, rel);
	return copy_path(path);
}

static void copy_close(struct copy *c)
{
	close(c->mfd);
	if (c->debug >= 0)
		close(c->debug);
}

static void str_equal(const char *got, const char *want)
{
	if (!want || !got)
		assert_ptr_equal(got, want);
	else
		assert_string_equal(got, want);
}

/* What the server says of @addr equals what @mod says in-process; whether a line was known. */
static bool same_as_in_process(const struct copy *c, Dwfl_Module *mod, __u64 addr)
{
	static char strings[CP_SYM_SERVER_STRING_BYTES];
	struct cp_symbol_info got, want;

	cp_sym_describe(mod, addr, &want);
	assert_int_equal(cp_sym_server_describe(c->mfd, c->debug, &c->key, addr, &got, strings,
						sizeof(strings)),
			 0);
	assert_int_equal(got.ip, addr);
	assert_null(got.module); /* the caller names it */
	str_equal(got.function, want.function);
	str_equal(got.file, want.file);
	str_equal(got.nearest, want.nearest);
	assert_int_equal(got.line, want.line);
	assert_int_equal(got.column, want.column);
	assert_int_equal(got.function_offset, want.function_offset);
	assert_int_equal(got.nearest_offset, want.nearest_offset);
	assert_int_equal(got.sym_start, want.sym_start);
	assert_int_equal(got.sym_size, want.sym_size);
	assert_int_equal(got.flags, want.flags);
	assert_int_equal(got.nr_inlined, want.nr_inlined);
	for (__u32 i = 0; i < want.nr_inlined; i++) {
		str_equal(got.inlined[i].function, want.inlined[i].function);
		str_equal(got.inlined[i].file, want.inlined[i].file);
		assert_int_equal(got.inlined[i].line, want.inlined[i].line);
		assert_int_equal(got.inlined[i].column, want.inlined[i].column);
	}
	return want.line != 0;
}

/*
 * Every @stride-th function symbol of @c's file, at its entry and middle,
 * described by the server as in-process (where the file's separate debug
 * file is found by its build-id: the server gets it as @c->debug); returns
 * how many had a source line.
 */
static unsigned int compare_copy(const struct copy *c, int stride)
{
	unsigned int lines = 0;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int nsym;

	assert_int_equal(cp_sym_dwfl_file("file", dup(c->mfd), &dwfl, &mod), 0);
	nsym = dwfl_module_getsymtab(mod);
	assert_true(nsym > 1);
	for (int i = 1; i < nsym; i += stride) {
		GElf_Sym sym;
		GElf_Addr addr;

		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		lines += same_as_in_process(c, mod, addr);
		lines += same_as_in_process(c, mod, addr + sym.st_size / 2);
	}
	cp_sym_release(dwfl);
	dwfl_end(dwfl);
	return lines;
}

static unsigned int compare_file(const char *rel)
{
	struct copy c = copy_built(rel);
	unsigned int lines = compare_copy(&c, 1);

	copy_close(&c);
	return lines;
}

/* The entry of function @name in @c's file. */
static __u64 function_addr(const struct copy *c, const char *name)
{
	Dwfl_Module *mod;
	Dwfl *dwfl;
	__u64 found = 0;
	int nsym;

	assert_int_equal(cp_sym_dwfl_file("file", dup(c->mfd), &dwfl, &mod), 0);
	nsym = dwfl_module_getsymtab(mod);
	for (int i = 1; i < nsym && !found; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *n = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (n && !strcmp(n, name))
			found = addr;
	}
	dwfl_end(dwfl);
	assert_true(found != 0);
	return found;
}

static int describe(const struct copy *c, __u64 addr, struct cp_symbol_info *out)
{
	static char strings[CP_SYM_SERVER_STRING_BYTES];

	return cp_sym_server_describe(c->mfd, c->debug, &c->key, addr, out, strings,
				      sizeof(strings));
}

static void test_same_as_in_process(void **state)
{
	struct cp_sym_server_stats s0, s1;
	__u64 h0;

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stop();
	cp_sym_server_stats(&s0);
	h0 = cp_self_helpers_cpu_ns();
	assert_true(compare_file("tests/workloads/libcp_symlib.so") > 0);
	assert_true(compare_file("tests/workloads/callers") > 0);
	/* no DWARF: named from the symbol tables, the build-id directory not reached */
	assert_int_equal(compare_file("tests/workloads/libcp_symlib-nodebug.so"), 0);
	assert_int_equal(compare_file("tests/workloads/libcp_symlib-stripped.so"), 0);
	cp_sym_server_stats(&s1);
	/* one server served them all, none refused */
	assert_int_equal(s1.started, s0.started + 1);
	assert_int_equal(s1.refused, s0.refused);
	assert_true(s1.requests > s0.requests + 8);
	/* its CPU time is the profiler's own cost, counted once it is reaped */
	cp_sym_server_stop();
	assert_int_equal(cp_sym_server_pid(CP_SYM_DESCRIBER), 0);
	assert_true(cp_self_helpers_cpu_ns() > h0);
}

/*
 * A file whose DWARF is in a separate debug file (libc, its debug file
 * from libc6-dbg in the build-id directory): where no path opens, the
 * server describes it from the debug file its client sends, as libdw does
 * in-process with the build-id directory; without it, from the file's own
 * symbols, with no line.
 */
static void test_separate_debug_file(void **state)
{
	struct copy libc = copy_path(CP_TEST_LIBC), bare = copy_path(CP_TEST_LIBC);
	struct cp_symbol_info got, want;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	char *name = NULL;
	__u64 addr;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(cp_sym_dwfl_file("file", dup(libc.mfd), &dwfl, &mod), 0);
	libc.debug = cp_sym_dwfl_debug_of(mod, &name);
	if (libc.debug < 0)
		fail_msg("no debug file for %s: install libc6-dbg (packaging/deps.sh)",
			 CP_TEST_LIBC);
	assert_non_null(strstr(name, CP_SYM_BUILD_ID_DIR "/"));
	free(name);
	/* lines for most of them, the same as in-process */
	assert_true(compare_copy(&libc, 64) > 20);
	/* the same file, no debug file sent (and no key: not the copy the server holds) */
	memset(&bare.key, 0, sizeof(bare.key));
	addr = function_addr(&libc, "malloc");
	cp_sym_describe(mod, addr + 16, &want);
	assert_true(want.line > 0);
	assert_int_equal(describe(&bare, addr + 16, &got), 0);
	assert_string_equal(got.function, "malloc");
	assert_int_equal(got.line, 0);
	assert_null(got.file);
	cp_sym_release(dwfl);
	dwfl_end(dwfl);
	copy_close(&libc);
	copy_close(&bare);
}

static void test_no_module_and_no_elf(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	struct copy text = {.mfd = memfd_create("not-elf", MFD_CLOEXEC), .debug = -1};
	struct cp_symbol_info info;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(describe(&lib, 1ull << 40, &info), -ENOENT);
	assert_null(info.function);
	pid = cp_sym_server_pid(CP_SYM_DESCRIBER);
	assert_true(pid > 0);
	/* no key: parsed for the request alone */
	assert_int_equal(write(text.mfd, "not an ELF file\n", 16), 16);
	assert_int_equal(describe(&text, 0x1000, &info), -ENOEXEC);
	/* an error, not a crash: the same server answers the next file */
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported"), &info), 0);
	assert_string_equal(info.function, "cp_symlib_exported");
	assert_int_equal(cp_sym_server_pid(CP_SYM_DESCRIBER), pid);
	close(lib.mfd);
	close(text.mfd);
}

/* A buffer too small for the strings cuts them, and nothing is written past it. */
static void test_small_buffer_cuts_strings(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	char buf[64];
	struct cp_symbol_info info;

	(void)state;
	REQUIRE_ROOT();
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(cp_sym_server_describe(lib.mfd, -1, &lib.key,
						function_addr(&lib, "cp_symlib_exported"), &info,
						buf, 8),
			 0);
	assert_string_equal(info.function, "cp_syml");
	assert_null(info.file); /* it came after the function: past the buffer */
	for (size_t i = 8; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'x');
	close(lib.mfd);
}

/* An answer the caller stopped waiting for is read and dropped; asked again, it is served. */
/* The server, stopped (SIGSTOP) after it described @addr of @c: its pid. */
static pid_t stopped_after(const struct copy *c, __u64 addr)
{
	struct cp_symbol_info info;
	pid_t pid;

	assert_int_equal(describe(c, addr, &info), 0);
	pid = cp_sym_server_pid(CP_SYM_DESCRIBER);
	assert_true(pid > 0);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	return pid;
}

static void test_late_answer_dropped(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	__u64 addr = function_addr(&lib, "cp_symlib_exported");
	struct cp_sym_server_stats s0, s1;
	struct cp_symbol_info info;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stats(&s0);
	pid = stopped_after(&lib, addr);
	cp_sym_server_pace(0, 0);
	assert_int_equal(describe(&lib, addr, &info), -EAGAIN);
	assert_int_equal(kill(pid, SIGCONT), 0);
	cp_sym_server_pace(UINT_MAX, 0);
	assert_int_equal(describe(&lib, addr, &info), 0);
	assert_string_equal(info.function, "cp_symlib_exported");
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.late, s0.late + 1);
	assert_int_equal(s1.refused, s0.refused);
	assert_int_equal(cp_sym_server_pid(CP_SYM_DESCRIBER), pid);
	close(lib.mfd);
}

/*
 * A lookup waits for its own answer, never for another request's: while
 * the server works on one (stopped here), the next lookup is answered
 * "later" at once, not after its 200 ms wait; told to wait to the end, it
 * gets its answer once the server goes on.
 */
static void test_no_wait_behind_another(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	__u64 addr = function_addr(&lib, "cp_symlib_exported"), t0;
	struct cp_symbol_info info;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	pid = stopped_after(&lib, addr);
	cp_sym_server_pace(200, 0);
	t0 = cp_now_ns();
	assert_int_equal(describe(&lib, addr + 1, &info), -EAGAIN);
	assert_true(cp_now_ns() - t0 >= 200000000ull); /* its own: waited */
	t0 = cp_now_ns();
	assert_int_equal(describe(&lib, addr + 2, &info), -EAGAIN);
	assert_true(cp_now_ns() - t0 < 150000000ull); /* another's: not waited for */
	assert_int_equal(kill(pid, SIGCONT), 0);
	cp_sym_server_pace(UINT_MAX, 0);
	assert_int_equal(describe(&lib, addr, &info), 0);
	assert_string_equal(info.function, "cp_symlib_exported");
	close(lib.mfd);
}

/*
 * The server, stopped (SIGSTOP) after it described @c's main; @s0 its
 * figures then. Returns its pid.
 */
static pid_t stopped_server(const struct copy *c, struct cp_sym_server_stats *s0)
{
	pid_t pid = stopped_after(c, function_addr(c, "main"));

	cp_sym_server_stats(s0);
	return pid;
}

/*
 * After server @pid ended on @victim's request at @addr (figures @s0
 * before): the file stays refused, counted once, and @other is served by
 * a new server, a restart.
 */
static void refused_then_restarted(const struct copy *victim, __u64 addr, const struct copy *other,
				   pid_t pid, const struct cp_sym_server_stats *s0)
{
	struct cp_sym_server_stats s1;
	struct cp_symbol_info info;

	enum cp_pw_verdict v;

	assert_int_equal(kill(pid, 0), -1); /* reaped */
	assert_int_equal(describe(victim, addr, &info), -EIO);
	assert_int_equal(describe(victim, addr + 1, &info), -EIO);
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.refused, s0->refused + 1);
	/* the parse worker's own verdict: no libdw of the profiler's takes the file either */
	assert_true(cp_parse_worker_known(&victim->key, &v));
	assert_int_not_equal(v, CP_PW_PASSED);
	assert_int_equal(cp_sym_server_pid(CP_SYM_DESCRIBER), 0);
	assert_int_equal(describe(other, function_addr(other, "main"), &info), 0);
	assert_string_equal(info.function, "main");
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.restarts, s0->restarts + 1);
	assert_true(cp_sym_server_pid(CP_SYM_DESCRIBER) > 0 && cp_sym_server_pid(CP_SYM_DESCRIBER) != pid);
}

/*
 * A server that crashes on a request (SIGSEGV, sent while it was stopped
 * with the request waiting) refuses that request's file for the run.
 */
static void test_crash_refuses_the_file(void **state)
{
	struct copy victim = copy_built("tests/workloads/chase"),
		    other = copy_built("tests/workloads/churn");
	struct cp_sym_server_stats s0;
	struct cp_symbol_info info;
	__u64 addr;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	pid = stopped_server(&victim, &s0);
	addr = function_addr(&victim, "main");
	cp_sym_server_pace(0, 0);
	assert_int_equal(describe(&victim, addr, &info), -EAGAIN);
	assert_int_equal(kill(pid, SIGSEGV), 0);
	assert_int_equal(kill(pid, SIGCONT), 0);
	cp_sym_server_pace(UINT_MAX, 0);
	/* the crash is learnt at the next call, which waits for the request in flight */
	assert_int_equal(describe(&victim, addr, &info), -EIO);
	refused_then_restarted(&victim, addr, &other, pid, &s0);
	close(victim.mfd);
	close(other.mfd);
}

/* A server past its deadline (stopped) is killed, and that request's file refused. */
static void test_overrun_refuses_the_file(void **state)
{
	struct copy victim = copy_built("tests/workloads/conflict"),
		    other = copy_built("tests/workloads/false_sharing");
	struct cp_sym_server_stats s0;
	struct cp_symbol_info info;
	__u64 addr = function_addr(&victim, "main");
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	pid = stopped_server(&other, &s0);
	cp_sym_server_pace(UINT_MAX, 200);
	assert_int_equal(describe(&victim, addr, &info), -EIO);
	cp_sym_server_pace(UINT_MAX, 0);
	refused_then_restarted(&victim, addr, &other, pid, &s0);
	close(victim.mfd);
	close(other.mfd);
}

/*
 * A server forked with 1 MiB left under --max-memory cannot parse the
 * profiler's own DWARF (a few MiB): the file is refused for memory, which
 * stands in that room; once the room is back, a new server serves it.
 */
static void test_memory_refusal_waits_for_room(void **state)
{
	struct copy big = copy_built("cacheperf-bpf");
	struct cp_sym_server_stats s0, s1;
	struct cp_symbol_info info;
	struct cp_self_mem now;
	__u64 addr = function_addr(&big, "main");

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stop();
	cp_sym_server_stats(&s0);
	assert_int_equal(cp_self_mem_scan(&now), 0);
	cp_self_mem_set_limit(now.bytes + (1ull << 20));
	assert_int_equal(describe(&big, addr, &info), -EIO);
	assert_int_equal(describe(&big, addr, &info), -EIO);
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.refused, s0.refused + 1);
	cp_sym_server_stop();
	cp_self_mem_set_limit(0);
	/* a crash would stand: this was memory */
	assert_int_equal(describe(&big, addr, &info), 0);
	assert_string_equal(info.function, "main");
	close(big.mfd);
}

/*
 * The server's CPU time is the parse workers' budget's, as a live run
 * paces it: with the budget spent to its last whole second, one request
 * goes through, and the CPU time the kernel counted for the server on it
 * is spent from the budget; the next lookup, of the file the server holds
 * parsed, waits (-EAGAIN, counted) without a request, as a worker's file
 * would; once the budget holds seconds again, it is answered.
 */
static void test_server_spends_the_workers_budget(void **state)
{
	struct copy big = copy_built("cacheperf-bpf"),
		    lib = copy_built("tests/workloads/libcp_symlib.so");
	__u64 addr = function_addr(&big, "main");
	struct cp_sym_server_stats s0, s1;
	struct cp_symbol_info info;

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stop();
	/* a server at work, its start behind it */
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported"), &info), 0);
	/* a live run's budget, earning a thousandth of the wall time: microseconds here */
	cp_parse_worker_pace(UINT_MAX, 1);
	/* workers spent all but its last second */
	cp_parse_worker_spent(CP_SYM_DESCRIBER, (CP_PW_LIVE_START_S - 1) * 1000000000ull);
	cp_sym_server_stats(&s0);
	assert_int_equal(describe(&big, addr, &info), 0);
	assert_string_equal(info.function, "main");
	cp_sym_server_stats(&s1);
	assert_true(s1.cpu_ns > s0.cpu_ns);
	print_message("# the server's CPU time on the request: %.2f ms\n",
		      (double)(s1.cpu_ns - s0.cpu_ns) / 1e6);
	assert_int_equal(describe(&big, addr + 1, &info), -EAGAIN);
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.waited, s0.waited + 1);
	assert_int_equal(s1.refused, s0.refused);
	/* a live run's start again: a full budget */
	cp_parse_worker_pace(UINT_MAX, 1);
	assert_int_equal(describe(&big, addr, &info), 0);
	assert_string_equal(info.function, "main");
	cp_parse_worker_pace(UINT_MAX, 0);
	close(big.mfd);
	close(lib.mfd);
}

/*
 * A stack copy at the entry of callers_nofp's inner() (no frame pointer:
 * only its CFI finds its caller), called from path_b, called from main:
 * its return address at sp, path_b's frame (saved rbp, return into main)
 * above it, rbp pointing there.
 */
static void nofp_stack(const struct copy *c, struct cp_ustack_record *r, struct cp_unwind_walk *w,
		       __u64 *ips, size_t max)
{
	const __u64 sp = 0x7ffc00000000ull;
	const __u64 words[] = {function_addr(c, "path_b") + 8, 0, 0, function_addr(c, "main") + 8};

	*r = (struct cp_ustack_record){.sp = sp, .bp = sp + 16, .len = sizeof(words)};
	memcpy(r->stack, words, sizeof(words));
	*w = (struct cp_unwind_walk){
		.r = r,
		.ips = ips,
		.max = max,
		.from = {.pc = function_addr(c, "inner"),
			 .sp = sp,
			 .bp = sp + 16,
			 .known = CP_UNWIND_REGS_KEPT},
	};
}

/*
 * A walk through a tenant's file while a describe goes on (one that took
 * longer than the lookup waited, here stopped): answered by the walking
 * server at once, its CFI frames found (inner, then path_b by inner's CFI).
 * Before, one server did both: the walk was answered "later" and its stack
 * kept only its frame-pointer walk, for good where the walk runs once (a
 * call site's). A walk the walking server cannot take now is counted.
 */
static void test_walk_not_behind_a_describe(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so"),
		    nofp = copy_built("tests/workloads/callers_nofp");
	const struct cp_sym_remote f = {.fd = nofp.mfd, .debug_fd = -1, .key = nofp.key};
	static struct cp_ustack_record r;
	struct cp_sym_server_stats s0, s1;
	struct cp_unwind_walk w;
	__u64 ips[8], t0;
	pid_t describer;

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stop();
	describer = stopped_after(&lib, function_addr(&lib, "cp_symlib_exported"));
	cp_sym_server_pace(200, 0);
	/* a describe that goes on past its wait: the describing server stays at work */
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported") + 1,
				  &(struct cp_symbol_info){0}),
			 -EAGAIN);
	cp_sym_server_stats(&s0);
	nofp_stack(&nofp, &r, &w, ips, 8);
	t0 = cp_now_ns();
	assert_int_equal(cp_sym_server_unwind(&f, &w), 0);
	print_message("# the walk: %zu frames in %.1f ms\n", w.n, (cp_now_ns() - t0) / 1e6);
	assert_true(w.n >= 2);
	assert_int_equal(ips[0], function_addr(&nofp, "inner"));
	assert_int_equal(ips[1], function_addr(&nofp, "path_b") + 8);
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.unwinds, s0.unwinds + 1);
	assert_int_equal(s1.unwinds_later, s0.unwinds_later);
	assert_true(cp_sym_server_pid(CP_SYM_WALKER) > 0);
	assert_int_not_equal(cp_sym_server_pid(CP_SYM_WALKER), describer);
	assert_int_equal(cp_sym_server_pid(CP_SYM_DESCRIBER), describer);
	/* the walking server stopped too: the walk is answered later, and counted */
	assert_int_equal(kill(cp_sym_server_pid(CP_SYM_WALKER), SIGSTOP), 0);
	cp_sym_server_pace(50, 0);
	nofp_stack(&nofp, &r, &w, ips, 8);
	assert_int_equal(cp_sym_server_unwind(&f, &w), -EAGAIN);
	assert_int_equal(w.n, 0);
	cp_sym_server_stats(&s1);
	assert_int_equal(s1.unwinds_later, s0.unwinds_later + 1);
	kill(cp_sym_server_pid(CP_SYM_WALKER), SIGCONT);
	assert_int_equal(kill(describer, SIGCONT), 0);
	cp_sym_server_pace(UINT_MAX, 0);
	cp_sym_server_stop();
	copy_close(&lib);
	copy_close(&nofp);
}

/* The value of @key in /proc/@pid/status, NULL when absent. */
static const char *status_of(pid_t pid, const char *key, char *buf, size_t sz)
{
	char path[64], line[256];
	const char *found = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':' &&
		    sscanf(line + strlen(key) + 1, "%255s", buf) == 1 && strlen(buf) < sz)
			found = buf;
	fclose(f);
	return found;
}

/*
 * The server is counted by the pages it alone holds, not by its resident
 * set, which holds the profiler's pages it shares copy on write: counted,
 * they made the reading twice the profiler's.
 */
static void test_memory_counts_own_pages(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	struct cp_symbol_info info;
	struct cp_self_mem before, with;
	char buf[256];
	__u64 whole;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stop();
	assert_int_equal(cp_self_mem_scan(&before), 0);
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported"), &info), 0);
	pid = cp_sym_server_pid(CP_SYM_DESCRIBER);
	assert_int_equal(cp_self_mem_scan(&with), 0);
	whole = strtoull(status_of(pid, "RssAnon", buf, sizeof(buf)), NULL, 10) +
		strtoull(status_of(pid, "RssFile", buf, sizeof(buf)), NULL, 10);
	whole <<= 10;
	print_message("# before %llu, with the server %llu, its resident set %llu\n",
		      (unsigned long long)before.bytes, (unsigned long long)with.bytes,
		      (unsigned long long)whole);
	if (with.counter != CP_SELF_MEM_PROC)
		skip(); /* a cgroup's counter: the kernel counts shared pages once */
	assert_true(with.bytes < before.bytes + whole / 2);
	close(lib.mfd);
}

static void test_server_is_sandboxed(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	struct cp_symbol_info info;
	char buf[256];
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported"), &info), 0);
	pid = cp_sym_server_pid(CP_SYM_DESCRIBER);
	assert_string_equal(status_of(pid, "NoNewPrivs", buf, sizeof(buf)), "1");
	assert_string_equal(status_of(pid, "Seccomp", buf, sizeof(buf)), "2");
	assert_string_equal(status_of(pid, "CapEff", buf, sizeof(buf)), "0000000000000000");
	assert_string_equal(status_of(pid, "CapPrm", buf, sizeof(buf)), "0000000000000000");
	close(lib.mfd);
}

/*
 * Where the profiler may still change users (a report's replay, this test),
 * the server runs as a user and group no one holds: a tenant running as
 * nobody can neither stop it (before its "ready" word: lookups fell back)
 * nor kill it. Its copies, passed by descriptor, are read all the same.
 */
static void test_no_tenant_can_signal_the_server(void **state)
{
	struct copy lib = copy_built("tests/workloads/libcp_symlib.so");
	struct cp_symbol_info info;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	cp_sym_server_stop();
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported"), &info), 0);
	assert_non_null(info.function);
	assert_string_equal(info.function, "cp_symlib_exported");
	pid = cp_sym_server_pid(CP_SYM_DESCRIBER);
	assert_true(pid > 0);
	assert_ids_no_ones(pid);
	assert_nobody_cannot_signal(pid);
	/* the same server answers the next request */
	assert_int_equal(describe(&lib, function_addr(&lib, "cp_symlib_exported"), &info), 0);
	assert_int_equal(cp_sym_server_pid(CP_SYM_DESCRIBER), pid);
	close(lib.mfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_in_process),
		cmocka_unit_test(test_separate_debug_file),
		cmocka_unit_test(test_no_module_and_no_elf),
		cmocka_unit_test(test_small_buffer_cuts_strings),
		cmocka_unit_test(test_late_answer_dropped),
		cmocka_unit_test(test_no_wait_behind_another),
		cmocka_unit_test(test_crash_refuses_the_file),
		cmocka_unit_test(test_overrun_refuses_the_file),
		cmocka_unit_test(test_memory_refusal_waits_for_room),
		cmocka_unit_test(test_server_spends_the_workers_budget),
		cmocka_unit_test(test_memory_counts_own_pages),
		cmocka_unit_test(test_server_is_sandboxed),
		cmocka_unit_test(test_no_tenant_can_signal_the_server),
		cmocka_unit_test(test_walk_not_behind_a_describe),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	cp_sym_server_stop();
	return failed;
}
