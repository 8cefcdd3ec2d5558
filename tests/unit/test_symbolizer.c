// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer on live processes: tests/workloads/symbols (a PIE with debug
 * info) prints the runtime addresses of asm labels in its code and in the
 * shared library it dlopen()s on request (built with debug info, with only
 * .symtab, and stripped). The expected answers never come from the
 * symbolizer: addresses from the dynamic linker, link-time addresses from
 * the ELF .symtab read here with libelf, lines from "LINE:" markers in the
 * workload sources. Runs without root: the workloads are our children;
 * a tenant's file (owned by nobody) needs root to be made, else skipped.
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
#include <fcntl.h>
#include <gelf.h>
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "lib/workload_pipe.h"
#include "util/clock.h"
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "objects/proc_maps.h"
#include "symbols/parse_worker.h"
#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_server.h"
#include "symbols/symbolizer.h"
#include "symbols/unwind.h"

#define MAX_NAMES 16

struct named_addr {
	char name[64];
	__u64 addr;
};

struct workload {
	pid_t pid;
	FILE *out; /* its stdout */
	int in;	   /* its stdin */
	struct named_addr labels[MAX_NAMES];
	int nr;
	bool reaped;
};

/* ---- ground truth ---- */

/* Absolute, as /proc/PID/maps names it. */
static const char *wl_path(const char *name)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	static char paths[4][PATH_MAX];
	static int next;
	char *p = paths[next++ % 4], rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/tests/workloads/%s", build, name);
	if (!realpath(rel, p))
		fail_msg("no %s: build with `make tests`", rel);
	return p;
}

/* The line of "LINE:@marker" in the workload source @src. */
static __u32 marker_line(const char *src, const char *marker)
{
	const char *root = getenv("CP_ROOT") ? getenv("CP_ROOT") : ".";
	char path[4096], line[512], needle[96];
	__u32 nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/workloads/%s", root, src);
	snprintf(needle, sizeof(needle), "LINE:%s */", marker);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		nr++;
		if (strstr(line, needle)) {
			fclose(f);
			return nr;
		}
	}
	fclose(f);
	fail_msg("no marker %s in %s", needle, path);
	return 0;
}

/* The link-time value of @name in @path's .symtab, read with libelf. */
static __u64 elf_symbol(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	__u64 value = 0;
	bool found = false;
	int fd = open(path, O_RDONLY);
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	while (!found && (scn = elf_nextscn(e, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				value = sym.st_value;
				found = true;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	if (!found)
		fail_msg("no symbol %s in %s", name, path);
	return value;
}

/* ---- the workload ---- */

static __u64 label(const struct workload *w, const char *name)
{
	for (int i = 0; i < w->nr; i++)
		if (!strcmp(w->labels[i].name, name))
			return w->labels[i].addr;
	fail_msg("workload printed no %s", name);
	return 0;
}

/* Reads "label|symbol NAME ADDR" lines up to one starting with @end. */
static int read_until(struct workload *w, const char *end, char *last, size_t size)
{
	char line[256], kind[16];

	while (fgets(line, sizeof(line), w->out)) {
		struct named_addr *l = &w->labels[w->nr];
		unsigned long long addr;

		if (!strncmp(line, end, strlen(end))) {
			snprintf(last, size, "%s", line);
			return 0;
		}
		if (sscanf(line, "%15s %63s %llx", kind, l->name, &addr) == 3 &&
		    w->nr < MAX_NAMES) {
			l->addr = addr;
			w->nr++;
		}
	}
	return -1;
}

static struct workload *start(void)
{
	const char *path = wl_path("symbols");
	struct workload *w = calloc(1, sizeof(*w));
	char line[256];

	if (!w || cp_wl_pipe_start((char *const[]){(char *)path, NULL}, &w->pid, &w->in, &w->out))
		return NULL;
	if (w->out && !read_until(w, "ready ", line, sizeof(line)))
		return w;
	fprintf(stderr, "workload %s did not get ready\n", path);
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	return NULL;
}

static void command(struct workload *w, const char *cmd)
{
	assert_int_equal(write(w->in, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	assert_int_equal(write(w->in, "\n", 1), 1);
}

/* dlopen()s workload library @name in @w. */
static void load(struct workload *w, const char *name)
{
	char cmd[4200], last[64];

	snprintf(cmd, sizeof(cmd), "load %s", wl_path(name));
	command(w, cmd);
	assert_int_equal(read_until(w, "ok", last, sizeof(last)), 0);
}

/* Lets @w exit and reaps it: its pid then names nothing. */
static void finish(struct workload *w)
{
	int status;

	command(w, "exit");
	assert_int_equal(waitpid(w->pid, &status, 0), w->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	w->reaped = true;
}

static void stop(struct workload *w)
{
	if (!w)
		return;
	if (!w->reaped) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
	}
	close(w->in);
	fclose(w->out);
	free(w);
}

static int setup(void **state)
{
	struct workload *w = start();

	*state = w;
	return w ? 0 : -1;
}

static int teardown(void **state)
{
	stop(*state);
	return 0;
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static struct cp_symbol_info resolve(struct cp_symbolizer *s, pid_t pid, __u64 ip)
{
	struct cp_symbol_info info;

	assert_int_equal(cp_symbolizer__resolve(s, pid, ip, &info), 0);
	assert_int_equal(info.ip, ip);
	return info;
}

/* @pid as libdwfl reports a process on its own: what the symbolizer must agree with. */
static Dwfl *proc_dwfl(pid_t pid)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	assert_non_null(dwfl);
	dwfl_report_begin(dwfl);
	assert_int_equal(dwfl_linux_proc_report(dwfl, pid), 0);
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	return dwfl;
}

static void assert_format(const struct cp_symbol_info *info, const char *want)
{
	char buf[512];

	assert_int_equal(cp_symbol_info_format(info, buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
}

/* ---- tests ---- */

static void test_pie_function_and_line(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	const char *exe = wl_path("symbols");
	__u64 ip = label(w, "cp_sym_plain"), link = elf_symbol(exe, "cp_sym_plain");
	struct cp_symbol_info info;
	char want[128];

	assert_non_null(s);
	info = resolve(s, w->pid, ip);
	assert_int_not_equal(ip, link); /* a PIE, loaded at a random bias */
	assert_int_equal(info.module_offset, link);
	assert_string_equal(base(info.module), "symbols");
	assert_string_equal(info.function, "sym_plain");
	assert_int_equal(info.function_offset, link - elf_symbol(exe, "sym_plain"));
	assert_string_equal(base(info.file), "symbols.c");
	assert_int_equal(info.line, marker_line("symbols.c", "plain"));
	assert_true(info.flags & CP_SYM_DEBUG_INFO);
	assert_int_equal(info.nr_inlined, 0);
	snprintf(want, sizeof(want), "sym_plain (symbols.c:%u)", marker_line("symbols.c", "plain"));
	assert_format(&info, want);
	cp_symbolizer__free(s);
}

static void test_inline_chain(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbol_info info;
	char want[256];

	assert_non_null(s);
	info = resolve(s, w->pid, label(w, "cp_sym_inlined"));
	assert_string_equal(info.function, "sym_leaf");
	assert_string_equal(base(info.file), "symbols.c");
	assert_int_equal(info.line, marker_line("symbols.c", "leaf"));
	assert_int_equal(info.nr_inlined, 2);
	assert_string_equal(info.inlined[0].function, "sym_middle");
	assert_string_equal(base(info.inlined[0].file), "symbols.c");
	assert_int_equal(info.inlined[0].line, marker_line("symbols.c", "call_leaf"));
	assert_string_equal(info.inlined[1].function, "sym_outer");
	assert_string_equal(base(info.inlined[1].file), "symbols.c");
	assert_int_equal(info.inlined[1].line, marker_line("symbols.c", "call_middle"));
	/* the ELF symbol holding the code is the out-of-line function */
	assert_int_equal(info.function_offset, elf_symbol(wl_path("symbols"), "cp_sym_inlined") -
						       elf_symbol(wl_path("symbols"), "sym_outer"));
	/* each level at its line: the leaf's, then where each was called from */
	snprintf(want, sizeof(want),
		 "sym_leaf (symbols.c:%u) \u2190 sym_middle (symbols.c:%u) \u2190 sym_outer "
		 "(symbols.c:%u)",
		 marker_line("symbols.c", "leaf"), marker_line("symbols.c", "call_leaf"),
		 marker_line("symbols.c", "call_middle"));
	assert_format(&info, want);
	cp_symbolizer__free(s);
}

static void test_shared_library_after_refresh(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	const char *lib = wl_path("libcp_symlib.so");
	struct cp_symbol_info info;

	assert_non_null(s);
	resolve(s, w->pid, label(w, "cp_sym_plain")); /* snapshot, as at attach */
	load(w, "libcp_symlib.so");
	assert_int_equal(cp_symbolizer__refresh(s, w->pid), 0); /* as on dlopen */

	info = resolve(s, w->pid, label(w, "cp_symlib_insn"));
	assert_string_equal(info.module, lib);
	assert_int_equal(info.module_offset, elf_symbol(lib, "cp_symlib_insn"));
	assert_string_equal(info.function, "cp_symlib_exported");
	assert_string_equal(base(info.file), "cp_symlib.c");
	assert_int_equal(info.line, marker_line("lib/cp_symlib.c", "symlib_exported"));

	info = resolve(s, w->pid, label(w, "cp_symlib_hidden"));
	assert_string_equal(info.function, "symlib_static");
	assert_int_equal(info.line, marker_line("lib/cp_symlib.c", "symlib_static"));
	cp_symbolizer__free(s);
}

/* No refresh call: an address in a file mapped since the snapshot takes one. */
static void test_dlopen_found_without_refresh(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbolizer_stats st;
	struct cp_symbol_info info;

	assert_non_null(s);
	resolve(s, w->pid, label(w, "cp_sym_plain"));
	load(w, "libcp_symlib.so");
	usleep((CP_SYM_REFRESH_MIN_MS + 50) * 1000);
	info = resolve(s, w->pid, label(w, "cp_symlib_insn"));
	assert_string_equal(info.function, "cp_symlib_exported");
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.auto_refreshes, 1);
	assert_int_equal(st.snapshots, 2);
	cp_symbolizer__free(s);
}

static void test_no_debug_info_gives_names(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	const char *lib = wl_path("libcp_symlib-nodebug.so");
	__u64 ip;
	struct cp_symbol_info info;

	assert_non_null(s);
	load(w, "libcp_symlib-nodebug.so");
	ip = label(w, "cp_symlib_hidden");
	info = resolve(s, w->pid, ip);
	assert_string_equal(info.module, lib);
	assert_string_equal(info.function, "symlib_static"); /* from .symtab */
	assert_int_equal(info.function_offset,
			 elf_symbol(lib, "cp_symlib_hidden") - elf_symbol(lib, "symlib_static"));
	assert_null(info.file);
	assert_int_equal(info.line, 0);
	assert_false(info.flags & CP_SYM_DEBUG_INFO);
	assert_format(&info, "symlib_static");
	cp_symbolizer__free(s);
}

static void test_stripped_gives_offset_and_nearest(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	/* the stripped copy has no .symtab: link-time values from the original */
	const char *orig = wl_path("libcp_symlib.so");
	__u64 hidden, exported;
	struct cp_symbol_info info;
	char want[128];

	assert_non_null(s);
	load(w, "libcp_symlib-stripped.so");
	hidden = label(w, "cp_symlib_hidden");
	exported = label(w, "cp_symlib_exported");
	assert_true(exported < hidden); /* the layout the library promises */

	info = resolve(s, w->pid, hidden);
	assert_string_equal(base(info.module), "libcp_symlib-stripped.so");
	assert_int_equal(info.module_offset, elf_symbol(orig, "cp_symlib_hidden"));
	assert_null(info.function);
	assert_null(info.file);
	assert_string_equal(info.nearest, "cp_symlib_exported");
	assert_int_equal(info.nearest_offset, hidden - exported);
	snprintf(want, sizeof(want),
		 "libcp_symlib-stripped.so+0x%llx (nearest: cp_symlib_exported)",
		 (unsigned long long)elf_symbol(orig, "cp_symlib_hidden"));
	assert_format(&info, want);

	/* an exported function is still named, from .dynsym */
	info = resolve(s, w->pid, label(w, "cp_symlib_insn"));
	assert_string_equal(info.function, "cp_symlib_exported");
	assert_int_equal(info.function_offset, label(w, "cp_symlib_insn") - exported);
	assert_null(info.nearest);
	cp_symbolizer__free(s);
}

static void test_exited_process_resolves_from_snapshot(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbol_info info;

	assert_non_null(s);
	load(w, "libcp_symlib.so");
	resolve(s, w->pid, label(w, "cp_sym_plain")); /* the snapshot */
	finish(w);
	assert_int_equal(kill(w->pid, 0), -1); /* gone */

	/* neither address was looked up before: no cached result can answer */
	info = resolve(s, w->pid, label(w, "cp_sym_inlined"));
	assert_string_equal(info.function, "sym_leaf");
	assert_int_equal(info.nr_inlined, 2);
	info = resolve(s, w->pid, label(w, "cp_symlib_hidden"));
	assert_string_equal(info.function, "symlib_static");
	assert_int_equal(info.line, marker_line("lib/cp_symlib.c", "symlib_static"));

	/* refresh of a gone process keeps the snapshot; forget drops it */
	assert_int_equal(cp_symbolizer__refresh(s, w->pid), -ESRCH);
	resolve(s, w->pid, label(w, "cp_sym_plain"));
	cp_symbolizer__forget(s, w->pid);
	assert_int_equal(cp_symbolizer__resolve(s, w->pid, label(w, "cp_sym_plain"), &info),
			 -ESRCH);
	assert_null(info.module);
	cp_symbolizer__free(s);
}

/*
 * A stack copy read after its process's exit record (the copies' ring is
 * read apart from the events'): it is walked in the Dwfl opened while the
 * process lived, as the copies before the exit were. Without one, none can
 * be opened any more (its maps went with it).
 */
static void test_exited_process_keeps_its_dwfl(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0), *late = cp_symbolizer__new(0, 0);
	__u64 ip = label(w, "cp_sym_plain");
	struct cp_sym_remote f;
	Dwfl *dwfl;

	assert_non_null(s);
	assert_non_null(late);
	assert_non_null(cp_symbolizer__process_dwfl(s, w->pid)); /* a copy while it lives */
	assert_int_equal(cp_symbolizer__refresh(late, w->pid), 0); /* its maps, no Dwfl */
	finish(w);
	cp_symbolizer__exit(s, w->pid);
	cp_symbolizer__exit(late, w->pid);

	assert_true(cp_symbolizer__has_process_dwfl(s, w->pid));
	dwfl = cp_symbolizer__process_dwfl(s, w->pid);
	assert_non_null(dwfl);
	assert_non_null(dwfl_addrmodule(dwfl, ip));
	/* the workload's own file, not a tenant's: the process's Dwfl walks it */
	assert_int_equal(cp_symbolizer__remote_at(s, w->pid, ip, &f), -ENOENT);

	assert_false(cp_symbolizer__has_process_dwfl(late, w->pid));
	assert_null(cp_symbolizer__process_dwfl(late, w->pid));
	cp_symbolizer__free(s);
	cp_symbolizer__free(late);
}

/* Maps text of the process holding a pid, as a recording gives it. */
struct reuse_maps {
	char text[PATH_MAX + 128];
	__u64 gen;
};

static int reuse_maps_text(void *ctx, pid_t pid, const char **text, size_t *len, __u64 *gen,
			   struct cp_maps_how *how)
{
	struct reuse_maps *m = ctx;

	(void)pid;
	*how = (struct cp_maps_how){ 0 };
	*text = m->text;
	*len = strlen(m->text);
	*gen = m->gen;
	return 0;
}

static void reuse_map(struct reuse_maps *m, const char *path)
{
	snprintf(m->text, sizeof(m->text), "7f0000000000-7f0000400000 r-xp 00000000 08:01 1 %s\n",
		 path);
	m->gen++;
}

/*
 * A pid reused (issue 29): a process maps a library at 0x7f0000000000 and
 * exits; another process with its pid maps another file there. The new
 * process's ips are answered from its own maps only, although the old
 * snapshot covers them; the old process's results stay for the report.
 * Without the exit, a refresh is the same process (an exec): replaced.
 */
static void test_reused_pid_is_another_process(void **state)
{
	const char *lib = wl_path("libcp_symlib.so"), *exe = wl_path("symbols");
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	__u64 old_ip = 0x7f0000000000 + elf_symbol(lib, "cp_symlib_hidden");
	__u64 new_ip = 0x7f0000000000 + elf_symbol(exe, "cp_sym_inlined");
	struct reuse_maps m = {0};
	struct cp_symbol_info info;
	pid_t pid = 2147483000; /* above any pid_max: no /proc entry */

	(void)state;
	assert_non_null(s);
	cp_symbolizer__set_maps_text(s, reuse_maps_text, &m, true);
	reuse_map(&m, lib);
	assert_int_equal(cp_symbolizer__refresh(s, pid), 0);
	assert_int_equal(cp_symbolizer__resolve_now(s, pid, old_ip, 0, &info), 0);
	assert_string_equal(info.function, "symlib_static");
	/* the old process's maps hold the new ip too: a name of the old file */
	assert_int_equal(cp_symbolizer__resolve_now(s, pid, new_ip, 0, &info) == 0 &&
				 info.function && !strcmp(info.function, "sym_leaf"),
			 0);

	cp_symbolizer__exit(s, pid);
	reuse_map(&m, exe);
	assert_int_equal(cp_symbolizer__refresh(s, pid), 0);
	assert_int_equal(cp_symbolizer__resolve_now(s, pid, new_ip, 0, &info), 0);
	assert_string_equal(info.function, "sym_leaf");
	/* the report: each ip named by the process that sampled it last */
	assert_int_equal(cp_symbolizer__resolve(s, pid, old_ip, &info), 0);
	assert_string_equal(info.function, "symlib_static");
	assert_int_equal(cp_symbolizer__resolve(s, pid, new_ip, &info), 0);
	assert_string_equal(info.function, "sym_leaf");

	/* no exit between: one process (an exec), its results dropped */
	reuse_map(&m, lib);
	assert_int_equal(cp_symbolizer__refresh(s, pid), 0);
	assert_int_equal(cp_symbolizer__resolve_now(s, pid, old_ip, 0, &info), 0);
	assert_string_equal(info.function, "symlib_static");
	assert_int_equal(cp_symbolizer__resolve_now(s, pid, new_ip, 0, &info) == 0 &&
				 info.function && !strcmp(info.function, "sym_leaf"),
			 0);

	/* forget drops every incarnation */
	cp_symbolizer__forget(s, pid);
	cp_symbolizer__set_maps_text(s, NULL, NULL, false);
	assert_int_equal(cp_symbolizer__resolve(s, pid, old_ip, &info), -ESRCH);
	cp_symbolizer__free(s);
}

/*
 * A live process that started after a record cannot answer it: the record's
 * process exited and its pid was taken since (the drain came late).
 */
static void test_record_older_than_process(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbol_info info;

	assert_non_null(s);
	assert_int_equal(cp_symbolizer__resolve_now(s, w->pid, label(w, "cp_sym_plain"), 1, &info),
			 -ESRCH);
	assert_int_equal(cp_symbolizer__resolve_now(s, w->pid, label(w, "cp_sym_plain"), 0, &info),
			 0);
	assert_non_null(info.function);
	/* an exec record older than the process: not its maps */
	assert_int_equal(cp_symbolizer__exec(s, w->pid, 1), -ESRCH);
	assert_int_equal(cp_symbolizer__resolve_now(s, w->pid, label(w, "cp_sym_plain"), 0, &info),
			 0);
	assert_int_equal(cp_symbolizer__exec(s, w->pid, cp_now_ns()), 0);
	cp_symbolizer__free(s);
}

static void test_result_cache_and_unmapped(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbolizer_stats st;
	struct cp_symbol_info a, b;

	assert_non_null(s);
	a = resolve(s, w->pid, label(w, "cp_sym_plain"));
	b = resolve(s, w->pid, label(w, "cp_sym_plain"));
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(cp_symbolizer__resolve(s, w->pid, 0x1000, &a), -ENOENT);
	assert_null(a.module);
	assert_int_equal(a.ip, 0x1000);
	assert_format(&a, "0x1000");
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.cache_hits, 1);
	assert_int_equal(st.snapshots, 1);
	assert_int_equal(st.failures, 1);
	assert_true(st.string_bytes > 0);
	cp_symbolizer__free(s);
}

/*
 * Strings over their cap are flushed with the result cache, and a shrink
 * drops every Dwfl: lookups go on giving the same answers, from new
 * snapshots, and both are counted.
 */
static void test_string_cap_and_shrink(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbolizer_stats st;
	struct cp_symbol_info info;

	assert_non_null(s);
	cp_symbolizer__set_max_string_bytes(s, 1);
	info = resolve(s, w->pid, label(w, "cp_sym_plain"));
	assert_string_equal(info.function, "sym_plain");
	/* over the cap now: the next lookup flushes, then resolves again */
	info = resolve(s, w->pid, label(w, "cp_sym_plain"));
	assert_string_equal(info.function, "sym_plain");
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.string_flushes, 1);
	assert_int_equal(st.cache_hits, 0);
	cp_symbolizer__set_max_string_bytes(s, CP_SYM_MAX_STRING_BYTES);
	/* one Dwfl, the most recently used: it stays, the strings go */
	assert_int_equal(cp_symbolizer__shrink(s), 0);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.string_flushes, 2);
	assert_int_equal(st.string_bytes, 0);
	info = resolve(s, w->pid, label(w, "cp_sym_inlined"));
	assert_string_equal(info.function, "sym_leaf");
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.snapshots, 1);
	cp_symbolizer__free(s);
}

/* A shrink keeps the most recently used Dwfls: half of its halved cap. */
static void test_shrink_keeps_recent(void **state)
{
	static const char *const names[] = {
		"symbols",     "libcp_symlib.so", "libcp_symlib-nodebug.so",
		"alloc_sites", "touch_pages",	  "bp_hot",
	};
	struct cp_symbolizer *s = cp_symbolizer__new(CP_SYM_MIN_PROCESSES, 0);
	struct cp_symbolizer_stats st;
	struct cp_symbol_info info;

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cp_symbolizer__resolve_file(s, wl_path(names[i]), 0x1000, &info);
	/* 6 files, the cap stays 8, half of it kept: the 2 least recent go */
	assert_int_equal(cp_symbolizer__shrink(s), 2);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.evictions, 2);
	/* the cap is 8 still: 4 more fit without evicting */
	for (size_t i = 0; i < 4; i++)
		cp_symbolizer__resolve_file(s, wl_path(names[i]), 0x1000, &info);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.evictions, 2);
	cp_symbolizer__free(s);
}

/* @a, @b, @a again in @s, which keeps one snapshot: each evicts the other. */
static void evict_in_turn(struct cp_symbolizer *s, struct workload *a, struct workload *b,
			  struct cp_symbolizer_stats *st)
{
	struct cp_symbol_info info;

	resolve(s, a->pid, label(a, "cp_sym_plain"));
	resolve(s, b->pid, label(b, "cp_sym_plain"));
	info = resolve(s, a->pid, label(a, "cp_sym_inlined")); /* a again, re-snapshot */
	assert_string_equal(info.function, "sym_leaf");
	cp_symbolizer__stats(s, st);
	assert_int_equal(st->evictions, 2);
	assert_int_equal(st->snapshots, 3);
}

/*
 * One Dwfl kept: each process evicts the other; results survive eviction.
 * Room for 64, but the maps' bytes capped at one: the same, counted as
 * evictions for the maps' bytes.
 */
static void test_process_lru(void **state)
{
	struct workload *a = *state, *b = start();
	struct cp_symbolizer *s = cp_symbolizer__new(1, 0), *bytes = cp_symbolizer__new(0, 0);
	struct cp_symbolizer_stats st;
	struct cp_symbol_info info;

	assert_non_null(b);
	assert_non_null(s);
	assert_non_null(bytes);
	evict_in_turn(s, a, b, &st);
	assert_int_equal(st.snap_byte_evictions, 0);
	cp_symbolizer__set_max_snap_bytes(bytes, 1);
	evict_in_turn(bytes, a, b, &st);
	assert_int_equal(st.snap_byte_evictions, 2);
	cp_symbolizer__free(bytes);

	/* b exited after its eviction: its cached result stands, new ips cannot resolve */
	finish(b);
	info = resolve(s, b->pid, label(b, "cp_sym_plain"));
	assert_string_equal(info.function, "sym_plain");
	assert_int_equal(cp_symbolizer__resolve(s, b->pid, label(b, "cp_sym_inlined"), &info),
			 -ESRCH);
	stop(b);
	cp_symbolizer__free(s);
}

static void test_resolve_file_offline(void **state)
{
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	const char *exe = wl_path("symbols"), *lib = wl_path("libcp_symlib.so");
	struct cp_symbol_info info;

	(void)state;
	assert_non_null(s);
	assert_int_equal(
		cp_symbolizer__resolve_file(s, exe, elf_symbol(exe, "cp_sym_inlined"), &info), 0);
	assert_string_equal(info.module, exe);
	assert_string_equal(info.function, "sym_leaf");
	assert_int_equal(info.line, marker_line("symbols.c", "leaf"));
	assert_int_equal(info.nr_inlined, 2);
	assert_string_equal(info.inlined[1].function, "sym_outer");

	assert_int_equal(
		cp_symbolizer__resolve_file(s, lib, elf_symbol(lib, "cp_symlib_hidden"), &info), 0);
	assert_int_equal(info.module_offset, elf_symbol(lib, "cp_symlib_hidden"));
	assert_string_equal(info.function, "symlib_static");
	assert_int_equal(info.line, marker_line("lib/cp_symlib.c", "symlib_static"));

	assert_int_equal(cp_symbolizer__resolve_file(s, lib, 0x10000000, &info), -ENOENT);
	assert_int_equal(cp_symbolizer__resolve_file(s, "/nonexistent/x.so", 0x1000, &info),
			 -ENOENT);
	assert_int_equal(cp_symbolizer__resolve_file(s, "/proc/self/status", 0x1000, &info),
			 -ENOEXEC);
	cp_symbolizer__free(s);
}

/*
 * The symbolizer finds functions through its own address indexes; libdw's
 * walk of the whole CU (dwarf_getscopes, then dwarf_getscopes_die for the
 * physical nesting) must agree on every address: names of the innermost
 * function and of each function it was inlined into, and call lines. Over
 * this test program and every library it maps (libc and libdw too, when
 * their debug info is installed).
 */
static int walk_names(Dwfl_Module *mod, __u64 ip, const char **names, __u32 *lines, int max)
{
	Dwarf_Die *cu, *scopes, *chain;
	Dwarf_Addr bias;
	int n, len = 0;

	cu = dwfl_module_addrdie(mod, ip, &bias);
	if (!cu || dwarf_getscopes(cu, ip - bias, &scopes) <= 0)
		return 0;
	n = dwarf_getscopes_die(&scopes[0], &chain);
	free(scopes);
	for (int i = 0; i < n && len < max; i++) {
		int tag = dwarf_tag(&chain[i]);
		Dwarf_Attribute a;
		Dwarf_Word line = 0;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		names[len] = dwarf_formstring(dwarf_attr_integrate(&chain[i], DW_AT_name, &a));
		dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &line);
		lines[len++] = (__u32)line;
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(chain);
	return len;
}

/*
 * cp_sym_scope_path()'s chain at @ip, innermost first as walk_names()
 * gives it: the project's own bounded walk, compared with libdw's.
 */
static int scope_names(Dwfl_Module *mod, __u64 ip, const char **names, int max)
{
	Dwarf_Die path[CP_MAX_DIE_DEPTH], *cu;
	Dwarf_Attribute a;
	Dwarf_Addr bias;
	bool cut = false;
	int n, len = 0;

	cu = dwfl_module_addrdie(mod, ip, &bias);
	n = cu ? cp_sym_scope_path(cu, ip - bias, path, &cut) : 0;
	assert_false(cut);
	for (int i = n - 1; i >= 0 && len < max; i--)
		names[len++] = dwarf_formstring(dwarf_attr_integrate(&path[i], DW_AT_name, &a));
	return len;
}

static void test_indexes_agree_with_libdw_walk(void **state)
{
	struct cp_symbolizer *s = cp_symbolizer__new(0, 64);
	Dwfl *dwfl = proc_dwfl(getpid());
	struct cp_maps *maps;
	size_t compared = 0;

	(void)state;
	assert_non_null(s);
	assert_int_equal(cp_maps__read(NULL, getpid(), &maps), 0);
	for (size_t m = 0; m < maps->nr; m++) {
		const struct cp_map *map = &maps->maps[m];

		if (!(map->prot & CP_MAP_EXEC) ||
		    (map->kind != CP_MAP_FILE && map->kind != CP_MAP_VDSO))
			continue;
		for (__u64 ip = map->start; ip < map->end; ip += 61) {
			Dwfl_Module *mod = dwfl_addrmodule(dwfl, ip);
			const char *names[CP_MAX_INLINE_DEPTH + 1];
			const char *walked_names[CP_MAX_INLINE_DEPTH + 1];
			__u32 lines[CP_MAX_INLINE_DEPTH + 1];
			int walked;
			struct cp_symbol_info info;
			int n = mod ? walk_names(mod, ip, names, lines, CP_MAX_INLINE_DEPTH + 1)
				    : 0;

			if (!n || !names[0])
				continue; /* no DWARF function there */
			walked = scope_names(mod, ip, walked_names, CP_MAX_INLINE_DEPTH + 1);
			assert_int_equal(walked, n);
			for (int i = 0; i < n; i++)
				if (names[i])
					assert_string_equal(walked_names[i], names[i]);
			info = resolve(s, getpid(), ip);
			assert_string_equal(info.function, names[0]);
			assert_int_equal(info.nr_inlined, n - 1);
			for (int i = 1; i < n; i++) {
				if (names[i])
					assert_string_equal(info.inlined[i - 1].function, names[i]);
				assert_int_equal(info.inlined[i - 1].line, lines[i - 1]);
			}
			compared++;
		}
	}
	/* the test binary alone, built -g, gives thousands */
	assert_true(compared > 1000);
	cp_maps__free(maps);
	dwfl_end(dwfl);
	cp_symbolizer__free(s);
}

int main(void);

/*
 * The unwinder's stop (a frame in a thread's start function) asks each
 * frame's function by a binary search in the module's symbol index
 * (cp_sym_function()); it asked libdw, whose dwfl_module_addrname() walks
 * the whole symbol table, a quarter of the profiler's CPU time on redis.
 * Over every 61st byte of this process's code both give the same decision,
 * the start of glibc's __libc_start_main is a start and main is not.
 */
static void test_function_symbol_stops_the_unwinder(void **state)
{
	Dwfl *dwfl = proc_dwfl(getpid());
	__u64 start_main = (__u64)(uintptr_t)dlsym(RTLD_DEFAULT, "__libc_start_main");
	__u64 in_main = (__u64)(uintptr_t)&main + 1;
	struct cp_maps *maps;
	size_t compared = 0, starts = 0;

	(void)state;
	assert_true(start_main != 0);
	assert_true(cp_unwind_reached_start(
		cp_sym_function(dwfl_addrmodule(dwfl, start_main + 1), start_main + 1)));
	assert_string_equal(cp_sym_function(dwfl_addrmodule(dwfl, in_main), in_main), "main");
	assert_int_equal(cp_maps__read(NULL, getpid(), &maps), 0);
	for (size_t m = 0; m < maps->nr; m++) {
		const struct cp_map *map = &maps->maps[m];

		if (!(map->prot & CP_MAP_EXEC) || map->kind != CP_MAP_FILE)
			continue;
		for (__u64 ip = map->start; ip < map->end; ip += 61) {
			Dwfl_Module *mod = dwfl_addrmodule(dwfl, ip);
			bool want;

			if (!mod)
				continue;
			want = cp_unwind_reached_start(dwfl_module_addrname(mod, ip));
			if (cp_unwind_reached_start(cp_sym_function(mod, ip)) != want)
				fail_msg("%#llx: libdw names %s, the index %s",
					 (unsigned long long)ip, dwfl_module_addrname(mod, ip),
					 cp_sym_function(mod, ip));
			starts += want;
			compared++;
		}
	}
	assert_true(compared > 1000);
	assert_true(starts > 0);
	cp_maps__free(maps);
	cp_sym_release(dwfl);
	dwfl_end(dwfl);
}

/*
 * Debug info nesting 300,000 lexical blocks around one function's code
 * (tests/workloads/tenant_parse.S), in a unit without a subprogram: the walk
 * stops at its cap (libdw's recursion overflowed the stack), counts the cut
 * once for the module, and the function is named by its ELF symbol; the
 * file's other functions keep their lines.
 */
static void test_deep_nesting_cut(void **state)
{
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	const char *exe = wl_path("tenant_parse");
	__u64 before[CP_TF_NR], after[CP_TF_NR], deep = elf_symbol(exe, "cp_deep_stream");
	struct cp_symbol_info info;

	(void)state;
	assert_non_null(s);
	cp_tf_refusals(before);
	assert_int_equal(cp_symbolizer__resolve_file(s, exe, deep + 4, &info), 0);
	assert_string_equal(info.function, "cp_deep_stream");
	assert_int_equal(cp_symbolizer__resolve_file(s, exe, deep + 8, &info), 0);
	assert_string_equal(info.function, "cp_deep_stream");
	cp_tf_refusals(after);
	assert_int_equal(after[CP_TF_DEEP_DWARF] - before[CP_TF_DEEP_DWARF], 1);
	assert_int_equal(
		cp_symbolizer__resolve_file(s, exe, elf_symbol(exe, "cp_deep_shallow") + 4, &info),
		0);
	assert_string_equal(info.function, "cp_deep_shallow");
	assert_true(info.line > 0);
	cp_symbolizer__free(s);
}

/*
 * A relocatable file (ET_REL) at @path, its .text a `jmp .` with a function
 * symbol on it, as a tenant would build one to map and run. Returns the
 * .text's offset in the file.
 */
static off_t write_relocatable(const char *path)
{
	static unsigned char code[] = {0xeb, 0xfe};
	static char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	static char str[] = "\0cp_rel_spin";
	static Elf64_Sym syms[2] = {
		{0},
		{.st_name = 1,
		 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		 .st_shndx = 1,
		 .st_size = sizeof(code)},
	};
	struct {
		void *buf;
		size_t size;
		Elf_Type type;
		Elf64_Word name, sh_type;
	} secs[] = {
		{code, sizeof(code), ELF_T_BYTE, 1, SHT_PROGBITS},
		{syms, sizeof(syms), ELF_T_SYM, 7, SHT_SYMTAB},
		{str, sizeof(str), ELF_T_BYTE, 15, SHT_STRTAB},
		{shstr, sizeof(shstr), ELF_T_BYTE, 23, SHT_STRTAB},
	};
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	off_t text_off;
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(e);
	eh = elf64_newehdr(e);
	assert_non_null(eh);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d = elf_newdata(scn);

		d->d_buf = secs[i].buf;
		d->d_size = secs[i].size;
		d->d_type = secs[i].type;
		d->d_align = secs[i].type == ELF_T_SYM ? 8 : 16;
		sh = elf64_getshdr(scn);
		sh->sh_name = secs[i].name;
		sh->sh_type = secs[i].sh_type;
		if (i == 0)
			sh->sh_flags = SHF_ALLOC | SHF_EXECINSTR;
		if (secs[i].sh_type == SHT_SYMTAB) {
			sh->sh_link = 3; /* .strtab */
			sh->sh_info = 1; /* the first global */
			sh->sh_entsize = sizeof(Elf64_Sym);
		}
	}
	eh->e_shstrndx = 4;
	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	text_off = (off_t)elf64_getshdr(elf_getscn(e, 1))->sh_offset;
	elf_end(e);
	close(fd);
	return text_off;
}

/*
 * A process that maps a relocatable file with exec rights and runs in it
 * (a tenant's .o): the symbolizer refuses the module, counted, and names
 * nothing there. libdwfl asked the process Dwfl's callbacks where the
 * file's sections were loaded, and that callback was NULL: the profiler
 * jumped to address 0 (SIGSEGV), under -p and -a alike. A tenant's .o
 * (@tenant: owned by nobody) is no file for the describe server alone:
 * libdwfl lays out and relocates it wherever it is reported, so it is
 * vetted by a parse worker first, and no shared space is made of it.
 */
static void relocatable_refused(bool tenant)
{
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	char path[] = "/tmp/cp-test-relXXXXXX";
	__u64 before[CP_TF_NR], after[CP_TF_NR], workers0, workers1, refused, waited;
	struct cp_symbolizer_stats st;
	struct cp_symbol_info info;
	off_t text_off;
	int fds[2], tmp, status;
	char *base;
	pid_t pid;

	assert_non_null(s);
	tmp = mkstemp(path);
	assert_true(tmp >= 0);
	close(tmp);
	text_off = write_relocatable(path);
	if (tenant)
		assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = prctl(PR_SET_PDEATHSIG, SIGKILL) ? -1 : open(path, O_RDONLY);
		char *p = fd < 0 ? MAP_FAILED
				 : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED || write(fds[1], &p, sizeof(p)) != sizeof(p))
			_exit(1);
		((void (*)(void))(p + text_off))();
		_exit(2);
	}
	assert_int_equal(read(fds[0], &base, sizeof(base)), sizeof(base));
	cp_tf_refusals(before);
	cp_parse_worker_stats(&workers0, &refused, &waited);
	assert_int_not_equal(cp_symbolizer__resolve_now(s, pid, (__u64)(uintptr_t)(base + text_off),
							0, &info) == 0 &&
				     info.function && !strcmp(info.function, "cp_rel_spin"),
			     true);
	cp_tf_refusals(after);
	assert_int_equal(after[CP_TF_NOT_LOADABLE] - before[CP_TF_NOT_LOADABLE], 1);
	cp_parse_worker_stats(&workers1, &refused, &waited);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.file_spaces, 0);
	if (tenant)
		assert_true(workers1 > workers0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fds[0]);
	close(fds[1]);
	unlink(path);
	cp_symbolizer__free(s);
}

static void test_relocatable_mapped_refused(void **state)
{
	(void)state;
	relocatable_refused(false);
	if (!geteuid())
		relocatable_refused(true);
}

/* Formatting alone, on hand-built results. */
static void test_format_table(void **state)
{
	static const struct {
		struct cp_symbol_info info;
		const char *want;
	} cases[] = {
		{{.ip = 0x7f00,
		  .module = "/usr/bin/app",
		  .function = "hot",
		  .file = "/src/app/hot.c",
		  .line = 42},
		 "hot (hot.c:42)"},
		{{.ip = 0x7f00,
		  .module = "/usr/bin/app",
		  .function = "f",
		  .file = "a.c",
		  .line = 7,
		  .nr_inlined = 1,
		  .inlined = {{"g", "a.c", 9, 0}}},
		 "f (a.c:7) \u2190 g (a.c:9)"},
		{{.module = "/lib/libfoo.so", .function = "foo_get"}, "foo_get"},
		{{.module = "/lib/libfoo.so",
		  .module_offset = 0x1234,
		  .nearest = "foo_init",
		  .nearest_offset = 0x34},
		 "libfoo.so+0x1234 (nearest: foo_init)"},
		{{.module = "[vdso]", .module_offset = 0x9a0}, "[vdso]+0x9a0"},
		{{.ip = 0xdeadbeef}, "0xdeadbeef"},
		/* a line without a function: still worth showing */
		{{.module = "/a/b", .module_offset = 0x10, .file = "x.c", .line = 3},
		 "b+0x10 (x.c:3)"},
		{{.module = "/a/b", .function = "f", .file = "x.c", .line = 0}, "f"},
	};
	char small[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_format(&cases[i].info, cases[i].want);
	/* truncation: snprintf semantics */
	assert_int_equal(cp_symbol_info_format(&cases[0].info, small, sizeof(small)),
			 strlen("hot (hot.c:42)"));
	assert_string_equal(small, "hot (ho");
	assert_int_equal(cp_symbol_info_format(&cases[0].info, NULL, 0), strlen("hot (hot.c:42)"));
}

/* The first executable mapping of @maps whose path ends in @suffix. */
static const struct cp_map *exec_map(const struct cp_maps *maps, const char *suffix)
{
	size_t n = strlen(suffix);

	for (size_t i = 0; i < maps->nr; i++) {
		const struct cp_map *m = &maps->maps[i];
		size_t len = strlen(m->path);

		if ((m->prot & CP_MAP_EXEC) && len >= n && !strcmp(m->path + len - n, suffix))
			return m;
	}
	fail_msg("nothing executable mapped from *%s", suffix);
	return NULL;
}

/*
 * Two processes of one binary: the binary and libc are each opened once,
 * and the same code gives the same answer in both, at each one's addresses.
 * [vdso] has no file: our own copy of it answers for both, and still does
 * after the process exited (its memory can no longer be read then).
 */
static void test_processes_share_files(void **state)
{
	struct workload *a = *state, *b = start();
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_maps *ma, *mb, *mine;
	const struct cp_map *la, *lb, *lm;
	__u64 fn;
	struct cp_symbolizer_stats st;
	struct cp_symbol_info ia, ib;
	pid_t pid_b;

	assert_non_null(b);
	assert_non_null(s);
	ia = resolve(s, a->pid, label(a, "cp_sym_inlined"));
	ib = resolve(s, b->pid, label(b, "cp_sym_inlined"));
	assert_string_equal(ia.module, wl_path("symbols"));
	assert_string_equal(ib.module, ia.module);
	assert_int_equal(ib.module_offset, ia.module_offset);
	assert_string_equal(ib.function, "sym_leaf");
	assert_int_equal(ib.line, marker_line("symbols.c", "leaf"));
	/* the function entry in each process: the label's distance from it is the same */
	assert_true(ia.sym_size > 0);
	assert_int_equal(label(a, "cp_sym_inlined") - ia.sym_start,
			 label(b, "cp_sym_inlined") - ib.sym_start);

	/* libc's getpid in each (ASLR: at two addresses), placed by its file offset here */
	assert_int_equal(cp_maps__read(NULL, getpid(), &mine), 0);
	assert_int_equal(cp_maps__read(NULL, a->pid, &ma), 0);
	assert_int_equal(cp_maps__read(NULL, b->pid, &mb), 0);
	fn = (__u64)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
	lm = exec_map(mine, "/libc.so.6");
	la = exec_map(ma, "/libc.so.6");
	lb = exec_map(mb, "/libc.so.6");
	assert_true(fn >= lm->start && fn < lm->end);
	ia = resolve(s, a->pid, fn - lm->start + lm->offset - la->offset + la->start);
	ib = resolve(s, b->pid, fn - lm->start + lm->offset - lb->offset + lb->start);
	assert_string_equal(ia.module, la->path);
	assert_int_equal(ia.module_offset, ib.module_offset);
	assert_non_null(ia.function);
	assert_non_null(strstr(ia.function, "getpid")); /* "__getpid" in glibc's DWARF */
	assert_string_equal(ia.function, ib.function);
	assert_int_equal(ia.function_offset, 0);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.file_spaces, 2); /* symbols and libc, once each */
	assert_int_equal(st.shared_lookups, 4);
	/* b's two answers are a's descriptions of the same code, moved to b's addresses */
	assert_int_equal(st.file_cache_hits, 2);
	assert_int_equal(st.fallbacks, 0);

	/* the first function of [vdso] in a, then the same offset in b once b has exited */
	la = exec_map(ma, "[vdso]");
	lb = exec_map(mb, "[vdso]");
	assert_non_null(la);
	assert_non_null(lb);
	for (fn = 0; la->start + fn < la->end; fn += 4) {
		ia = resolve(s, a->pid, la->start + fn);
		assert_string_equal(ia.module, "[vdso]");
		if (ia.function)
			break;
	}
	assert_non_null(ia.function);
	assert_non_null(strstr(ia.function, "vdso")); /* __vdso_clock_gettime, ... */
	pid_b = b->pid;
	stop(b); /* frees b */
	ib = resolve(s, pid_b, lb->start + fn);
	assert_string_equal(ib.module, "[vdso]");
	assert_int_equal(ib.module_offset, ia.module_offset);
	assert_string_equal(ib.function, ia.function);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.fallbacks, 0);
	assert_int_equal(st.file_spaces, 3); /* and [vdso] */
	cp_maps__free(mine);
	cp_maps__free(ma);
	cp_maps__free(mb);
	cp_symbolizer__free(s);
}

static void assert_same_str(const char *got, const char *want)
{
	if (!got || !want)
		assert_ptr_equal(got, want);
	else
		assert_string_equal(got, want);
}

/* Every field the same: the strings by content, the rest (no padding) by bytes. */
static void assert_same_info(struct cp_symbol_info *got, struct cp_symbol_info *want)
{
	const char **g[] = {&got->module, &got->function, &got->file, &got->nearest},
		   **w[] = {&want->module, &want->function, &want->file, &want->nearest};

	for (size_t i = 0; i < 4; i++) {
		assert_same_str(*g[i], *w[i]);
		*g[i] = *w[i] = NULL;
	}
	for (size_t i = 0; i < CP_MAX_INLINE_DEPTH; i++) {
		struct cp_inline_caller *gc = &got->inlined[i], *wc = &want->inlined[i];

		assert_same_str(gc->function, wc->function);
		assert_same_str(gc->file, wc->file);
		gc->function = wc->function = gc->file = wc->file = NULL;
	}
	assert_memory_equal(got, want, sizeof(*got));
}

/*
 * What a file shared by processes answers is what a Dwfl of the process's
 * own gives (the symbolizer before sharing), field by field, over every
 * executable mapping: the binary, the stripped library, libc, ld.so.
 */
static void test_shared_agrees_with_process_dwfl(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 64);
	struct cp_symbolizer_stats st;
	struct cp_maps *maps;
	size_t compared = 0;
	Dwfl *dwfl;

	assert_non_null(s);
	load(w, "libcp_symlib-stripped.so");
	dwfl = proc_dwfl(w->pid);
	assert_int_equal(cp_maps__read(NULL, w->pid, &maps), 0);
	for (size_t m = 0; m < maps->nr; m++) {
		const struct cp_map *map = &maps->maps[m];
		__u64 step = (map->end - map->start) / 3000 + 1;

		if (!(map->prot & CP_MAP_EXEC) || map->kind != CP_MAP_FILE)
			continue;
		for (__u64 ip = map->start; ip < map->end; ip += step | 1) {
			Dwfl_Module *mod = dwfl_addrmodule(dwfl, ip);
			struct cp_symbol_info want, got;

			if (!mod)
				continue;
			cp_sym_describe(mod, ip, &want);
			assert_int_equal(cp_symbolizer__resolve(s, w->pid, ip, &got), 0);
			assert_int_equal(got.ip, ip);
			assert_same_info(&got, &want);
			compared++;
		}
	}
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.fallbacks, 0); /* all of it from shared files */
	assert_int_equal(st.shared_lookups, compared);
	assert_true(compared > 8000); /* 4 files at least, 3000 ips each in the big ones */
	cp_maps__free(maps);
	cp_sym_release(dwfl);
	dwfl_end(dwfl);
	cp_symbolizer__free(s);
}

/*
 * A library deleted after it was loaded (an upgrade) is no file to share:
 * the process's own Dwfl, taken with the snapshot, answers as before.
 */
static void test_deleted_file_falls_back(void **state)
{
	struct workload *w = *state;
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	char copy[] = "/tmp/cp_symlib_deletedXXXXXX", cmd[64], last[64], buf[1 << 16];
	int in, out = mkstemp(copy);
	struct cp_symbolizer_stats st;
	struct cp_symbol_info got, want;
	ssize_t n;
	__u64 ip;
	Dwfl *dwfl;

	assert_non_null(s);
	assert_true(out >= 0);
	in = open(wl_path("libcp_symlib.so"), O_RDONLY);
	assert_true(in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	snprintf(cmd, sizeof(cmd), "load %s", copy);
	command(w, cmd);
	assert_int_equal(read_until(w, "ok", last, sizeof(last)), 0);
	assert_int_equal(unlink(copy), 0);

	ip = label(w, "cp_symlib_insn");
	dwfl = proc_dwfl(w->pid);
	assert_non_null(dwfl_addrmodule(dwfl, ip));
	cp_sym_describe(dwfl_addrmodule(dwfl, ip), ip, &want);

	resolve(s, w->pid, label(w, "cp_sym_plain")); /* the snapshot, as at attach */
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.fallbacks, 1); /* taken with it */
	finish(w);
	/* the first lookup in the library, the process gone: the fallback answers */
	assert_int_equal(cp_symbolizer__resolve(s, w->pid, ip, &got), 0);
	cp_symbolizer__stats(s, &st);
	assert_int_equal(st.fallbacks, 1);
	assert_int_equal(st.file_spaces, 1); /* the binary; not the deleted file */
	assert_int_equal(st.shared_lookups, 1);
	assert_non_null(got.module);
	assert_non_null(strstr(got.module, copy)); /* the name the maps give it */
	assert_int_equal(got.module_offset, want.module_offset);
	/*
	 * libdw reads a deleted file from the process's memory (no symbol
	 * table, no DWARF); the fallback opens the mapped file itself through
	 * /proc/PID/map_files (target_file.h), so it knows more: the function
	 * and its line.
	 */
	assert_non_null(got.function);
	assert_string_equal(got.function, "cp_symlib_exported");
	assert_true(got.flags & CP_SYM_DEBUG_INFO);
	cp_sym_release(dwfl);
	dwfl_end(dwfl);
	cp_symbolizer__free(s);
}

/* A copy of the built file @rel, named @name in a new directory @dir, owned by nobody. */
static void tenant_copy_of(const char *rel, const char *name, char *dir, char *path, size_t size)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	char src[PATH_MAX], buf[1 << 16];
	int in, out;
	ssize_t n;

	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/%s", build, rel);
	snprintf(path, size, "%s/%s", dir, name);
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
}

/* A copy of the profiler's binary (its whole DWARF) in a new directory, owned by nobody. */
static void tenant_copy(char *dir, char *path, size_t size)
{
	tenant_copy_of("cacheperf-bpf", "tenant-bin", dir, path, size);
}

/*
 * A tenant's library this process maps as the loader does (its first
 * mapping the read-only ELF header, its code apart) is in the process's
 * own Dwfl without its ELF: the unwinder hands its frames to the describe
 * server, which cp_symbolizer__remote_at() places, never to libdw here.
 * The host's libc keeps its ELF there.
 */
static void test_tenant_library_left_to_server(void **state)
{
	char dir[] = "/tmp/cp_sym_tenantlibXXXXXX", path[PATH_MAX];
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_sym_remote f;
	Dwfl_Module *lib, *libc;
	GElf_Addr bias;
	__u64 at;
	Dwfl *dwfl;
	void *h;

	(void)state;
	if (geteuid())
		skip(); /* a tenant's file: owned by another user */
	assert_non_null(s);
	tenant_copy_of("tests/workloads/libcp_symlib.so", "libcp_symlib.so", dir, path,
		       sizeof(path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	at = (__u64)(uintptr_t)dlsym(h, "cp_symlib_exported");
	assert_true(at != 0);
	dwfl = cp_symbolizer__process_dwfl(s, getpid());
	assert_non_null(dwfl);
	lib = dwfl_addrmodule(dwfl, at);
	libc = dwfl_addrmodule(dwfl, (__u64)(uintptr_t)&getpid);
	assert_non_null(lib);
	assert_non_null(libc);
	assert_true(cp_sym_remote(lib));
	assert_null(dwfl_module_getelf(lib, &bias));
	assert_false(cp_sym_remote(libc));
	assert_non_null(dwfl_module_getelf(libc, &bias));
	/* where the server places it: the process's address of a symbol, less its value */
	assert_int_equal(cp_symbolizer__remote_at(s, getpid(), at, &f), 0);
	assert_int_equal(f.bias, at - elf_symbol(path, "cp_symlib_exported"));
	assert_true(f.fd >= 0);
	assert_int_equal(cp_symbolizer__remote_at(s, getpid(), (__u64)(uintptr_t)&getpid, &f),
			 -ENOENT);
	cp_sym_server_stop();
	cp_symbolizer__free(s);
	dlclose(h);
	unlink(path);
	rmdir(dir);
}

/*
 * A tenant's library deleted after dlopen (what makes the process's own
 * Dwfl answer: no shared space finds it), or replaced by another file
 * renamed over its path: the process's own Dwfl holds it without its ELF,
 * as a tenant's library still there. The describe server names its
 * addresses, with their lines, from the kept copy of the content judged;
 * no parse worker vets it first, as libdw here never parses it; the
 * unwinder's hand-over places it as for a shared file.
 */
static void tenant_library_gone(bool replaced)
{
	char dir[] = "/tmp/cp_sym_tenantgoneXXXXXX", path[PATH_MAX], other[PATH_MAX + 8];
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_sym_server_stats before, after;
	__u64 workers0, workers1, refused, waited, link, at;
	struct cp_symbol_info info;
	struct cp_sym_remote f;
	Dwfl_Module *lib;
	GElf_Addr bias;
	Dwfl *dwfl;
	void *h;
	int fd;

	assert_non_null(s);
	tenant_copy_of("tests/workloads/libcp_symlib.so", "libcp_symlib.so", dir, path,
		       sizeof(path));
	link = elf_symbol(path, "cp_symlib_exported");
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	at = (__u64)(uintptr_t)dlsym(h, "cp_symlib_exported");
	assert_true(at != 0);
	if (replaced) {
		snprintf(other, sizeof(other), "%s.new", path);
		fd = open(other, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "not the library\n", 16), 16);
		close(fd);
		assert_int_equal(chown(other, 65534, 65534), 0);
		assert_int_equal(rename(other, path), 0);
	} else {
		assert_int_equal(unlink(path), 0);
	}
	cp_sym_server_stats(&before);
	cp_parse_worker_stats(&workers0, &refused, &waited);
	assert_int_equal(cp_symbolizer__resolve(s, getpid(), at, &info), 0);
	cp_sym_server_stats(&after);
	cp_parse_worker_stats(&workers1, &refused, &waited);
	assert_non_null(info.function);
	assert_string_equal(info.function, "cp_symlib_exported");
	assert_true(info.flags & CP_SYM_DEBUG_INFO);
	assert_non_null(info.file);
	assert_non_null(strstr(info.file, "cp_symlib.c"));
	assert_true(info.line > 0);
	assert_true(after.requests > before.requests); /* named by the server */
	assert_int_equal(workers1, workers0);	       /* vetted by none: parsed there only */
	dwfl = cp_symbolizer__process_dwfl(s, getpid());
	assert_non_null(dwfl);
	lib = dwfl_addrmodule(dwfl, at);
	assert_non_null(lib);
	assert_true(cp_sym_remote(lib));
	assert_null(dwfl_module_getelf(lib, &bias));
	assert_int_equal(cp_symbolizer__remote_at(s, getpid(), at, &f), 0);
	assert_int_equal(f.bias, at - link);
	assert_true(f.fd >= 0);
	cp_sym_server_stop();
	cp_symbolizer__free(s);
	dlclose(h);
	unlink(path);
	rmdir(dir);
}

static void test_tenant_library_deleted_left_to_server(void **state)
{
	(void)state;
	if (geteuid())
		skip(); /* a tenant's file: owned by another user */
	tenant_library_gone(false);
	tenant_library_gone(true);
}

/*
 * A tenant's file (owned by nobody, mapped here) whose describe server had
 * 1 MiB left under --max-memory names its module only: refused for
 * memory. That answer is no final one: once the room is back, the same
 * address of the same process names its function (kept for the process,
 * the refusal hid it for the rest of the run, and the instruction was
 * taken as located).
 */
static void test_memory_refusal_asked_again(void **state)
{
	char dir[] = "/tmp/cp_sym_tenantXXXXXX", path[PATH_MAX];
	struct cp_symbolizer *s = cp_symbolizer__new(0, 0);
	struct cp_symbol_info info;
	struct cp_self_mem now;
	struct stat st;
	__u64 base, at_main;
	void *map;
	int fd;

	(void)state;
	if (geteuid())
		skip(); /* a tenant's file: owned by another user */
	assert_non_null(s);
	tenant_copy(dir, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && !fstat(fd, &st));
	/* the whole file at once: its code's file offsets are its addresses (readelf -l) */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	base = (__u64)(uintptr_t)map;
	at_main = base + elf_symbol(path, "main");

	/* the room a run has: its worker passes it, the server names a function */
	info = resolve(s, getpid(), base + elf_symbol(path, "cp_options_parse"));
	assert_string_equal(info.function, "cp_options_parse");
	cp_sym_server_stop();
	assert_int_equal(cp_self_mem_scan(&now), 0);
	cp_self_mem_set_limit(now.bytes + (1u << 20));
	assert_int_equal(cp_symbolizer__resolve(s, getpid(), at_main, &info), 0);
	assert_string_equal(info.module, path);
	assert_null(info.function);
	assert_true(info.flags & CP_SYM_REFUSED_FOR_NOW);
	/* the room is back: a new server, the name */
	cp_sym_server_stop();
	cp_self_mem_set_limit(0);
	info = resolve(s, getpid(), at_main);
	assert_non_null(info.function);
	assert_string_equal(info.function, "main");
	assert_false(info.flags & CP_SYM_REFUSED_FOR_NOW);
	cp_sym_server_stop();
	munmap(map, (size_t)st.st_size);
	close(fd);
	unlink(path);
	rmdir(dir);
	cp_symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_table),
		cmocka_unit_test(test_tenant_library_left_to_server),
		cmocka_unit_test(test_tenant_library_deleted_left_to_server),
		cmocka_unit_test_setup_teardown(test_pie_function_and_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_library_after_refresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dlopen_found_without_refresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_debug_info_gives_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stripped_gives_offset_and_nearest, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exited_process_resolves_from_snapshot, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exited_process_keeps_its_dwfl, setup, teardown),
		cmocka_unit_test(test_reused_pid_is_another_process),
		cmocka_unit_test_setup_teardown(test_record_older_than_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_cache_and_unmapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_string_cap_and_shrink, setup, teardown),
		cmocka_unit_test(test_shrink_keeps_recent),
		cmocka_unit_test_setup_teardown(test_process_lru, setup, teardown),
		cmocka_unit_test(test_resolve_file_offline),
		cmocka_unit_test(test_indexes_agree_with_libdw_walk),
		cmocka_unit_test(test_function_symbol_stops_the_unwinder),
		cmocka_unit_test(test_deep_nesting_cut),
		cmocka_unit_test(test_relocatable_mapped_refused),
		cmocka_unit_test_setup_teardown(test_processes_share_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_agrees_with_process_dwfl, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_deleted_file_falls_back, setup, teardown),
		cmocka_unit_test(test_memory_refusal_asked_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
