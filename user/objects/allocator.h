/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which mapped object implements a target's malloc, and where each probed
 * function is in that file. The program's calls to malloc bind to the first
 * definition in symbol lookup order, so: the executable itself when it
 * defines malloc (statically linked, or its own allocator), else a mapped
 * jemalloc / tcmalloc / mimalloc (preloaded or linked), else libc.
 * Functions are looked up in .dynsym and .symtab (a static executable keeps
 * malloc only in .symtab), plain names first, then the prefixed ones those
 * allocators also export (je_malloc, tc_malloc, mi_malloc). C++ operator
 * new and delete (mangled names, no prefixes) are kept only for a replacement
 * allocator (jemalloc, tcmalloc, mimalloc): elsewhere they are libstdc++'s,
 * which call malloc and free.
 *
 * The naming rules are pure (cp_alloc_func_match, cp_allocator_pick); only
 * cp_allocator__find() reads /proc and ELF files.
 */
#ifndef CP_ALLOCATOR_H
#define CP_ALLOCATOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "cacheperf/alloc.h"
#include "objects/proc_maps.h"

enum cp_allocator_kind {
	CP_ALLOCATOR_LIBC = 0,
	CP_ALLOCATOR_JEMALLOC,
	CP_ALLOCATOR_TCMALLOC,
	CP_ALLOCATOR_MIMALLOC,
	CP_ALLOCATOR_EXEC, /* the executable: statically linked or its own malloc */
	CP_ALLOCATOR_NR,
};

/* One probed function as found in the file. */
struct cp_alloc_fn {
	bool found;
	__u64 vaddr;	/* link-time address */
	__u64 size;	/* symbol size, 0 if unknown */
	__u64 file_off; /* offset in the file: what a uprobe is attached to */
	char name[32];	/* the symbol that matched */
};

struct cp_allocator {
	enum cp_allocator_kind kind;
	char path[PATH_MAX]; /* as /proc/PID/maps names it */
	/* where the file is found again (cp_allocator_open()): target_file.h */
	char proc_root[64]; /* "": /proc */
	pid_t pid;	    /* 0: in the profiler's root (cp_allocator__from_file()) */
	__u64 map_start;    /* one of its mappings, for map_files; 0: none */
	__u64 map_end;
	__u64 inode; /* 0: any regular file at path */
	__u32 dev_major;
	__u32 dev_minor;
	struct cp_alloc_fn fns[CP_FN_NR_PROBED];
};

/* "libc", "jemalloc", ..., "executable". */
const char *cp_allocator_kind_name(enum cp_allocator_kind kind);

/* The function name of @func without prefix ("malloc", "_Znwm"); NULL beyond the probed ones. */
const char *cp_alloc_func_name(enum cp_alloc_func func);

/* A C++ operator new or delete. */
bool cp_alloc_func_is_cxx(enum cp_alloc_func func);

/* free or a delete: takes a pointer, returns nothing (no return probe). */
/* The operator new variants that throw std::bad_alloc rather than return NULL. */
bool cp_alloc_func_throws(enum cp_alloc_func func);

bool cp_alloc_func_frees(enum cp_alloc_func func);

/*
 * Whether symbol @sym names a probed function: fills @func and @rank (0 for
 * the plain name, higher for prefixed ones: lower ranks win). Returns false
 * for anything else.
 */
bool cp_alloc_func_match(const char *sym, enum cp_alloc_func *func, int *rank);

/* The allocator kind a mapped file's path suggests (libc for anything unknown). */
enum cp_allocator_kind cp_allocator_kind_of(const char *path);

/*
 * The allocator @m's file mappings suggest, reading no file, so a replay
 * (which has only the recorded maps) answers alike: a mapped jemalloc,
 * tcmalloc or mimalloc; else libc, with *@glibc set when it is glibc's
 * (libc.so.6); else CP_ALLOCATOR_EXEC (a static executable: not known). A
 * replacement allocator that is mapped but does not interpose malloc is
 * taken for the allocator: cp_allocator__find() reads the symbols to tell.
 * Pure.
 */
enum cp_allocator_kind cp_allocator_of_maps(const struct cp_maps *m, bool *glibc);

/* A mapped ELF file, as cp_allocator_pick() sees it. */
struct cp_alloc_candidate {
	const char *path;
	bool is_exec;	     /* the main executable */
	bool defines_malloc; /* defines malloc (or a prefixed malloc) */
};

/* Index of the file implementing malloc in @c (maps order), or -1 if none does. */
int cp_allocator_pick(const struct cp_alloc_candidate *c, size_t n);

/*
 * Whether @m, a process's maps, show the dynamic loader still mapping its
 * libraries: a loader (ld-*.so*) mapped and one other executable file at
 * most, the executable's. Right after exec every dynamic program is so,
 * and its allocator cannot be told yet. Pure: nothing asks /proc which
 * file the executable is.
 */
bool cp_allocator_loading(const struct cp_maps *m);

/*
 * A file whose allocator is probed for every process already (-a: the
 * system-wide probes' libc), by the device and inode fstat() gave when
 * those probes were placed.
 */
struct cp_alloc_probed {
	dev_t dev;
	ino_t ino;
};

/*
 * Whether the file of device @major:@minor and inode @ino (a maps line's)
 * is @p's; false when @p is NULL or the inode unknown. Pure.
 */
bool cp_alloc_probed_is(const struct cp_alloc_probed *p, __u32 major, __u32 minor, __u64 ino);

/* The dynamic loader's first mapping in @m (ld-*.so*), or NULL. Pure. */
const struct cp_map *cp_allocator_loader(const struct cp_maps *m);

/*
 * Finds @pid's allocator. @proc_root NULL means "/proc". Returns 0, -ENOENT
 * when no mapped file defines malloc, -EAGAIN without opening any file when
 * @early and the loader is still mapping (cp_allocator_loading(): the
 * caller asks again), or another negative errno (the process is gone, no
 * access). A mapped file that is @probed's (NULL: none) is taken to define
 * malloc without being opened: picked, it leaves @out's functions empty,
 * as its probes are placed already.
 */
int cp_allocator__find(const char *proc_root, pid_t pid, bool early,
		       const struct cp_alloc_probed *probed, struct cp_allocator *out);

/*
 * Reads the probed functions of the ELF file at @path (no process needed:
 * -a mode probes the system libc). Fills out->fns and out->kind from @path;
 * out->path becomes @path. Returns 0, -ENOENT when the file
 * defines no malloc, or a negative errno.
 */
int cp_allocator__from_file(const char *path, struct cp_allocator *out);

/*
 * Reads @len bytes of @path at file offset @off into @buf (the code to place
 * a probe in). Returns the bytes read (fewer at the end of the file) or a
 * negative errno.
 */
ssize_t cp_allocator_read_code(const char *path, __u64 off, void *buf, size_t len);

/*
 * Opens @a's file for reading, checked as target_file.h checks (the very
 * file the process maps): what probes are attached to (/proc/self/fd/N)
 * and code is read from. Returns the descriptor or a negative errno.
 */
int cp_allocator_open(const struct cp_allocator *a);

/*
 * A sealed copy of @a's file (objects/target_file.h), safe to map and parse:
 * what its code is analysed from (objects/elf_code.h). Returns the
 * descriptor or a negative errno.
 */
int cp_allocator_open_copy(const struct cp_allocator *a);

#endif /* CP_ALLOCATOR_H */
