// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An ELF file's code and PLT, for the exit-point analysis. */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/elf_bounds.h"
#include "objects/elf_code.h"

#define CP_ELF_CODE_MAX_SEGS 16
#define CP_ELF_CODE_MAX_PLTS 4 /* .plt, .plt.sec, .plt.got */
/* Relocation sections read (.rela.dyn, .rela.plt: a linker's two) */
#define CP_ELF_CODE_MAX_RELA_SCNS 8
/* Relocations' names kept, in all: many relocations may name one long string */
#define CP_ELF_CODE_MAX_NAME_BYTES (4u << 20)

struct reloc {
	__u64 slot; /* the GOT slot a stub jumps through */
	__u64 def;  /* the symbol's definition in this file, 0: none */
	char *name;
};

struct cp_elf_code {
	int fd;
	GElf_Phdr segs[CP_ELF_CODE_MAX_SEGS]; /* executable PT_LOADs */
	size_t nr_segs;
	struct {
		__u64 start, end;
	} plt[CP_ELF_CODE_MAX_PLTS];
	size_t nr_plt;
	struct reloc *relocs;
	size_t nr_relocs, cap_relocs;
	size_t name_bytes; /* of the relocs' names */
};

void cp_elf_code__free(struct cp_elf_code *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_relocs; i++)
		free(c->relocs[i].name);
	free(c->relocs);
	free(c);
}

/* The relocations of @rela that fill GOT slots of functions, named from @symscn. */
static void read_relocs(struct cp_elf_code *c, Elf *elf, Elf_Scn *rela, const GElf_Shdr *rsh)
{
	Elf_Scn *symscn = elf_getscn(elf, rsh->sh_link);
	struct cp_elf_strtab names;
	Elf_Data *rd, *sd;
	GElf_Shdr ssh;

	/* entries libelf would copy whole first (odd-placed) are not read */
	if (!cp_elf_in_place(elf, rsh) || !(rd = elf_getdata(rela, NULL)) || !symscn ||
	    !gelf_getshdr(symscn, &ssh) || !cp_elf_in_place(elf, &ssh) ||
	    !(sd = elf_getdata(symscn, NULL)) || !rsh->sh_entsize ||
	    cp_elf_strtab(elf, ssh.sh_link, &names))
		return;
	for (size_t i = 0; i < rd->d_size / rsh->sh_entsize; i++) {
		struct reloc *r, *tmp;
		const char *name;
		GElf_Rela rel;
		GElf_Sym sym;
		__u32 type;
		size_t len;

		if (c->nr_relocs >= CP_ELF_CODE_MAX_RELOCS || !gelf_getrela(rd, (int)i, &rel))
			return;
		type = GELF_R_TYPE(rel.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !gelf_getsym(sd, (int)GELF_R_SYM(rel.r_info), &sym))
			continue;
		name = cp_elf_strtab_name(&names, sym.st_name);
		if (!name)
			continue;
		len = strnlen(name, CP_ELF_CODE_MAX_NAME_BYTES - c->name_bytes);
		if (len == CP_ELF_CODE_MAX_NAME_BYTES - c->name_bytes)
			return; /* the rest stays unknown: never more proven than read */
		/* doubled: one more at a time copies the array once per relocation */
		if (c->nr_relocs == c->cap_relocs) {
			size_t cap = c->cap_relocs ? 2 * c->cap_relocs : 64;

			tmp = realloc(c->relocs, cap * sizeof(*c->relocs));
			if (!tmp)
				return;
			c->relocs = tmp;
			c->cap_relocs = cap;
		}
		r = &c->relocs[c->nr_relocs];
		r->slot = rel.r_offset;
		r->def = sym.st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym.st_info) == STT_FUNC
				 ? sym.st_value
				 : 0;
		r->name = strndup(name, len);
		if (r->name) {
			c->nr_relocs++;
			c->name_bytes += len + 1;
		}
	}
}

struct cp_elf_code *cp_elf_code__new(int fd)
{
	struct cp_elf_code *c = calloc(1, sizeof(*c));
	size_t nph, shstrndx, nr_rela = 0;
	struct cp_elf_strtab names;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (!c)
		return NULL;
	c->fd = fd;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) ||
	    elf_getshdrstrndx(elf, &shstrndx)) {
		elf_end(elf);
		free(c);
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < nph && c->nr_segs < CP_ELF_CODE_MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			c->segs[c->nr_segs++] = ph;
	}
	cp_elf_strtab(elf, shstrndx, &names);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = cp_elf_strtab_name(&names, sh.sh_name);
		if (sh.sh_type == SHT_RELA && nr_rela++ < CP_ELF_CODE_MAX_RELA_SCNS)
			read_relocs(c, elf, scn, &sh);
		else if (name && !strncmp(name, ".plt", 4) && (sh.sh_flags & SHF_EXECINSTR) &&
			 c->nr_plt < CP_ELF_CODE_MAX_PLTS) {
			c->plt[c->nr_plt].start = sh.sh_addr;
			c->plt[c->nr_plt++].end = sh.sh_addr + sh.sh_size;
		}
	}
	elf_end(elf);
	return c;
}

static const GElf_Phdr *seg_of(const struct cp_elf_code *c, __u64 vaddr)
{
	for (size_t i = 0; i < c->nr_segs; i++)
		if (vaddr >= c->segs[i].p_vaddr && vaddr < c->segs[i].p_vaddr + c->segs[i].p_filesz)
			return &c->segs[i];
	return NULL;
}

bool cp_elf_code_file_off(const struct cp_elf_code *c, __u64 vaddr, __u64 *off)
{
	const GElf_Phdr *ph = seg_of(c, vaddr);

	if (!ph)
		return false;
	*off = vaddr - ph->p_vaddr + ph->p_offset;
	return true;
}

size_t cp_elf_code_read(const struct cp_elf_code *c, __u64 vaddr, __u8 *buf, size_t len)
{
	const GElf_Phdr *ph = seg_of(c, vaddr);
	__u64 left;
	ssize_t got;

	if (!ph)
		return 0;
	left = ph->p_vaddr + ph->p_filesz - vaddr;
	got = pread(c->fd, buf, len < left ? len : left,
		    (off_t)(vaddr - ph->p_vaddr + ph->p_offset));
	return got > 0 ? (size_t)got : 0;
}

/* The GOT slot the PLT stub at @vaddr jumps through: [endbr64] [bnd] jmp *disp(%rip). */
static bool stub_slot(const struct cp_elf_code *c, __u64 vaddr, __u64 *slot)
{
	__u8 b[16];
	size_t n = cp_elf_code_read(c, vaddr, b, sizeof(b)), i = 0;
	__s32 disp;

	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	if (i < n && b[i] == 0xf2)
		i++;
	if (i + 6 > n || b[i] != 0xff || b[i + 1] != 0x25)
		return false;
	memcpy(&disp, &b[i + 2], sizeof(disp));
	*slot = vaddr + i + 6 + (__s64)disp;
	return true;
}

enum cp_elf_target cp_elf_code_target(const struct cp_elf_code *c, __u64 vaddr, __u64 *to,
				      const char **name)
{
	__u64 slot;
	__u8 b;

	*name = NULL;
	for (size_t i = 0; i < c->nr_plt; i++) {
		if (vaddr < c->plt[i].start || vaddr >= c->plt[i].end)
			continue;
		if (!stub_slot(c, vaddr, &slot))
			return CP_ELF_TGT_UNKNOWN;
		for (size_t r = 0; r < c->nr_relocs; r++) {
			if (c->relocs[r].slot != slot)
				continue;
			*name = c->relocs[r].name;
			if (!c->relocs[r].def)
				return CP_ELF_TGT_EXTERN;
			*to = c->relocs[r].def;
			return CP_ELF_TGT_CODE;
		}
		return CP_ELF_TGT_UNKNOWN;
	}
	if (!cp_elf_code_read(c, vaddr, &b, 1))
		return CP_ELF_TGT_UNKNOWN;
	*to = vaddr;
	return CP_ELF_TGT_CODE;
}
