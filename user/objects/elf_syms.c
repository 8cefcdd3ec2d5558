// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ELF data symbols (libelf) and the per-file cache that shares them. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>

#include "machine/elf_bounds.h"
#include "machine/elf_hdr.h"
#include "machine/target_file.h"
#include "objects/elf_syms.h"

/* A symbol while reading: binding decides which alias names the address. */
struct raw_sym {
	struct cp_symbol s;
	unsigned char bind;
};

static int underscores(const char *name)
{
	int n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/*
 * By address, larger first at one address, then the name a user would
 * write: glibc's environ, _environ and __environ share one address, and
 * "environ" is the one to print.
 */
static int by_value_then_preference(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	int d;

	if (x->s.value != y->s.value)
		return x->s.value < y->s.value ? -1 : 1;
	if (x->s.size != y->s.size)
		return x->s.size > y->s.size ? -1 : 1;
	d = underscores(x->s.name) - underscores(y->s.name);
	if (d)
		return d;
	d = bind_rank(x->bind) - bind_rank(y->bind);
	if (d)
		return d;
	return strcmp(x->s.name, y->s.name);
}

/* Sorts @raw and copies one symbol per (value, size) to a fresh array. */
static struct cp_symbol *fold_aliases(struct raw_sym *raw, size_t nr, size_t *out_nr)
{
	struct cp_symbol *syms;
	size_t n = 0;

	*out_nr = 0;
	if (!nr)
		return NULL;
	qsort(raw, nr, sizeof(*raw), by_value_then_preference);
	syms = malloc(nr * sizeof(*syms));
	if (!syms)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		if (n && syms[n - 1].value == raw[i].s.value && syms[n - 1].size == raw[i].s.size)
			continue;
		syms[n++] = raw[i].s;
	}
	*out_nr = n;
	return syms;
}

static int read_headers(Elf *elf, struct cp_elf_syms *e)
{
	GElf_Ehdr eh;
	size_t phnum;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &phnum))
		return -EIO;
	e->e_type = eh.e_type;
	e->segs = calloc(phnum ? phnum : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EIO;
		if (ph.p_type == PT_LOAD) {
			struct cp_load_seg *s = &e->segs[e->nr_segs++];

			s->vaddr = ph.p_vaddr;
			s->offset = ph.p_offset;
			s->filesz = ph.p_filesz;
			s->memsz = ph.p_memsz;
			s->flags = ph.p_flags;
		} else if (ph.p_type == PT_TLS) {
			e->has_tls = true;
			e->tls_vaddr = ph.p_vaddr;
			e->tls_memsz = ph.p_memsz;
			e->tls_align = ph.p_align ? ph.p_align : 1;
		}
	}
	return 0;
}

/* .symtab when present (it has the statics too), else .dynsym. */
static Elf_Scn *symbol_section(Elf *elf, GElf_Shdr *shdr, bool *from_symtab)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr sh, dyn_sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_entsize) {
			*shdr = sh;
			*from_symtab = true;
			return scn;
		}
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize) {
			dynsym = scn;
			dyn_sh = sh;
		}
	}
	if (dynsym)
		*shdr = dyn_sh;
	*from_symtab = false;
	return dynsym;
}

/*
 * binutils 2.35+ write a dynamic symbol's version into .symtab names
 * ("stdout@GLIBC_2.2.5" for a copy relocation): users know it as "stdout".
 */
static size_t name_len(const char *name)
{
	size_t n = strcspn(name, "@");

	return n ? n : strlen(name);
}

static int read_symbols(Elf *elf, struct cp_elf_syms *e)
{
	struct raw_sym *objs = NULL, *tls = NULL;
	size_t nr, nr_objs = 0, nr_tls = 0, str_len = 0;
	struct cp_elf_strtab names;
	GElf_Shdr sh;
	Elf_Scn *scn = symbol_section(elf, &sh, &e->from_symtab);
	Elf_Data *data;
	int err = -ENOMEM;

	if (!scn)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EIO;
	/* a table with no NUL gives no name: libelf's elf_strptr() would look for one per symbol */
	cp_elf_strtab(elf, sh.sh_link, &names);
	nr = sh.sh_size / sh.sh_entsize;
	if (nr > CP_MAX_ELF_SYMBOLS)
		nr = CP_MAX_ELF_SYMBOLS;
	objs = malloc(nr * sizeof(*objs) + 1);
	tls = malloc(nr * sizeof(*tls) + 1);
	if (!objs || !tls)
		goto cleanup;
	/* names point into libelf's string table until copied below */
	for (size_t i = 0; i < nr; i++) {
		GElf_Sym sym;
		const char *name;
		struct raw_sym *r;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_OBJECT && type != STT_TLS) || !sym.st_size ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
			continue;
		name = cp_elf_strtab_name(&names, sym.st_name);
		if (!name || !*name)
			continue;
		/* past the cap the rest is not read either: reading is what costs */
		if (str_len + strnlen(name, CP_MAX_ELF_NAME_BYTES) >= CP_MAX_ELF_NAME_BYTES)
			break;
		r = type == STT_TLS ? &tls[nr_tls++] : &objs[nr_objs++];
		r->s.value = sym.st_value;
		r->s.size = sym.st_size;
		r->s.name = name;
		r->bind = GELF_ST_BIND(sym.st_info);
		str_len += name_len(name) + 1;
	}
	e->objs = fold_aliases(objs, nr_objs, &e->nr_objs);
	e->tls = fold_aliases(tls, nr_tls, &e->nr_tls);
	e->strings = malloc(str_len + 1);
	if ((nr_objs && !e->objs) || (nr_tls && !e->tls) || !e->strings)
		goto cleanup;
	str_len = 0;
	for (int pass = 0; pass < 2; pass++) {
		struct cp_symbol *s = pass ? e->tls : e->objs;
		size_t n = pass ? e->nr_tls : e->nr_objs;

		for (size_t i = 0; i < n; i++) {
			size_t len = name_len(s[i].name);

			memcpy(e->strings + str_len, s[i].name, len);
			e->strings[str_len + len] = '\0';
			s[i].name = e->strings + str_len;
			str_len += len + 1;
		}
	}
	err = 0;
cleanup:
	free(objs);
	free(tls);
	return err;
}

/* Where a header table or section lies in a file: its offset and bytes. */
struct part {
	__u64 off, len;
};

/* Reads @p of @fd into @img (@size bytes, the file's) at its offset, cut at @size. */
static int read_part(int fd, char *img, __u64 size, struct part p)
{
	enum cp_tf_refusal why;

	if (p.off >= size)
		return 0;
	if (p.len > size - p.off)
		p.len = size - p.off;
	return cp_tf_read_part(fd, p.off, p.len, img + p.off, &why);
}

/*
 * Reads the symbol table the reader below takes (symbol_section()) and its
 * strings into @img, at most CP_MAX_ELF_SYMBOLS symbols.
 */
static int read_symbol_parts(int fd, char *img, __u64 size, bool is64, struct part shdrs,
			     size_t entsize)
{
	size_t nr = (size_t)(shdrs.len / entsize);
	struct part sym = {0}, str = {0};
	Elf64_Shdr sh, found = {0};
	int err;

	if (shdrs.off >= size || shdrs.len > size - shdrs.off)
		return 0; /* cut short: libelf says what is wrong */
	/* the first .symtab, else the last .dynsym, as symbol_section() takes them */
	for (size_t i = 0; i < nr; i++) {
		cp_elf_shdr(img + shdrs.off + i * entsize, is64, &sh);
		if (!sh.sh_entsize || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		found = sh;
		if (sh.sh_type == SHT_SYMTAB)
			break;
	}
	if (!found.sh_entsize)
		return 0;
	sym = (struct part){found.sh_offset, found.sh_size};
	if (sym.len / found.sh_entsize > CP_MAX_ELF_SYMBOLS)
		sym.len = (__u64)CP_MAX_ELF_SYMBOLS * found.sh_entsize;
	if (found.sh_link < nr) {
		cp_elf_shdr(img + shdrs.off + (size_t)found.sh_link * entsize, is64, &sh);
		if (sh.sh_type == SHT_STRTAB)
			str = (struct part){sh.sh_offset, sh.sh_size};
	}
	err = read_part(fd, img, size, sym);
	return err ? err : read_part(fd, img, size, str);
}

/*
 * A private image of @fd's @size bytes with only what the data symbols
 * need read into it: the ELF header, the program and section headers, the
 * symbol table and its strings. The rest stays untouched zero pages: a
 * copy of the whole file cost clang's processes 105 MiB of libLLVM each,
 * for its .dynsym and .dynstr of a few. Read with pread (a file cut short
 * reads short, where a mapping would SIGBUS), never mapped. 0 with *@img
 * (munmap() @size bytes), 1 when @fd is not ELF, or a negative errno.
 */
static int sparse_image(int fd, __u64 size, char **img)
{
	struct part ph, sh;
	Elf64_Ehdr eh;
	bool is64;
	int err;

	*img = NULL;
	if (size < sizeof(Elf32_Ehdr))
		return 1;
	if (size > (__u64)SIZE_MAX / 2)
		return -EFBIG;
	*img = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (*img == MAP_FAILED) {
		*img = NULL;
		return -ENOMEM;
	}
	err = read_part(fd, *img, size, (struct part){0, sizeof(Elf64_Ehdr)});
	if (err)
		goto fail;
	/* another byte order is not this machine's processes' */
	if (!cp_elf_ehdr(*img, size < sizeof(eh) ? (size_t)size : sizeof(eh), &eh, &is64)) {
		err = 1;
		goto fail;
	}
	ph = (struct part){eh.e_phoff, (__u64)eh.e_phnum * eh.e_phentsize};
	sh = (struct part){eh.e_shoff, (__u64)eh.e_shnum * eh.e_shentsize};
	err = read_part(fd, *img, size, ph);
	if (!err)
		err = read_part(fd, *img, size, sh);
	if (!err && eh.e_shentsize >= cp_elf_entry_size(is64, false))
		err = read_symbol_parts(fd, *img, size, is64, sh, eh.e_shentsize);
	/*
	 * Extended section numbering (e_shnum 0, the count in the null section's
	 * size) reads as no sections: libelf would take the count from whatever
	 * bytes were read at e_shoff (a program header's, in a hostile file) and
	 * keep ~300 bytes of heap for each of millions of sections.
	 */
	if (!err && !eh.e_shnum)
		memset(*img + (is64 ? offsetof(Elf64_Ehdr, e_shoff)
				    : offsetof(Elf32_Ehdr, e_shoff)),
		       0, is64 ? sizeof(Elf64_Off) : sizeof(Elf32_Off));
	if (!err)
		return 0;
fail:
	munmap(*img, (size_t)size);
	*img = NULL;
	return err;
}

int cp_elf_syms__read_fd(int fd, struct cp_elf_syms **out)
{
	struct cp_elf_syms *e = calloc(1, sizeof(*e));
	Elf *elf = NULL;
	char *img = NULL;
	struct stat st;
	int err;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	err = -EIO;
	if (elf_version(EV_CURRENT) == EV_NONE || fstat(fd, &st))
		goto cleanup;
	err = sparse_image(fd, (__u64)st.st_size, &img);
	if (err < 0)
		goto cleanup;
	if (!err)
		elf = elf_memory(img, (size_t)st.st_size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		/* not ELF: remember that, so the file is not tried again */
		err = 0;
		goto done;
	}
	e->is_elf = true;
	err = read_headers(elf, e);
	if (!err)
		err = read_symbols(elf, e);
	if (err)
		goto cleanup;
done:
	if (elf)
		elf_end(elf);
	if (img)
		munmap(img, (size_t)st.st_size);
	*out = e;
	return 0;
cleanup:
	if (elf)
		elf_end(elf);
	if (img)
		munmap(img, (size_t)st.st_size);
	cp_elf_syms__free(e);
	return err;
}

void cp_elf_syms__free(struct cp_elf_syms *e)
{
	if (!e)
		return;
	free(e->segs);
	free(e->objs);
	free(e->tls);
	free(e->strings);
	free(e);
}

/*
 * Nested symbols are rare in C but exist (an asm label inside an array), so
 * a miss on the nearest symbol looks back a few entries before giving up.
 */
#define NESTED_LOOKBACK 4

static const struct cp_symbol *find_in(const struct cp_symbol *s, size_t nr, __u64 v)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].value <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo is the first symbol above v */
	for (size_t k = 0; k < NESTED_LOOKBACK && lo > k; k++) {
		const struct cp_symbol *c = &s[lo - 1 - k];

		if (v - c->value < c->size)
			return c;
	}
	return NULL;
}

const struct cp_symbol *cp_elf_syms__find(const struct cp_elf_syms *e, __u64 vaddr)
{
	return find_in(e->objs, e->nr_objs, vaddr);
}

const struct cp_symbol *cp_elf_syms__tls_find(const struct cp_elf_syms *e, __u64 off)
{
	return find_in(e->tls, e->nr_tls, off);
}

/* ---- cache ---- */

struct cp_elf_cache {
	struct cp_elf_syms **files;
	size_t nr, cap, max;
	__u64 tick;
	struct cp_elf_cache_stats st;
};

struct cp_elf_cache *cp_elf_cache__new(size_t max)
{
	struct cp_elf_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->max = max ? max : CP_MAX_ELF_FILES;
	return c;
}

void cp_elf_cache__free(struct cp_elf_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		cp_elf_syms__free(c->files[i]);
	free(c->files);
	free(c);
}

/* Frees least recently used unreferenced files while more than max are idle. */
static void trim(struct cp_elf_cache *c)
{
	for (;;) {
		size_t idle = 0, lru = c->nr;

		for (size_t i = 0; i < c->nr; i++) {
			if (c->files[i]->refs)
				continue;
			idle++;
			if (lru == c->nr || c->files[i]->last_use < c->files[lru]->last_use)
				lru = i;
		}
		if (idle <= c->max)
			return;
		cp_elf_syms__free(c->files[lru]);
		c->files[lru] = c->files[--c->nr];
	}
}

/* The entry of the content @key names (its device, inode, mtime, size), referenced, or NULL. */
static struct cp_elf_syms *key_lookup(struct cp_elf_cache *c, const struct cp_copy_key *key)
{
	for (size_t i = 0; i < c->nr; i++) {
		struct cp_elf_syms *e = c->files[i];

		if (e->dev == key->dev && e->ino == key->ino && e->mtime_ns == key->mtime_ns &&
		    e->file_size == key->size) {
			e->refs++;
			e->last_use = ++c->tick;
			c->st.hits++;
			return e;
		}
	}
	return NULL;
}

int cp_elf_cache__find_key(struct cp_elf_cache *c, const struct cp_copy_key *key,
			   const struct cp_elf_syms **out)
{
	*out = key->ino ? key_lookup(c, key) : NULL;
	return *out ? 0 : -ENOENT;
}

int cp_elf_cache__find(struct cp_elf_cache *c, int fd, const struct cp_elf_syms **out)
{
	struct cp_copy_key key;
	int err = cp_tf_key(fd, &key);

	*out = NULL;
	return err ? err : cp_elf_cache__find_key(c, &key, out);
}

int cp_elf_cache__get(struct cp_elf_cache *c, int fd, const struct cp_elf_syms **out)
{
	struct cp_copy_key key;
	struct cp_elf_syms *e;
	int err;

	*out = NULL;
	err = cp_tf_key(fd, &key);
	if (err)
		return err;
	*out = key_lookup(c, &key);
	if (*out)
		return 0;
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct cp_elf_syms **f = realloc(c->files, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		c->files = f;
		c->cap = cap;
	}
	err = cp_elf_syms__read_fd(fd, &e);
	if (err) {
		c->st.errors++;
		return err;
	}
	c->st.files_read++;
	if (!e->is_elf)
		c->st.not_elf++;
	e->dev = key.dev;
	e->ino = key.ino;
	e->mtime_ns = key.mtime_ns;
	e->file_size = key.size;
	e->refs = 1;
	e->last_use = ++c->tick;
	c->files[c->nr++] = e;
	*out = e;
	return 0;
}

void cp_elf_cache__put(struct cp_elf_cache *c, const struct cp_elf_syms *e)
{
	for (size_t i = 0; e && i < c->nr; i++) {
		if (c->files[i] == e) {
			c->files[i]->refs--;
			trim(c);
			return;
		}
	}
}

void cp_elf_cache__stats(const struct cp_elf_cache *c, struct cp_elf_cache_stats *out)
{
	*out = c->st;
}
