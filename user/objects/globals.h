/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Global and thread-local variables of one process (paper §3.4: "CachePerf
 * obtains the name and address range by analyzing the corresponding ELF
 * header"). Every ELF file in /proc/PID/maps (the executable and each shared
 * object) becomes a module placed at its load bias; an address inside a
 * module's span is looked up in its symbols, O(log n).
 *
 * Thread-locals: a __thread variable has one address per thread, so ELF
 * gives only its offset in the module's TLS block. Where that block sits is
 * known for the executable alone: on x86-64 (TLS variant II) the
 * executable is TLS module 1 and its block ends at the thread pointer, at a
 * distance fixed by its PT_TLS header (glibc _dl_determine_tlsoffset). So
 * given a thread's pointer (fs base), the executable's thread-locals
 * resolve; shared objects' blocks are placed by ld.so at run time (static
 * TLS in load order, dynamic TLS in malloc'd memory) and are not resolved:
 * their addresses classify as stack or anonymous memory. Offsets within any
 * module's block can still be named with cp_elf_syms__tls_find().
 */
#ifndef CP_GLOBALS_H
#define CP_GLOBALS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "objects/elf_syms.h"
#include "objects/object_store.h"
#include "objects/proc_maps.h"
#include "util/path_map.h"

#define CP_ELF_PAGE_SIZE 4096ull /* the kernel maps segments at page granularity */
/*
 * Files read for a process's globals, in address order: an ordinary
 * process maps tens, a large service a few hundred; a tenant's 60,000
 * one-page files mapped executable held a snapshot for seconds. The rest
 * is counted (CP_TF_MODULE_CAP) and its addresses classify as mappings.
 */
#define CP_GLOBALS_MAX_FILES 512

/* One ELF file placed in a process. */
struct cp_module {
	__u64 start; /* runtime span of its PT_LOAD segments, .bss included */
	__u64 end;
	__u64 bias; /* runtime address - link-time address */
	__u64 inode;
	bool is_exec; /* the main executable, when it has TLS (module 1) */
	const struct cp_elf_syms *elf;
	const char *path; /* as /proc/PID/maps names it */
};

struct cp_globals {
	struct cp_module *mods; /* sorted by start, spans disjoint */
	size_t nr;
	const struct cp_module *exec; /* NULL if not found, or without TLS */
	__u64 exec_tls_offset;	      /* thread pointer - start of the executable's TLS block */
	struct cp_elf_cache *cache;
};

/* A variable an address falls in. */
struct cp_global_hit {
	enum cp_obj_kind kind; /* CP_OBJ_GLOBAL or CP_OBJ_TLS */
	const struct cp_symbol *sym;
	const struct cp_module *mod;
	__u64 start;  /* runtime address (TLS: this thread's copy) */
	__u64 offset; /* address - start */
};

/*
 * The load bias of a module from its PT_LOAD headers and the mappings of its
 * file (in address order): the first mapping whose offset is a segment's
 * page-aligned file offset places that segment (mappings split later by
 * mprotect, e.g. RELRO, are matched by containment only if nothing matches
 * exactly; the execute bit breaks ties between segments sharing a page, as in
 * old two-segment layouts). bias = map start - (p_vaddr - (p_offset - map
 * offset)). Returns 0, or -ENOENT when no mapping corresponds to a segment.
 */
int cp_load_bias(const struct cp_load_seg *segs, size_t nr_segs, const struct cp_map *const *maps,
		 size_t nr_maps, __u64 *bias);

/*
 * How far below the thread pointer the executable's TLS block starts, for a
 * PT_TLS of @memsz bytes, alignment @align, at link-time address @vaddr:
 * glibc's TLS_TCB_AT_TP rule for the first module,
 * roundup(memsz - firstbyte, align) + firstbyte, firstbyte = -vaddr mod align.
 */
__u64 cp_tls_exec_offset(__u64 memsz, __u64 align, __u64 vaddr);

/*
 * Places every ELF file mapped in @maps (a snapshot of @pid), reading each
 * through @cache (files are opened via /proc/PID/map_files, then
 * /proc/PID/root/PATH, then PATH, and must match the mapping's inode; a
 * PATH that @map moves (report --path-map; NULL: none) is opened where it
 * points, whatever its inode). Files that cannot be read are skipped.
 * @proc_root NULL means "/proc". Returns 0 or -ENOMEM.
 */
int cp_globals__load(struct cp_elf_cache *cache, const struct cp_maps *maps, const char *proc_root,
		     pid_t pid, const struct cp_path_map *map, struct cp_globals **out);
void cp_globals__free(struct cp_globals *g);

/* The module whose span holds @addr, or NULL. */
const struct cp_module *cp_globals_module(const struct cp_globals *g, __u64 addr);

/* The global variable holding @addr. Returns 0 or -ENOENT. */
int cp_globals_find(const struct cp_globals *g, __u64 addr, struct cp_global_hit *out);

/*
 * The executable's thread-local variable holding @addr in the TLS block of
 * the thread whose thread pointer is @tp. Returns 0 or -ENOENT.
 */
int cp_globals_tls_find(const struct cp_globals *g, __u64 tp, __u64 addr,
			struct cp_global_hit *out);

#endif /* CP_GLOBALS_H */
