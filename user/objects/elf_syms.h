/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Data symbols of one ELF file, read once and shared: the variables
 * (STT_OBJECT) and thread-locals (STT_TLS) of .symtab, or of .dynsym when
 * the file is stripped (Debian's libc keeps only .dynsym: exported globals
 * resolve, file-static ones do not), plus the PT_LOAD and PT_TLS headers
 * that place them in a process. A cache keyed by (device, inode, mtime,
 * size) lets every process mapping the same libc share one copy.
 */
#ifndef CP_ELF_SYMS_H
#define CP_ELF_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "machine/copy_cache.h"

#define CP_MAX_ELF_FILES   256	      /* unreferenced files kept cached */
#define CP_MAX_ELF_SYMBOLS (1u << 22) /* a bound on hostile input */
/* The names kept per file, in all: every symbol may name one long string. */
#define CP_MAX_ELF_NAME_BYTES (64u << 20)

/* One PT_LOAD program header. */
struct cp_load_seg {
	__u64 vaddr;
	__u64 offset;
	__u64 filesz;
	__u64 memsz;
	__u32 flags; /* PF_R | PF_W | PF_X */
};

struct cp_symbol {
	__u64 value; /* link-time address; TLS: offset in the module's TLS block */
	__u64 size;
	const char *name;
};

struct cp_elf_syms {
	/* identity (from fstat) */
	__u64 dev;
	__u64 ino;
	__u64 mtime_ns;
	__u64 file_size;

	bool is_elf;	  /* false: not ELF (locale archive, ...); cached all the same */
	bool from_symtab; /* symbols came from .symtab (else .dynsym) */
	__u16 e_type;	  /* ET_EXEC or ET_DYN */
	struct cp_load_seg *segs;
	size_t nr_segs;
	bool has_tls; /* a PT_TLS header */
	__u64 tls_vaddr;
	__u64 tls_memsz;
	__u64 tls_align;
	struct cp_symbol *objs; /* STT_OBJECT, sorted by value, aliases folded */
	size_t nr_objs;
	struct cp_symbol *tls; /* STT_TLS, sorted by offset */
	size_t nr_tls;
	char *strings;

	int refs;	/* cache-private */
	__u64 last_use; /* cache-private */
};

/*
 * Reads the ELF file open at @fd (as cp_tf_open() gave it: checked, under
 * its size cap) by pread of the parts it needs (cp_tf_read_part()) into a
 * private image, never a mapping of the file itself, which its owner could
 * truncate under us (SIGBUS). A file that is not ELF gives 0 and is_elf ==
 * false. Returns 0 or a negative errno (-ENOMEM, -EIO, or the read's).
 */
int cp_elf_syms__read_fd(int fd, struct cp_elf_syms **out);
void cp_elf_syms__free(struct cp_elf_syms *e);

/*
 * The variable whose link-time range holds @vaddr, or NULL. Symbols of size
 * 0 are never returned: they give no range to attribute to. O(log n).
 */
const struct cp_symbol *cp_elf_syms__find(const struct cp_elf_syms *e, __u64 vaddr);

/* The thread-local variable at offset @off of this module's TLS block, or NULL. */
const struct cp_symbol *cp_elf_syms__tls_find(const struct cp_elf_syms *e, __u64 off);

struct cp_elf_cache_stats {
	__u64 files_read; /* ELF files parsed */
	__u64 hits;	  /* lookups served from the cache */
	__u64 not_elf;	  /* files that were not ELF */
	__u64 errors;	  /* files that could not be read */
};

struct cp_elf_cache;

/* A cache keeping up to @max unreferenced files (0: CP_MAX_ELF_FILES). NULL on failure. */
struct cp_elf_cache *cp_elf_cache__new(size_t max);
void cp_elf_cache__free(struct cp_elf_cache *c);

/*
 * The symbols of the file open at @fd, parsed on first sight of its
 * (dev, inode, mtime, size) and shared afterwards. Takes a reference: give it
 * back with cp_elf_cache__put(). Returns 0 or a negative errno. Not
 * thread-safe: one cache per consuming thread.
 */
int cp_elf_cache__get(struct cp_elf_cache *c, int fd, const struct cp_elf_syms **out);
/*
 * cp_elf_cache__get() that reads nothing: the cached symbols of what @fd
 * holds (any descriptor fstat() answers, an O_PATH one from cp_tf_find()
 * too), referenced, or -ENOENT when they are not cached.
 */
int cp_elf_cache__find(struct cp_elf_cache *c, int fd, const struct cp_elf_syms **out);
/* cp_elf_cache__find() of the content @key names (cp_tf_seen()): no descriptor needed. */
int cp_elf_cache__find_key(struct cp_elf_cache *c, const struct cp_copy_key *key,
			   const struct cp_elf_syms **out);
void cp_elf_cache__put(struct cp_elf_cache *c, const struct cp_elf_syms *e);

void cp_elf_cache__stats(const struct cp_elf_cache *c, struct cp_elf_cache_stats *out);

#endif /* CP_ELF_SYMS_H */
