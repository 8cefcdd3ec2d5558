// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Dwfls the symbolizer reads, made over sealed, checked copies only:
 * libdwfl's callbacks for a process's modules and their separate debug
 * info, and the openers of a process's maps and of one ELF file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "machine/elf_bounds.h"
#include "machine/target_file.h"
#include "symbols/cfi_guard.h"
#include "symbols/debuginfod.h"
#include "symbols/elf_guard.h"
#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_server.h"
#include "symbols/sym_share.h"
#include "symbols/symbolizer.h"

/*
 * Set while a process's modules are opened, for find_elf below. Thread-local
 * because libdwfl gives find_elf no argument of ours that would carry it.
 */
static __thread pid_t opening_pid; /* 0: files a recording names (a replay) */
static __thread const struct cp_path_map *opening_map;
static __thread const struct cp_maps *opening_maps; /* the mappings, for their files' keys */
static __thread size_t opening_modules;		    /* modules opened in this Dwfl */
/* a file a callback asked for waited for its parse worker (cp_sym_dwfl_take_waited()) */
static __thread bool waited;

/* Notes a callback's open that waited for a parse worker; -1, libdwfl's "no file". */
static int note_wait(int mfd)
{
	if (mfd == -EAGAIN)
		waited = true;
	return -1;
}

bool cp_sym_dwfl_take_waited(void)
{
	bool w = waited;

	waited = false;
	return w;
}

/*
 * Where libdwfl's module @name (reported at @low) is and what it must be:
 * moved by --path-map (the user's word), named by a recording, or the file
 * the process maps there (device and inode from its maps line).
 */
static const char *module_where(const char *name, __u64 low, char *buf, size_t sz,
				struct cp_tf_where *w, struct cp_tf_want *want)
{
	const char *path = cp_path_map_apply(opening_map, name, buf, sz);
	const struct cp_map *m;

	*w = (struct cp_tf_where){.path = path};
	*want = (struct cp_tf_want){.follow = path != name};
	if (!path || path != name || !opening_pid)
		return path;
	m = cp_maps__find(opening_maps, low);
	w->pid = opening_pid;
	if (m && m->kind == CP_MAP_FILE && m->inode)
		cp_map_target_file(m, NULL, opening_pid, w, want); /* without " (deleted)" */
	else if (strstr(name, " (deleted)"))
		return NULL; /* only map_files reaches it: a mapping we do not know */
	return w->path;
}

/* No section of a process's module has an address of its own to give (see loadable()). */
static int no_section_address(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *secname, GElf_Word shndx,
			      const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)secname;
	(void)shndx;
	(void)shdr;
	*addr = (Dwarf_Addr)-1;
	return -1;
}

/*
 * The executable mapping of the file @maps maps at @low, NULL when none:
 * a module's first mapping is its ELF header's, read-only in a file linked
 * with separate code segments (binutils' default since 2.31).
 */
static const struct cp_map *exec_map_of(const struct cp_maps *maps, __u64 low)
{
	const struct cp_map *first = cp_maps__find(maps, low);

	for (size_t i = 0; first && i < maps->nr; i++) {
		const struct cp_map *m = &maps->maps[i];

		if (m->inode == first->inode && m->dev_major == first->dev_major &&
		    m->dev_minor == first->dev_minor && (m->prot & CP_MAP_EXEC))
			return m;
	}
	return NULL;
}

/*
 * Gives libdwfl each module as an Elf over a sealed copy (elf_guard.h),
 * never a path to open and no descriptor to keep: a FIFO, a symlink out of
 * the process's root, a file swapped or truncated since it was mapped, or
 * a decompression bomb is refused and counted. [vdso] is read from memory.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	char buf[PATH_MAX];
	struct cp_tf_where w;
	struct cp_tf_want want;
	struct cp_elf_guard_info info;
	const struct cp_map *m;
	enum cp_tf_refusal why;
	Dwarf_Addr low;
	bool served;
	int mfd;

	if (name[0] == '[')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	if (++opening_modules > CP_SYM_MAX_MODULES) {
		cp_tf_count(CP_TF_MODULE_CAP);
		return -1;
	}
	dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
	if (name[0] != '/' || !module_where(name, low, buf, sizeof(buf), &w, &want))
		return -1;
	/*
	 * a tenant's file a process maps, deleted or replaced since too: the describe
	 * server alone parses it (unwind.h), from the kept copy of the content judged
	 * here (the symbolizer takes it by this key when it needs it: no descriptor
	 * is held per module)
	 */
	m = opening_pid ? exec_map_of(opening_maps, low) : NULL;
	served = m && cp_sym_map_servable(m) && cp_sym_server_usable();
	/*
	 * judged uncopied while the file is still there: a process mapping many big
	 * files costs a copy only where a walk or a lookup reaches one; a deleted
	 * one is copied now, while its process can still be read
	 */
	mfd = served && !m->deleted ? cp_elf_guard_served(&w, &want, &info.key, &why) : 0;
	if (mfd > 0) {
		cp_sym_set_remote(mod, &info.key);
		return -1;
	}
	mfd = mfd < 0 ? mfd : cp_elf_guard_file(&w, &want, served, &why, &info);
	if (mfd < 0)
		return note_wait(mfd);
	if (info.tenant && !info.vetted && served) {
		close(mfd);
		cp_sym_set_remote(mod, &info.key); /* else a module the unwinder stops in */
		return -1;
	}
	/* the Dwfl the unwinder walks (cp_symbolizer__process_dwfl()): its CFI checked */
	*elfp = cp_elf_guard_elf(mfd);
	close(mfd);
	if (*elfp && !cp_elf_loadable(*elfp)) {
		elf_end(*elfp);
		*elfp = NULL;
		cp_tf_count(CP_TF_NOT_LOADABLE);
	}
	if (*elfp)
		*elfp = cp_cfi_guard_elf(*elfp);
	if (*elfp)
		*file_name = strdup(name);
	return -1;
}

/* A separate debug file handed over for the next find_debuginfo (cp_sym_dwfl_give_debug()). */
static __thread int given_debug = -1;

void cp_sym_dwfl_give_debug(int fd)
{
	given_debug = fd;
}

int cp_sym_dwfl_debug_back(void)
{
	int fd = given_debug;

	given_debug = -1;
	return fd;
}

/* cp_elf_guard_open() of a separate debug file, -1 when it is not ELF (cp_elf_native()). */
static int open_debug(const struct cp_tf_where *w, const struct cp_tf_want *want)
{
	enum cp_tf_refusal why;
	int mfd = cp_elf_guard_open(w, want, &why);

	if (mfd >= 0 && !cp_elf_native(mfd)) {
		close(mfd);
		return -1;
	}
	return mfd;
}

int cp_sym_dwfl_build_id(Dwfl_Module *mod, const unsigned char **bits)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	const void *p = NULL;
	int len = elf ? cp_elf_build_id(elf, &p) : 0;

	*bits = p;
	return len;
}

int cp_sym_dwfl_debug_of(Dwfl_Module *mod, char **name)
{
	char path[sizeof(CP_SYM_BUILD_ID_DIR) + 2 * 64 + 16];
	const unsigned char *bits;
	struct cp_tf_where w = {.path = path};
	struct cp_tf_want want = {.follow = true};
	int len = cp_sym_dwfl_build_id(mod, &bits), n, mfd;
	char *fetched;

	if (len < 2 || len > 64)
		return -1;
	n = snprintf(path, sizeof(path), "%s/%02x/", CP_SYM_BUILD_ID_DIR, bits[0]);
	for (int i = 1; i < len; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", bits[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
	mfd = open_debug(&w, &want);
	if (mfd >= 0 || mfd == -EAGAIN) {
		*name = mfd >= 0 ? strdup(path) : NULL;
		return mfd;
	}
	fetched = cp_debuginfod_fetch(bits, len);
	if (!fetched)
		return -1;
	w.path = fetched;
	want.foreign = true;
	mfd = open_debug(&w, &want);
	if (mfd < 0) {
		free(fetched);
		return mfd == -EAGAIN ? mfd : -1;
	}
	*name = fetched;
	return mfd;
}

/*
 * Separate debug info handed over (the describe server's: its client
 * found it), else cp_sym_dwfl_debug_of()'s, its CFI checked: never
 * .gnu_debuglink, which names a file next to the binary, the target's to
 * make a FIFO or a link to anything.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int mfd = cp_sym_dwfl_debug_back();

	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	if (mfd >= 0 && !cp_cfi_guard_fd(mfd)) {
		close(mfd);
		return -1;
	}
	if (mfd >= 0) {
		*debuginfo_file_name = strdup("debug");
		return mfd;
	}
	mfd = cp_sym_dwfl_debug_of(mod, debuginfo_file_name);
	if (mfd >= 0 && !cp_cfi_guard_fd(mfd)) {
		close(mfd);
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		return -1;
	}
	return mfd >= 0 ? mfd : note_wait(mfd);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	/* libdwfl calls it without a check: NULL was a jump to address 0 */
	.section_address = no_section_address,
};

/* Shared and offline files are reported with a descriptor: find_elf is never asked. */
static const Dwfl_Callbacks file_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int open_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	GElf_Addr bias;

	(void)userdata;
	(void)name;
	(void)start;
	(void)arg;
	/* failures (a file gone since it was mapped) leave the module nameless */
	dwfl_module_getelf(mod, &bias);
	return DWARF_CB_OK;
}

/* The files with code in a maps text: an open-addressed set of (device, inode). */
#define CODE_FILES_SLOTS (2 * CP_SYM_MAX_MODULES)

struct code_files {
	struct cp_map key[CODE_FILES_SLOTS]; /* dev_major, dev_minor and inode; inode 0: empty */
	size_t nr;
	bool over; /* more files had code than are kept */
};

/* @m's slot in @set: its own, or the empty one it would take. */
static struct cp_map *code_slot(struct code_files *set, const struct cp_map *m)
{
	size_t h = (size_t)((m->inode * 0x9e3779b97f4a7c15ull) ^ m->dev_major ^
			    ((__u64)m->dev_minor << 20)) %
		   CODE_FILES_SLOTS;

	for (;; h = (h + 1) % CODE_FILES_SLOTS) {
		struct cp_map *k = &set->key[h];

		if (!k->inode || (k->inode == m->inode && k->dev_major == m->dev_major &&
				  k->dev_minor == m->dev_minor))
			return k;
	}
}

/* Each line of @text (@len) in turn: @fn(line, its length without '\n', @arg). */
static void each_line(const char *text, size_t len,
		      void (*fn)(const char *line, size_t n, void *arg), void *arg)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		fn(text + i, end - i, arg);
		i = end + 1;
	}
}

/* A line's mapping, and whether it is a file's ('/') or the [vdso]; false: neither. */
static bool parse_kept(const char *line, size_t n, struct cp_map *m)
{
	const char *path;
	size_t path_len;

	return !cp_maps_parse_line(line, n, m, &path, &path_len) && path_len &&
	       (path[0] == '/' || (path_len == 6 && !memcmp(path, "[vdso]", 6)));
}

static void note_code(const char *line, size_t n, void *arg)
{
	struct code_files *set = arg;
	struct cp_map m, *k;

	if (!parse_kept(line, n, &m) || !(m.prot & CP_MAP_EXEC) || !m.inode ||
	    (k = code_slot(set, &m))->inode)
		return;
	if (set->nr == CP_SYM_MAX_MODULES) {
		set->over = true;
		return;
	}
	*k = m;
	set->nr++;
}

struct code_text {
	struct code_files *set;
	char *out;
	size_t len;
};

static void keep_code(const char *line, size_t n, void *arg)
{
	struct code_text *t = arg;
	struct cp_map m;

	if (!parse_kept(line, n, &m) || (m.inode && !code_slot(t->set, &m)->inode))
		return;
	memcpy(t->out + t->len, line, n);
	t->len += n;
	t->out[t->len++] = '\n';
}

/*
 * What of @text libdwfl is given (*@out, @len bytes; free() it): the lines
 * of files with code (an executable mapping), CP_SYM_MAX_MODULES files at
 * most in the text's order, and the [vdso]. libdwfl walks its modules at
 * each file it reports, and finds a file for each: a tenant's 60,000
 * mapped one-page files held a snapshot 18 s; anonymous memory and data
 * files name no code.
 */
static int code_text(const char *text, size_t len, char **out, size_t *out_len)
{
	struct code_files *set = calloc(1, sizeof(*set));
	struct code_text t = {.set = set, .out = malloc(len + 1)};

	if (!set || !t.out) {
		free(set);
		free(t.out);
		return -ENOMEM;
	}
	each_line(text, len, note_code, set);
	if (set->over)
		cp_tf_count(CP_TF_MODULE_CAP);
	each_line(text, len, keep_code, &t);
	free(set);
	*out = t.out;
	*out_len = t.len;
	return 0;
}

int cp_sym_dwfl_process(pid_t pid, const char *text, size_t len, const struct cp_maps *maps,
			const struct cp_path_map *path_map, Dwfl **out)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);
	size_t code_len;
	char *code;
	FILE *f;
	int r;

	if (!dwfl)
		return -ENOMEM;
	r = code_text(text, len, &code, &code_len);
	if (r) {
		dwfl_end(dwfl);
		return r;
	}
	/* libdwfl's own reader of /proc/PID/maps has no byte cap: the caller's text has */
	f = code_len ? fmemopen(code, code_len, "r") : NULL;
	if (!f && code_len) {
		r = -errno;
		free(code);
		dwfl_end(dwfl);
		return r;
	}
	dwfl_report_begin(dwfl);
	/* no file with code (all of it in anonymous memory): a Dwfl of no module */
	r = f ? dwfl_linux_proc_maps_report(dwfl, f) : 0;
	if (f)
		fclose(f);
	free(code);
	if (dwfl_report_end(dwfl, NULL, NULL) && !r)
		r = -1;
	if (r) {
		dwfl_end(dwfl);
		/* positive: an errno; -1: a libdwfl error */
		return r == ENOENT || r == ESRCH ? -ESRCH : r > 0 ? -r : -EIO;
	}
	opening_pid = pid;
	opening_map = path_map;
	opening_maps = maps;
	opening_modules = 0;
	cp_sym_dwfl_take_waited();
	dwfl_getmodules(dwfl, open_module, NULL, 0);
	opening_pid = 0;
	opening_map = NULL;
	opening_maps = NULL;
	/* kept, a module whose file waited would stay nameless: none is kept yet */
	if (cp_sym_dwfl_take_waited()) {
		dwfl_end(dwfl); /* nothing described in it yet */
		return -EAGAIN;
	}
	*out = dwfl;
	return 0;
}

int cp_sym_dwfl_file(const char *path, int fd, Dwfl **out, Dwfl_Module **mod)
{
	return cp_sym_dwfl_placed(path, fd, 0, out, mod);
}

int cp_sym_dwfl_placed(const char *path, int fd, __u64 base, Dwfl **out, Dwfl_Module **mod)
{
	Dwfl *dwfl;

	if (fd < 0)
		return fd;
	if (!cp_elf_native(fd)) {
		close(fd);
		return -ENOEXEC; /* readable but not ELF */
	}
	dwfl = dwfl_begin(&file_callbacks);
	if (!dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(dwfl);
	*mod = dwfl_report_elf(dwfl, path, path, fd, base, false);
	if (!*mod)
		close(fd);
	if (!*mod || dwfl_report_end(dwfl, NULL, NULL)) {
		dwfl_end(dwfl);
		return -ENOEXEC; /* readable but not ELF */
	}
	*out = dwfl;
	return 0;
}

int cp_sym_open_named(const char *path, bool follow)
{
	struct cp_tf_where w = {.path = path};
	struct cp_tf_want want = {.follow = follow};
	enum cp_tf_refusal why;

	return cp_elf_guard_open(&w, &want, &why);
}
