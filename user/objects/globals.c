// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Globals: pure placement rules first, then loading a process's modules, then lookups. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elf.h>

#include "objects/globals.h"

static __u64 page_down(__u64 x)
{
	return x & ~(CP_ELF_PAGE_SIZE - 1);
}

static bool exec_bit_matches(const struct cp_load_seg *s, const struct cp_map *m)
{
	return !!(s->flags & PF_X) == !!(m->prot & CP_MAP_EXEC);
}

int cp_load_bias(const struct cp_load_seg *segs, size_t nr_segs, const struct cp_map *const *maps,
		 size_t nr_maps, __u64 *bias)
{
	/* pass 0: a segment starts at the mapping's offset; pass 1: one contains it */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nr_maps; i++) {
			const struct cp_map *m = maps[i];
			const struct cp_load_seg *best = NULL;

			for (size_t k = 0; k < nr_segs; k++) {
				const struct cp_load_seg *s = &segs[k];
				bool hit;

				if (!s->filesz) /* all .bss: mapped anonymously */
					continue;
				if (pass == 0)
					hit = page_down(s->offset) == m->offset;
				else
					hit = page_down(s->offset) <= m->offset &&
					      m->offset < s->offset + s->filesz;
				if (hit && (!best ||
					    (exec_bit_matches(s, m) && !exec_bit_matches(best, m))))
					best = s;
			}
			if (best) {
				/* modulo 2^64: the offset difference may be negative */
				*bias = m->start - best->vaddr + best->offset - m->offset;
				return 0;
			}
		}
	}
	return -ENOENT;
}

__u64 cp_tls_exec_offset(__u64 memsz, __u64 align, __u64 vaddr)
{
	__u64 firstbyte, len;

	if (!align)
		align = 1;
	firstbyte = (0 - (vaddr & (align - 1))) & (align - 1);
	len = memsz - firstbyte;
	return (len + align - 1) / align * align + firstbyte;
}

/*
 * The symbols of the file behind mapping @m, found as target_file.h finds
 * what a target names (map_files, else its root; the very file mapped,
 * never a FIFO or a symlink out of its root), or where --path-map moved
 * it: a copy has an inode of its own, and the replay checks its build-id
 * instead. A file the cache holds is not opened for reading: every process
 * of a build maps the same libraries. -ENOENT when it cannot be found.
 */
static int module_syms(struct cp_elf_cache *cache, const char *proc_root, pid_t pid,
		       const struct cp_map *m, const struct cp_path_map *map,
		       const struct cp_elf_syms **elf)
{
	char path[PATH_MAX];
	const char *at = cp_path_map_apply(map, m->path, path, sizeof(path));
	struct cp_tf_where w;
	struct cp_tf_want want;
	enum cp_tf_refusal why;
	struct cp_copy_key key;
	struct cp_tf_stat st;
	int pfd, fd, err;

	if (!at)
		return -ENOENT;
	cp_map_target_file(m, proc_root, pid, &w, &want);
	if (at != m->path) {
		w = (struct cp_tf_where){.path = at};
		want = (struct cp_tf_want){.follow = true};
	}
	/* found lately and held: nothing opened */
	if (cp_tf_seen(&want, &st, &key) && !cp_elf_cache__find_key(cache, &key, elf))
		return 0;
	pfd = cp_tf_find(&w, &want, &st, &why);
	if (pfd < 0)
		return -ENOENT;
	err = cp_elf_cache__find(cache, pfd, elf);
	if (err == -ENOENT) {
		fd = cp_tf_reopen(pfd, &st, &why);
		err = fd < 0 ? -ENOENT : cp_elf_cache__get(cache, fd, elf);
		if (fd >= 0)
			close(fd);
	}
	close(pfd);
	return err;
}

static int by_start(const void *a, const void *b)
{
	const struct cp_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void module_span(struct cp_module *mod)
{
	const struct cp_elf_syms *e = mod->elf;
	__u64 lo = UINT64_MAX, hi = 0;

	for (size_t k = 0; k < e->nr_segs; k++) {
		if (page_down(e->segs[k].vaddr) < lo)
			lo = page_down(e->segs[k].vaddr);
		if (e->segs[k].vaddr + e->segs[k].memsz > hi)
			hi = e->segs[k].vaddr + e->segs[k].memsz;
	}
	mod->start = lo + mod->bias;
	mod->end = hi + mod->bias;
}

/* Places the file of @group[0], its lowest mapping, using all @ng of the file's. */
static int place_module(struct cp_globals *g, const struct cp_map *const *group, size_t ng,
			const char *proc_root, pid_t pid, const struct cp_path_map *map)
{
	const struct cp_map *m = group[0];
	const struct cp_elf_syms *elf;
	struct cp_module *mod;
	__u64 bias;
	int err;

	/* gone or unreadable: its addresses classify as a mapping */
	err = module_syms(g->cache, proc_root, pid, m, map, &elf);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (!elf->is_elf || !elf->nr_segs ||
	    cp_load_bias(elf->segs, elf->nr_segs, group, ng, &bias))
		goto skip;
	mod = &g->mods[g->nr];
	memset(mod, 0, sizeof(*mod));
	mod->path = strdup(m->path);
	if (!mod->path) {
		cp_elf_cache__put(g->cache, elf);
		return -ENOMEM;
	}
	mod->elf = elf;
	mod->bias = bias;
	mod->inode = m->inode;
	module_span(mod);
	g->nr++;
	return 0;
skip:
	cp_elf_cache__put(g->cache, elf);
	return 0;
}

static bool same_file(const struct cp_map *a, const struct cp_map *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
}

/* File mappings in file order (device, inode), each file's in address order. */
static int by_file(const void *a, const void *b)
{
	const struct cp_map *x = *(const struct cp_map *const *)a;
	const struct cp_map *y = *(const struct cp_map *const *)b;

	if (x->dev_major != y->dev_major)
		return x->dev_major < y->dev_major ? -1 : 1;
	if (x->dev_minor != y->dev_minor)
		return x->dev_minor < y->dev_minor ? -1 : 1;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Files in address order (their lowest mapping's). */
static int by_first_map(const void *a, const void *b)
{
	const struct cp_map *const *x = *(const struct cp_map *const *const *)a;
	const struct cp_map *const *y = *(const struct cp_map *const *const *)b;

	return *x < *y ? -1 : *x > *y;
}

/* Whether any of a file's @ng mappings can hold a variable or the code that names one. */
static bool may_hold_globals(const struct cp_map *const *group, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		if (group[i]->prot & (CP_MAP_WRITE | CP_MAP_EXEC))
			return true;
	return false;
}

/*
 * The modules of @maps: its files grouped in one sort (a tenant's 60,000
 * mapped files were a scan of every mapping per file), those with no
 * writable or executable mapping (data files) never opened, at most
 * CP_GLOBALS_MAX_FILES files read, in address order, the rest counted.
 */
static int place_modules(struct cp_globals *g, const struct cp_maps *maps, const char *proc_root,
			 pid_t pid, const struct cp_path_map *map)
{
	const struct cp_map **files = calloc(maps->nr, sizeof(*files));
	const struct cp_map *const **starts = calloc(maps->nr, sizeof(*starts));
	size_t n = 0, nf = 0, read = 0;
	int err = files && starts ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < maps->nr; i++)
		if (maps->maps[i].kind == CP_MAP_FILE && maps->maps[i].inode)
			files[n++] = &maps->maps[i];
	if (!err)
		qsort(files, n, sizeof(*files), by_file);
	for (size_t i = 0; !err && i < n; i++)
		if (!i || !same_file(files[i - 1], files[i]))
			starts[nf++] = &files[i];
	if (!err)
		qsort(starts, nf, sizeof(*starts), by_first_map);
	for (size_t f = 0; !err && f < nf; f++) {
		const struct cp_map *const *group = starts[f];
		size_t ng = 1;

		while (group + ng < files + n && same_file(group[ng], group[0]))
			ng++;
		if (!may_hold_globals(group, ng))
			continue;
		if (read++ == CP_GLOBALS_MAX_FILES) {
			cp_tf_count(CP_TF_MODULE_CAP);
			break;
		}
		err = place_module(g, group, ng, proc_root, pid, map);
	}
	free(files);
	free(starts);
	return err;
}

int cp_globals__load(struct cp_elf_cache *cache, const struct cp_maps *maps, const char *proc_root,
		     pid_t pid, const struct cp_path_map *map, struct cp_globals **out)
{
	struct cp_globals *g = calloc(1, sizeof(*g));
	char exe[PATH_MAX];
	struct stat st;
	__u64 exe_ino = 0;
	int err = -ENOMEM;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	g->cache = cache;
	if (!proc_root)
		proc_root = "/proc";
	if (!maps->nr)
		goto ok;
	g->mods = calloc(maps->nr, sizeof(*g->mods));
	if (!g->mods)
		goto cleanup;
	err = place_modules(g, maps, proc_root, pid, map);
	if (err)
		goto cleanup;
	qsort(g->mods, g->nr, sizeof(*g->mods), by_start);
	/* the executable matters for its TLS alone: asked of /proc only when a module has one */
	for (size_t i = 0; i < g->nr && !exe_ino; i++) {
		if (!g->mods[i].elf->has_tls)
			continue;
		snprintf(exe, sizeof(exe), "%s/%d/exe", proc_root, (int)pid);
		exe_ino = stat(exe, &st) ? ~0ull : st.st_ino;
	}
	for (size_t i = 0; i < g->nr && exe_ino; i++) {
		struct cp_module *mod = &g->mods[i];

		if (mod->inode != exe_ino || !mod->elf->has_tls)
			continue;
		mod->is_exec = true;
		g->exec = mod;
		if (mod->elf->has_tls)
			g->exec_tls_offset = cp_tls_exec_offset(
				mod->elf->tls_memsz, mod->elf->tls_align, mod->elf->tls_vaddr);
		break;
	}
ok:
	*out = g;
	return 0;
cleanup:
	cp_globals__free(g);
	return err;
}

void cp_globals__free(struct cp_globals *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nr; i++) {
		cp_elf_cache__put(g->cache, g->mods[i].elf);
		free((char *)g->mods[i].path);
	}
	free(g->mods);
	free(g);
}

const struct cp_module *cp_globals_module(const struct cp_globals *g, __u64 addr)
{
	size_t lo = 0, hi = g ? g->nr : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < g->mods[mid].start)
			hi = mid;
		else if (addr >= g->mods[mid].end)
			lo = mid + 1;
		else
			return &g->mods[mid];
	}
	return NULL;
}

int cp_globals_find(const struct cp_globals *g, __u64 addr, struct cp_global_hit *out)
{
	const struct cp_module *mod = cp_globals_module(g, addr);
	const struct cp_symbol *sym;

	if (!mod)
		return -ENOENT;
	sym = cp_elf_syms__find(mod->elf, addr - mod->bias);
	if (!sym)
		return -ENOENT;
	out->kind = CP_OBJ_GLOBAL;
	out->sym = sym;
	out->mod = mod;
	out->start = sym->value + mod->bias;
	out->offset = addr - out->start;
	return 0;
}

int cp_globals_tls_find(const struct cp_globals *g, __u64 tp, __u64 addr, struct cp_global_hit *out)
{
	const struct cp_symbol *sym;
	__u64 block;

	if (!g || !g->exec || !g->exec->elf->has_tls || tp < g->exec_tls_offset)
		return -ENOENT;
	block = tp - g->exec_tls_offset;
	if (addr < block || addr - block >= g->exec->elf->tls_memsz)
		return -ENOENT;
	sym = cp_elf_syms__tls_find(g->exec->elf, addr - block);
	if (!sym)
		return -ENOENT;
	out->kind = CP_OBJ_TLS;
	out->sym = sym;
	out->mod = g->exec;
	out->start = block + sym->value;
	out->offset = addr - out->start;
	return 0;
}
