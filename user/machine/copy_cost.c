// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a sealed copy costs: holes a reader of the ELF touches (copy_cost.h). */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/copy_cost.h"
#include "machine/elf_hdr.h"

static int by_off(const void *a, const void *b)
{
	const struct cp_copy_range *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The bytes of [off, off + len) in no extent of @data. */
static __u64 holes_in(__u64 off, __u64 len, const struct cp_copy_range *data, size_t nd)
{
	__u64 end = off + len, covered = 0;
	size_t lo = 0, hi = nd;

	/* the first extent that ends after off */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (data[mid].off + data[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < nd && data[i].off < end; i++) {
		__u64 a = data[i].off > off ? data[i].off : off;
		__u64 b = data[i].off + data[i].len < end ? data[i].off + data[i].len : end;

		covered += b - a;
	}
	return len - covered;
}

__u64 cp_copy_hole_bytes(struct cp_copy_range *ranges, size_t nr, const struct cp_copy_range *data,
			 size_t nd)
{
	__u64 sum = 0, start = 0, end = 0;
	bool open = false;

	if (nr) /* a file that is not ELF has none: NULL, which qsort() must not be given */
		qsort(ranges, nr, sizeof(*ranges), by_off);
	for (size_t i = 0; i < nr; i++) {
		__u64 a = ranges[i].off, b = a + ranges[i].len;

		if (!ranges[i].len)
			continue;
		if (open && a <= end) {
			if (b > end)
				end = b;
			continue;
		}
		if (open)
			sum += holes_in(start, end - start, data, nd);
		start = a;
		end = b;
		open = true;
	}
	if (open)
		sum += holes_in(start, end - start, data, nd);
	return sum;
}

/* ---- the ELF file's ranges ---- */

struct ranges {
	struct cp_copy_range *v;
	size_t n, cap;
	__u64 size;
};

/* Adds [off, off + len) clipped to the file. */
static int add(struct ranges *r, __u64 off, __u64 len)
{
	if (off >= r->size || !len)
		return 0;
	if (len > r->size - off)
		len = r->size - off;
	if (r->n == r->cap) {
		size_t c = r->cap ? 2 * r->cap : 64;
		struct cp_copy_range *nv = realloc(r->v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = c;
	}
	r->v[r->n++] = (struct cp_copy_range){off, len};
	return 0;
}

static bool read_at(int fd, void *buf, size_t len, __u64 off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Entry @i of the header table at @off (section headers, or with @program program headers). */
static bool entry_at(int fd, bool is64, bool program, __u64 off, __u64 i, void *out)
{
	unsigned char ent[sizeof(Elf64_Shdr) > sizeof(Elf64_Phdr) ? sizeof(Elf64_Shdr)
								  : sizeof(Elf64_Phdr)];
	size_t n = cp_elf_entry_size(is64, program);

	if (!read_at(fd, ent, n, off + i * n))
		return false;
	if (program)
		cp_elf_phdr(ent, is64, out);
	else
		cp_elf_shdr(ent, is64, out);
	return true;
}

/*
 * Fills @r from @fd's headers, the code sections into @code instead when
 * it is not NULL; false when the file must count as read whole.
 */
static bool elf_ranges(int fd, struct ranges *r, __u64 *heap_bytes, struct ranges *code)
{
	unsigned char head[sizeof(Elf64_Ehdr)];
	ssize_t got = pread(fd, head, sizeof(head), 0);
	Elf64_Ehdr eh;
	Elf64_Shdr sh0 = {0};
	bool is64, is_code;
	__u64 shnum, phnum;

	/*
	 * ELF of the other byte order (the caller saw the magic): libelf reads it
	 * all the same, and x86's loader runs it (it looks at e_machine alone);
	 * its heap counts as if the file were section headers and nothing else
	 */
	if (got < 0 || !cp_elf_ehdr(head, (size_t)got, &eh, &is64)) {
		*heap_bytes += r->size / sizeof(Elf32_Shdr) * CP_COPY_SECTION_HEAP_BYTES;
		return false;
	}
	shnum = eh.e_shnum;
	phnum = eh.e_phnum;
	if (eh.e_shoff && entry_at(fd, is64, false, eh.e_shoff, 0, &sh0)) {
		if (!shnum)
			shnum = sh0.sh_size; /* extended numbering */
		if (phnum == PN_XNUM)
			phnum = sh0.sh_info;
	}
	if (!eh.e_shoff || eh.e_shoff >= r->size)
		shnum = 0;
	/* at most what the file holds: libelf refuses a table that runs past it */
	if (shnum > (r->size - eh.e_shoff) / cp_elf_entry_size(is64, false))
		shnum = (r->size - eh.e_shoff) / cp_elf_entry_size(is64, false);
	if (!eh.e_phoff || eh.e_phoff >= r->size)
		phnum = 0;
	if (phnum > (r->size - eh.e_phoff) / cp_elf_entry_size(is64, true))
		phnum = (r->size - eh.e_phoff) / cp_elf_entry_size(is64, true);
	/* the heap whatever else: a million sections cost libelf 5 times their bytes */
	*heap_bytes += shnum * CP_COPY_SECTION_HEAP_BYTES + phnum * CP_COPY_SEGMENT_HEAP_BYTES;
	if (shnum > CP_MAX_COPY_SECTIONS || phnum > CP_MAX_COPY_SECTIONS)
		return false;
	if (add(r, 0, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ||
	    add(r, eh.e_phoff, phnum * cp_elf_entry_size(is64, true)) ||
	    add(r, eh.e_shoff, shnum * cp_elf_entry_size(is64, false)))
		return false;
	for (__u64 i = 1; i < shnum; i++) {
		Elf64_Shdr sh;

		if (!entry_at(fd, is64, false, eh.e_shoff, i, &sh))
			break;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		is_code = sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR);
		if (add(code && is_code ? code : r, sh.sh_offset, sh.sh_size))
			return false;
	}
	for (__u64 i = 0; eh.e_phoff && i < phnum; i++) {
		Elf64_Phdr ph;

		if (!entry_at(fd, is64, true, eh.e_phoff, i, &ph))
			break;
		if (ph.p_type != PT_LOAD && add(r, ph.p_offset, ph.p_filesz))
			return false;
	}
	return true;
}

int cp_copy_elf_ranges(int fd, __u64 size, struct cp_copy_range **out, size_t *nr,
		       __u64 *heap_bytes, struct cp_copy_range **code, size_t *nr_code)
{
	struct ranges r = {.size = size}, c = {.size = size};
	unsigned char magic[SELFMAG];

	*out = NULL;
	*nr = 0;
	if (code) {
		*code = NULL;
		*nr_code = 0;
	}
	if (!read_at(fd, magic, sizeof(magic), 0) || memcmp(magic, ELFMAG, SELFMAG))
		return 0;
	if (!elf_ranges(fd, &r, heap_bytes, code ? &c : NULL)) {
		r.n = 0;
		c.n = 0;
		if (add(&r, 0, size)) {
			free(r.v);
			free(c.v);
			return -ENOMEM;
		}
	}
	*out = r.v;
	*nr = r.n;
	if (code) {
		*code = c.v;
		*nr_code = c.n;
	} else {
		free(c.v);
	}
	return 0;
}

size_t cp_copy_ranges_minus(struct cp_copy_range *ext, size_t n, size_t cap,
			    struct cp_copy_range *cut, size_t nc)
{
	struct cp_copy_range *o = n ? malloc(cap * sizeof(*o)) : NULL;
	size_t m = 0, j = 0;

	if (!o)
		return n; /* all of it copied: more than needed, never less */
	if (nc) /* a file without code sections has none: NULL, which qsort() must not be given */
		qsort(cut, nc, sizeof(*cut), by_off);
	for (size_t i = 0; i < n; i++) {
		__u64 a = ext[i].off, b = a + ext[i].len;

		while (j < nc && cut[j].off + cut[j].len <= a)
			j++;
		for (size_t k = j; k < nc && cut[k].off < b && a < b; k++) {
			__u64 ca = cut[k].off, cb = cut[k].off + cut[k].len;

			if (ca > a) {
				/* a piece before the cut: a slot of its own, if one is left */
				if (m + (n - i) >= cap)
					break;
				o[m++] = (struct cp_copy_range){a, ca - a};
			}
			if (cb > a)
				a = cb < b ? cb : b;
		}
		if (a < b)
			o[m++] = (struct cp_copy_range){a, b - a};
	}
	memcpy(ext, o, m * sizeof(*o));
	free(o);
	return m;
}
