// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A tenant's ELF names, compression headers and notes read in place (elf_bounds.h). */
#include <byteswap.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "machine/elf_bounds.h"

/* @elf's bytes, and whether its byte order is not this machine's. */
struct image {
	const unsigned char *p;
	size_t size;
	bool swap, is64;
};

static int image_of(Elf *elf, struct image *im)
{
	const char *id;

	if (elf_kind(elf) != ELF_K_ELF || !(im->p = (const void *)elf_rawfile(elf, &im->size)) ||
	    !(id = elf_getident(elf, NULL)))
		return -EINVAL;
	im->swap = id[EI_DATA] != (BYTE_ORDER == LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB);
	im->is64 = id[EI_CLASS] == ELFCLASS64;
	return 0;
}

/* Whether [@off, @off + @len) lies in @im. */
static bool inside(const struct image *im, __u64 off, __u64 len)
{
	return off <= im->size && len <= im->size - off;
}

static __u32 rd32(const struct image *im, __u64 off)
{
	__u32 v;

	memcpy(&v, im->p + off, sizeof(v));
	return im->swap ? bswap_32(v) : v;
}

static __u64 rd64(const struct image *im, __u64 off)
{
	__u64 v;

	memcpy(&v, im->p + off, sizeof(v));
	return im->swap ? bswap_64(v) : v;
}

/*
 * Section @ndx of @elf (in @im) as libelf's elf_strptr() takes a string
 * table: SHT_STRTAB, not compressed, its bytes in the file. Its bytes, and
 * their count in *@size; NULL when it is none.
 */
static const char *strtab_bytes(Elf *elf, const struct image *im, size_t ndx, size_t *size)
{
	Elf_Scn *scn = elf_getscn(elf, ndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || !inside(im, sh.sh_offset, sh.sh_size))
		return NULL;
	*size = sh.sh_size;
	return (const char *)im->p + sh.sh_offset;
}

int cp_elf_strtab(Elf *elf, size_t ndx, struct cp_elf_strtab *t)
{
	const char *end;
	struct image im;
	size_t size = 0;

	*t = (struct cp_elf_strtab){0};
	if (image_of(elf, &im) || !(t->base = strtab_bytes(elf, &im, ndx, &size)))
		return -EINVAL;
	end = size ? memrchr(t->base, '\0', size) : NULL;
	t->len = end ? (size_t)(end - t->base) + 1 : 0;
	return 0;
}

const char *cp_elf_strtab_name(const struct cp_elf_strtab *t, __u64 off)
{
	return off < t->len ? t->base + off : NULL;
}

/* Whether section @ndx of @elf (in @im) is a string table whose last byte is a NUL. */
static bool strtab_ends(Elf *elf, const struct image *im, size_t ndx)
{
	size_t size = 0;
	const char *p = strtab_bytes(elf, im, ndx, &size);

	return p && size && !p[size - 1];
}

bool cp_elf_strtabs_end(Elf *elf)
{
	Elf_Scn *scn = NULL;
	struct image im;
	size_t shstrndx;

	if (image_of(elf, &im) || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	if (shstrndx && !strtab_ends(elf, &im, shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    !strtab_ends(elf, &im, sh.sh_link))
			return false;
	}
	return true;
}

bool cp_elf_in_place(Elf *elf, const GElf_Shdr *sh)
{
	struct image im;
	__u64 align;

	if (image_of(elf, &im) || im.swap)
		return false;
	switch (sh->sh_type) {
	case SHT_SYMTAB:
	case SHT_DYNSYM:
	case SHT_RELA:
	case SHT_REL:
		align = im.is64 ? 8 : 4;
		break;
	case SHT_NOTE:
		align = 4;
		break;
	default:
		align = 1;
	}
	return !(sh->sh_offset & (align - 1));
}

int cp_elf_chdr_size(Elf *elf, const GElf_Shdr *sh, __u64 *size)
{
	/* ch_type, then (64-bit) ch_reserved, ch_size: the size at 8, of 8 bytes; 32-bit at 4, of 4 */
	struct image im;
	__u64 need;

	if (image_of(elf, &im))
		return -EINVAL;
	need = im.is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	if (sh->sh_size < need || !inside(&im, sh->sh_offset, need))
		return -EINVAL;
	*size = im.is64 ? rd64(&im, sh->sh_offset + 8) : rd32(&im, sh->sh_offset + 4);
	return 0;
}

/* Offsets in a note area are padded to @align (8 in an area aligned so, else 4). */
static __u64 pad(__u64 n, __u64 align)
{
	return (n + align - 1) & ~(align - 1);
}

/* The build-id among the notes at [@off, @off + @len) of @im, as cp_elf_build_id(). */
static int notes_build_id(const struct image *im, __u64 off, __u64 len, __u64 align,
			  const void **bits)
{
	/* each note: namesz, descsz, type, the name, the descriptor; offsets from the area's start */
	for (__u64 at = 0; len - at >= 12;) {
		__u32 namesz = rd32(im, off + at), descsz = rd32(im, off + at + 4);
		__u64 name = at + 12, desc = pad(name + namesz, align);

		if (desc > len || descsz > len - desc)
			return 0;
		if (rd32(im, off + at + 8) == NT_GNU_BUILD_ID && namesz == sizeof("GNU") &&
		    !memcmp(im->p + off + name, "GNU", sizeof("GNU")) && descsz) {
			*bits = im->p + off + desc;
			return (int)(descsz < 1024 ? descsz : 1024);
		}
		at = pad(desc + descsz, align);
		if (at > len)
			return 0;
	}
	return 0;
}

/* One note area's bounds: its place and alignment, cut to what is left of @budget. */
static int area_build_id(const struct image *im, __u64 off, __u64 len, __u64 align, __u64 *budget,
			 const void **bits)
{
	if (!inside(im, off, len))
		return 0;
	if (len > *budget)
		len = *budget;
	*budget -= len;
	return notes_build_id(im, off, len, align == 8 ? 8 : 4, bits);
}

int cp_elf_build_id(Elf *elf, const void **bits)
{
	__u64 budget = CP_ELF_NOTE_BYTES;
	Elf_Scn *scn = NULL;
	size_t areas = 0, phnum;
	struct image im;
	int n = 0;

	if (image_of(elf, &im))
		return 0;
	/* as libdw: the note sections when there are sections, else the note segments */
	if (elf_nextscn(elf, NULL)) {
		while (!n && areas < CP_ELF_NOTE_AREAS && budget && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
			    (sh.sh_flags & SHF_COMPRESSED))
				continue;
			areas++;
			n = area_build_id(&im, sh.sh_offset, sh.sh_size, sh.sh_addralign, &budget,
					  bits);
		}
		return n;
	}
	if (elf_getphdrnum(elf, &phnum))
		return 0;
	for (size_t i = 0; !n && i < phnum && areas < CP_ELF_NOTE_AREAS && budget; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		areas++;
		n = area_build_id(&im, ph.p_offset, ph.p_filesz, ph.p_align, &budget, bits);
	}
	return n;
}
