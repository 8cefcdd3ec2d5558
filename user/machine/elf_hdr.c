// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ELF headers of either class as the 64-bit structs (elf_hdr.h). */
#include <endian.h>
#include <string.h>

#include "machine/elf_hdr.h"

bool cp_elf_ehdr(const void *buf, size_t len, Elf64_Ehdr *eh, bool *is64)
{
	const unsigned char *id = buf;
	Elf32_Ehdr e32;

	if (len < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) ||
	    id[EI_DATA] != (BYTE_ORDER == LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB))
		return false;
	*is64 = id[EI_CLASS] == ELFCLASS64;
	if (*is64) {
		if (len < sizeof(*eh))
			return false;
		memcpy(eh, buf, sizeof(*eh));
		return true;
	}
	if (id[EI_CLASS] != ELFCLASS32 || len < sizeof(e32))
		return false;
	memcpy(&e32, buf, sizeof(e32));
	/* what the readers use: where the header tables are, and their entries */
	*eh = (Elf64_Ehdr){.e_type = e32.e_type, .e_phoff = e32.e_phoff, .e_shoff = e32.e_shoff};
	eh->e_phentsize = e32.e_phentsize;
	eh->e_phnum = e32.e_phnum;
	eh->e_shentsize = e32.e_shentsize;
	eh->e_shnum = e32.e_shnum;
	return true;
}

void cp_elf_shdr(const void *ent, bool is64, Elf64_Shdr *sh)
{
	Elf32_Shdr s32;

	if (is64) {
		memcpy(sh, ent, sizeof(*sh));
		return;
	}
	memcpy(&s32, ent, sizeof(s32));
	*sh = (Elf64_Shdr){.sh_type = s32.sh_type,
			   .sh_flags = s32.sh_flags,
			   .sh_offset = s32.sh_offset,
			   .sh_size = s32.sh_size,
			   .sh_link = s32.sh_link,
			   .sh_info = s32.sh_info,
			   .sh_entsize = s32.sh_entsize};
}

void cp_elf_phdr(const void *ent, bool is64, Elf64_Phdr *ph)
{
	Elf32_Phdr p32;

	if (is64) {
		memcpy(ph, ent, sizeof(*ph));
		return;
	}
	memcpy(&p32, ent, sizeof(p32));
	*ph = (Elf64_Phdr){
		.p_type = p32.p_type, .p_offset = p32.p_offset, .p_filesz = p32.p_filesz};
}

size_t cp_elf_entry_size(bool is64, bool program)
{
	if (program)
		return is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	return is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
}
