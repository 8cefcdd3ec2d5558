// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "machine/copy_cache.h"
#include "machine/elf_bounds.h"
#include "machine/target_file.h"
#include "objects/allocator.h"
#include "util/path.h"

#define CP_MAX_PHDRS 64

static const char *const fn_names[CP_FN_NR_PROBED] = {
	[CP_FN_MALLOC] = "malloc",
	[CP_FN_CALLOC] = "calloc",
	[CP_FN_REALLOC] = "realloc",
	[CP_FN_REALLOCARRAY] = "reallocarray",
	[CP_FN_FREE] = "free",
	[CP_FN_POSIX_MEMALIGN] = "posix_memalign",
	[CP_FN_ALIGNED_ALLOC] = "aligned_alloc",
	[CP_FN_MEMALIGN] = "memalign",
	[CP_FN_VALLOC] = "valloc",
	[CP_FN_PVALLOC] = "pvalloc",
	[CP_FN_NEW] = "_Znwm",
	[CP_FN_NEW_ARRAY] = "_Znam",
	[CP_FN_NEW_NOTHROW] = "_ZnwmRKSt9nothrow_t",
	[CP_FN_NEW_ARRAY_NOTHROW] = "_ZnamRKSt9nothrow_t",
	[CP_FN_NEW_ALIGNED] = "_ZnwmSt11align_val_t",
	[CP_FN_NEW_ARRAY_ALIGNED] = "_ZnamSt11align_val_t",
	[CP_FN_NEW_ALIGNED_NOTHROW] = "_ZnwmSt11align_val_tRKSt9nothrow_t",
	[CP_FN_NEW_ARRAY_ALIGNED_NOTHROW] = "_ZnamSt11align_val_tRKSt9nothrow_t",
	[CP_FN_DELETE] = "_ZdlPv",
	[CP_FN_DELETE_ARRAY] = "_ZdaPv",
	[CP_FN_DELETE_SIZED] = "_ZdlPvm",
	[CP_FN_DELETE_ARRAY_SIZED] = "_ZdaPvm",
	[CP_FN_DELETE_NOTHROW] = "_ZdlPvRKSt9nothrow_t",
	[CP_FN_DELETE_ARRAY_NOTHROW] = "_ZdaPvRKSt9nothrow_t",
	[CP_FN_DELETE_ALIGNED] = "_ZdlPvSt11align_val_t",
	[CP_FN_DELETE_ARRAY_ALIGNED] = "_ZdaPvSt11align_val_t",
	[CP_FN_DELETE_SIZED_ALIGNED] = "_ZdlPvmSt11align_val_t",
	[CP_FN_DELETE_ARRAY_SIZED_ALIGNED] = "_ZdaPvmSt11align_val_t",
	[CP_FN_DELETE_ALIGNED_NOTHROW] = "_ZdlPvSt11align_val_tRKSt9nothrow_t",
	[CP_FN_DELETE_ARRAY_ALIGNED_NOTHROW] = "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* Prefixes by rank: allocators that do not replace malloc export only these. */
static const char *const prefixes[] = {"", "je_", "tc_", "mi_"};

static const char *const kind_names[CP_ALLOCATOR_NR] = {
	[CP_ALLOCATOR_LIBC] = "libc",	      [CP_ALLOCATOR_JEMALLOC] = "jemalloc",
	[CP_ALLOCATOR_TCMALLOC] = "tcmalloc", [CP_ALLOCATOR_MIMALLOC] = "mimalloc",
	[CP_ALLOCATOR_EXEC] = "executable",
};

const char *cp_allocator_kind_name(enum cp_allocator_kind kind)
{
	return (unsigned int)kind < CP_ALLOCATOR_NR ? kind_names[kind] : "?";
}

const char *cp_alloc_func_name(enum cp_alloc_func func)
{
	return (unsigned int)func < CP_FN_NR_PROBED ? fn_names[func] : NULL;
}

bool cp_alloc_func_is_cxx(enum cp_alloc_func func)
{
	return func >= CP_FN_NEW && func < CP_FN_NR_PROBED;
}

bool cp_alloc_func_throws(enum cp_alloc_func func)
{
	switch (func) {
	case CP_FN_NEW:
	case CP_FN_NEW_ARRAY:
	case CP_FN_NEW_ALIGNED:
	case CP_FN_NEW_ARRAY_ALIGNED:
		return true;
	default:
		return false;
	}
}

bool cp_alloc_func_frees(enum cp_alloc_func func)
{
	return func == CP_FN_FREE || (func >= CP_FN_DELETE && func < CP_FN_NR_PROBED);
}

/*
 * Whether @name (the symbol past its prefix) starts as @fn does: the first
 * four bytes, every probed name has them. Most symbols of a big binary
 * differ there (a C++ one's "_ZN"), so the full compare is rare.
 */
static bool same_head(const char *name, const char *fn)
{
	return name[0] == fn[0] && name[1] == fn[1] && name[2] == fn[2] && name[3] == fn[3];
}

bool cp_alloc_func_match(const char *sym, enum cp_alloc_func *func, int *rank)
{
	int r = 0;

	/* no probed name starts as a prefix does: the first that matches is the one */
	for (size_t p = 1; p < sizeof(prefixes) / sizeof(prefixes[0]); p++)
		if (sym[0] == prefixes[p][0] && sym[1] == prefixes[p][1] && sym[2] == '_') {
			r = (int)p;
			sym += 3;
			break;
		}
	for (int f = 0; f < CP_FN_NR_PROBED; f++) {
		/* mangled C++ names have no prefixed variants */
		if (!same_head(sym, fn_names[f]) || (r && cp_alloc_func_is_cxx(f)) ||
		    strcmp(sym + 4, fn_names[f] + 4))
			continue;
		*func = f;
		*rank = r;
		return true;
	}
	return false;
}

enum cp_allocator_kind cp_allocator_kind_of(const char *path)
{
	const char *base = cp_base_name(path);

	if (strstr(base, "jemalloc"))
		return CP_ALLOCATOR_JEMALLOC;
	if (strstr(base, "tcmalloc"))
		return CP_ALLOCATOR_TCMALLOC;
	if (strstr(base, "mimalloc"))
		return CP_ALLOCATOR_MIMALLOC;
	return CP_ALLOCATOR_LIBC;
}

static bool is_libc(const char *path)
{
	const char *base = cp_base_name(path);

	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

/* A dynamic loader's file name: ld-linux-x86-64.so.2, ld-musl-x86_64.so.1, ld.so. */
static bool is_loader(const char *path)
{
	const char *base = cp_base_name(path);

	return (!strncmp(base, "ld-", 3) || !strncmp(base, "ld.", 3)) && strstr(base, ".so");
}

const struct cp_map *cp_allocator_loader(const struct cp_maps *m)
{
	for (size_t i = 0; i < m->nr; i++)
		if (m->maps[i].kind == CP_MAP_FILE && is_loader(m->maps[i].path))
			return &m->maps[i];
	return NULL;
}

bool cp_allocator_loading(const struct cp_maps *m)
{
	const char *exe = NULL;
	bool loader = false;

	for (size_t i = 0; i < m->nr; i++) {
		const struct cp_map *mp = &m->maps[i];

		if (mp->kind != CP_MAP_FILE || !(mp->prot & CP_MAP_EXEC))
			continue;
		if (is_loader(mp->path)) {
			loader = true;
			continue;
		}
		/* the first other file is taken for the executable, a second is a library */
		if (exe && strcmp(mp->path, exe))
			return false;
		exe = mp->path;
	}
	return loader;
}

enum cp_allocator_kind cp_allocator_of_maps(const struct cp_maps *m, bool *glibc)
{
	bool libc = false;

	*glibc = false;
	for (size_t i = 0; m && i < m->nr; i++) {
		const struct cp_map *mp = &m->maps[i];
		const char *base;
		enum cp_allocator_kind k;

		if (mp->kind != CP_MAP_FILE || !(mp->prot & CP_MAP_EXEC))
			continue;
		k = cp_allocator_kind_of(mp->path);
		if (k != CP_ALLOCATOR_LIBC) {
			*glibc = false;
			return k;
		}
		base = cp_base_name(mp->path);
		if (!strncmp(base, "libc.so.6", 9) || !strncmp(base, "libc-2.", 7)) {
			libc = true;
			*glibc = true;
		} else if (is_libc(mp->path)) {
			libc = true;
		}
	}
	return libc ? CP_ALLOCATOR_LIBC : CP_ALLOCATOR_EXEC;
}

int cp_allocator_pick(const struct cp_alloc_candidate *c, size_t n)
{
	/* lookup order: the executable, then a replacement allocator, then libc */
	for (size_t i = 0; i < n; i++)
		if (c[i].is_exec && c[i].defines_malloc)
			return (int)i;
	for (size_t i = 0; i < n; i++)
		if (!c[i].is_exec && cp_allocator_kind_of(c[i].path) != CP_ALLOCATOR_LIBC &&
		    c[i].defines_malloc)
			return (int)i;
	for (size_t i = 0; i < n; i++)
		if (!c[i].is_exec && c[i].defines_malloc)
			return (int)i;
	return -1;
}

/* Link-time address -> file offset through the PT_LOAD headers. */
static bool vaddr_to_off(const GElf_Phdr *ph, size_t n, __u64 vaddr, __u64 *off)
{
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD || vaddr < ph[i].p_vaddr ||
		    vaddr >= ph[i].p_vaddr + ph[i].p_filesz)
			continue;
		*off = vaddr - ph[i].p_vaddr + ph[i].p_offset;
		return true;
	}
	return false;
}

/* Fills out->fns from the symbol tables of the ELF file open at @fd. */
static int read_fns(int fd, struct cp_allocator *out)
{
	int ranks[CP_FN_NR_PROBED];
	GElf_Phdr ph[CP_MAX_PHDRS];
	size_t nph = 0, shstrndx, tables[2] = {0};
	Elf_Scn *scn = NULL;
	int err = 0;
	Elf *elf;

	memset(out->fns, 0, sizeof(out->fns));
	for (int f = 0; f < CP_FN_NR_PROBED; f++)
		ranks[f] = 1 << 30;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) ||
	    elf_getshdrstrndx(elf, &shstrndx)) {
		err = -EINVAL;
		goto cleanup;
	}
	if (nph > CP_MAX_PHDRS)
		nph = CP_MAX_PHDRS;
	for (size_t i = 0; i < nph; i++)
		if (!gelf_getphdr(elf, (int)i, &ph[i]))
			memset(&ph[i], 0, sizeof(ph[i]));
	while ((scn = elf_nextscn(elf, scn))) {
		struct cp_elf_strtab names;
		Elf_Data *data = NULL;
		GElf_Shdr sh;

		/* a linker's one table of each kind, read in place (elf_bounds.h) */
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    tables[sh.sh_type == SHT_DYNSYM]++ || !cp_elf_in_place(elf, &sh) ||
		    cp_elf_strtab(elf, sh.sh_link, &names))
			continue;
		while ((data = elf_getdata(scn, data))) {
			size_t nsyms = data->d_size / sh.sh_entsize;

			for (size_t i = 0; i < nsyms; i++) {
				enum cp_alloc_func f;
				const char *name;
				struct cp_alloc_fn *fn;
				GElf_Sym sym;
				int rank;

				if (!gelf_getsym(data, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF || !sym.st_value)
					continue;
				name = cp_elf_strtab_name(&names, sym.st_name);
				if (!name || !cp_alloc_func_match(name, &f, &rank) ||
				    rank >= ranks[f])
					continue;
				fn = &out->fns[f];
				if (!vaddr_to_off(ph, nph, sym.st_value, &fn->file_off))
					continue;
				ranks[f] = rank;
				fn->found = true;
				fn->vaddr = sym.st_value;
				fn->size = sym.st_size;
				snprintf(fn->name, sizeof(fn->name), "%s", name);
			}
		}
	}
	if (!out->fns[CP_FN_MALLOC].found)
		err = -ENOENT;
cleanup:
	elf_end(elf);
	return err;
}

/*
 * Only a replacement allocator's own operator new and delete are probed: in
 * libc's process or a static executable they are libstdc++'s, which call
 * malloc and free (probing both would cost twice for one object).
 */
static void keep_own_cxx(struct cp_allocator *out)
{
	if (out->kind != CP_ALLOCATOR_LIBC && out->kind != CP_ALLOCATOR_EXEC)
		return;
	for (int f = CP_FN_NEW; f < CP_FN_NR_PROBED; f++)
		memset(&out->fns[f], 0, sizeof(out->fns[f]));
}

/*
 * The functions read from a file, by its content's key (copy_cache.h): a
 * build starts the same compiler and libc a thousand times, each read once.
 */
struct read_result {
	struct cp_alloc_fn fns[CP_FN_NR_PROBED];
	int err;
};

static pthread_mutex_t read_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cp_copy_cache read_keys;
static struct read_result read_results[CP_COPY_CACHE_ENTRIES];
static bool read_ready;

/* Under read_lock. */
static void read_init(void)
{
	if (!read_ready)
		cp_copy_cache_init(&read_keys, CP_COPY_CACHE_ENTRIES, CP_COPY_CACHE_ENTRIES);
	read_ready = true;
}

/* What was read from the content of @key into @out; false when it was not. */
static bool read_again(const struct cp_copy_key *key, struct cp_allocator *out, int *err)
{
	int slot;

	pthread_mutex_lock(&read_lock);
	read_init();
	slot = cp_copy_cache_find(&read_keys, key);
	if (slot >= 0) {
		memcpy(out->fns, read_results[slot].fns, sizeof(out->fns));
		*err = read_results[slot].err;
	}
	pthread_mutex_unlock(&read_lock);
	return slot >= 0;
}

/* Keeps what was read from the content of @key (one "byte" each: bounded by entries). */
static void read_keep(const struct cp_copy_key *key, const struct cp_allocator *a, int err)
{
	int out[CP_COPY_CACHE_ENTRIES], slot;
	size_t n;

	pthread_mutex_lock(&read_lock);
	read_init();
	slot = cp_copy_cache_make_room(&read_keys, 1, out, &n);
	if (slot >= 0) {
		memcpy(read_results[slot].fns, a->fns, sizeof(a->fns));
		read_results[slot].err = err;
		cp_copy_cache_put(&read_keys, slot, key, slot, 1);
	}
	pthread_mutex_unlock(&read_lock);
}

/* A sealed copy of @w's file (target_file.h), to read, never mmapped itself. */
static int open_copy(const struct cp_tf_where *w, const struct cp_tf_want *want)
{
	enum cp_tf_refusal why;
	struct cp_tf_stat st;
	int fd = cp_tf_open_copy(w, want, &st, &why);

	return fd < 0 && why == CP_TF_GONE ? -ENOENT : fd;
}

/*
 * Reads the functions from a sealed copy of @w's file (target_file.h):
 * never mmapped itself; a content read before is not read again.
 */
static int read_fns_at(const struct cp_tf_where *w, const struct cp_tf_want *want,
		       struct cp_allocator *out)
{
	enum cp_tf_refusal why;
	struct cp_copy_key key;
	struct cp_tf_stat st;
	int pfd, fd, mfd, err;

	/*
	 * found lately, and read before as no allocator's: nothing opened (the
	 * executable of every process of a build). A file that holds one gets
	 * its look: a file rebuilt since at the same inode would have its
	 * probes placed at the old content's offsets.
	 */
	if (cp_tf_seen(want, &st, &key) && read_again(&key, out, &err) && err)
		return err;
	pfd = cp_tf_find(w, want, &st, &why);
	if (pfd < 0)
		return why == CP_TF_GONE ? -ENOENT : pfd;
	/* read before: not opened for reading at all (every process of a build maps libc) */
	if (!cp_tf_key(pfd, &key) && read_again(&key, out, &err)) {
		close(pfd);
		return err;
	}
	fd = cp_tf_reopen(pfd, &st, &why);
	close(pfd);
	if (fd < 0)
		return fd;
	mfd = cp_tf_copy_keyed(fd, st.size, false, &key, &why);
	close(fd);
	if (mfd < 0)
		return mfd;
	err = read_fns(mfd, out);
	close(mfd);
	/* the key of the content copied: a failure of this run's own (memory) is not kept */
	if (key.ino && err != -ENOMEM)
		read_keep(&key, out, err);
	return err;
}

/* Where @a's file is and what it must be, for cp_tf_open(). */
static void alloc_where(const struct cp_allocator *a, struct cp_tf_where *w,
			struct cp_tf_want *want)
{
	*w = (struct cp_tf_where){
		.proc_root = a->proc_root[0] ? a->proc_root : NULL,
		.pid = a->pid,
		.path = a->path,
		.start = a->map_start,
		.end = a->map_end,
	};
	*want = (struct cp_tf_want){
		.ino = a->inode,
		.dev_major = a->dev_major,
		.dev_minor = a->dev_minor,
		.follow = !a->pid, /* a path the profiler itself named */
	};
}

int cp_allocator_open(const struct cp_allocator *a)
{
	struct cp_tf_where w;
	struct cp_tf_want want;
	enum cp_tf_refusal why;
	struct cp_tf_stat st;

	alloc_where(a, &w, &want);
	return cp_tf_open(&w, &want, &st, &why);
}

int cp_allocator_open_copy(const struct cp_allocator *a)
{
	struct cp_tf_where w;
	struct cp_tf_want want;

	alloc_where(a, &w, &want);
	return open_copy(&w, &want);
}

int cp_allocator__from_file(const char *path, struct cp_allocator *out)
{
	struct cp_tf_where w;
	struct cp_tf_want want;
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", path);
	out->kind = cp_allocator_kind_of(path);
	alloc_where(out, &w, &want);
	err = read_fns_at(&w, &want, out);
	keep_own_cxx(out);
	return err;
}

/* Distinct executable file mappings, in address order, the main executable flagged. */
static size_t collect_files(const struct cp_maps *m, const char *exe, const struct cp_map **files,
			    struct cp_alloc_candidate *c, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr && n < max; i++) {
		const struct cp_map *mp = &m->maps[i];
		bool dup = false;

		if (mp->kind != CP_MAP_FILE || !(mp->prot & CP_MAP_EXEC) || mp->deleted)
			continue;
		for (size_t j = 0; j < n && !dup; j++)
			dup = !strcmp(c[j].path, mp->path);
		if (dup)
			continue;
		files[n] = mp;
		c[n].path = mp->path;
		c[n].is_exec = exe && !strcmp(exe, mp->path);
		c[n].defines_malloc = false;
		n++;
	}
	return n;
}

#define CP_MAX_ALLOC_FILES 512
#define CP_MAX_READ_FILES  8 /* candidates read whose functions are kept for the pick */

/* What a candidate's file gave: the pick's functions are not read twice. */
struct read_kept {
	size_t idx;
	int err;
	struct cp_alloc_fn fns[CP_FN_NR_PROBED];
};

/* @a's file: mapping @mp of @pid, found through @proc_root. */
static void set_file(struct cp_allocator *a, const char *proc_root, pid_t pid,
		     const struct cp_map *mp)
{
	snprintf(a->path, sizeof(a->path), "%s", mp->path);
	snprintf(a->proc_root, sizeof(a->proc_root), "%s", proc_root);
	a->pid = pid;
	a->map_start = mp->start;
	a->map_end = mp->end;
	a->inode = mp->inode;
	a->dev_major = mp->dev_major;
	a->dev_minor = mp->dev_minor;
}

bool cp_alloc_probed_is(const struct cp_alloc_probed *p, __u32 major, __u32 minor, __u64 ino)
{
	return p && ino && makedev(major, minor) == p->dev && ino == p->ino;
}

int cp_allocator__find(const char *proc_root, pid_t pid, bool early,
		       const struct cp_alloc_probed *probed, struct cp_allocator *out)
{
	const struct cp_map *files[CP_MAX_ALLOC_FILES];
	struct cp_alloc_candidate *c = NULL;
	char link[PATH_MAX], exe[PATH_MAX];
	struct cp_maps *m = NULL;
	struct cp_allocator *tmp = NULL;
	struct read_kept *kept = NULL;
	struct cp_tf_where w;
	struct cp_tf_want want;
	size_t n, nr_kept = 0, k;
	ssize_t len;
	int err, pick;

	if (!proc_root)
		proc_root = "/proc";
	err = cp_maps__read(proc_root, pid, &m);
	if (err)
		return err;
	/* the executable's symbols would be read for nothing: asked again */
	if (early && cp_allocator_loading(m)) {
		err = -EAGAIN;
		goto cleanup;
	}
	snprintf(link, sizeof(link), "%s/%d/exe", proc_root, (int)pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	c = calloc(CP_MAX_ALLOC_FILES, sizeof(*c));
	tmp = malloc(sizeof(*tmp));
	kept = malloc(CP_MAX_READ_FILES * sizeof(*kept));
	if (!c || !tmp || !kept) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = collect_files(m, exe, files, c, CP_MAX_ALLOC_FILES);
	for (size_t i = 0; i < n; i++) {
		/* only files that can hold the allocator are opened: cheap on big processes */
		if (!c[i].is_exec && !is_libc(c[i].path) &&
		    cp_allocator_kind_of(c[i].path) == CP_ALLOCATOR_LIBC)
			continue;
		/* -a: the libc of every process of the host, read when its probes were placed */
		if (cp_alloc_probed_is(probed, files[i]->dev_major, files[i]->dev_minor,
				       files[i]->inode)) {
			c[i].defines_malloc = true;
			continue;
		}
		set_file(tmp, proc_root, pid, files[i]);
		alloc_where(tmp, &w, &want);
		err = read_fns_at(&w, &want, tmp);
		c[i].defines_malloc = err == 0;
		if (nr_kept < CP_MAX_READ_FILES) {
			kept[nr_kept] = (struct read_kept){.idx = i, .err = err};
			memcpy(kept[nr_kept++].fns, tmp->fns, sizeof(tmp->fns));
		}
	}
	pick = cp_allocator_pick(c, n);
	if (pick < 0) {
		err = -ENOENT;
		goto cleanup;
	}
	memset(out, 0, sizeof(*out));
	set_file(out, proc_root, pid, files[pick]);
	out->kind = c[pick].is_exec ? CP_ALLOCATOR_EXEC : cp_allocator_kind_of(c[pick].path);
	for (k = 0; k < nr_kept && kept[k].idx != (size_t)pick; k++)
		;
	if (cp_alloc_probed_is(probed, files[pick]->dev_major, files[pick]->dev_minor,
			       files[pick]->inode)) {
		err = 0;
	} else if (k < nr_kept) {
		memcpy(out->fns, kept[k].fns, sizeof(out->fns));
		err = kept[k].err;
	} else {
		alloc_where(out, &w, &want);
		err = read_fns_at(&w, &want, out);
	}
	keep_own_cxx(out);
cleanup:
	free(kept);
	free(tmp);
	free(c);
	cp_maps__free(m);
	return err;
}

ssize_t cp_allocator_read_code(const char *path, __u64 off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}
