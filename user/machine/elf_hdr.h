/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An ELF file's headers of either class, as the 64-bit structs: the one
 * reader of raw headers for the code that reads a tenant's file in parts,
 * before or without libelf (machine/copy_cost.c sizes a copy from them,
 * objects/elf_syms.c reads only the symbol tables they point at). Pure: the
 * callers read the bytes.
 */
#ifndef CP_MACHINE_ELF_HDR_H
#define CP_MACHINE_ELF_HDR_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The file header in @buf (@len bytes from the file's start) as Elf64_Ehdr
 * in @eh (of a 32-bit one, its type and the header tables' offsets, entry
 * sizes and counts, the other fields 0), its class in @is64; false when it is not an
 * ELF header of either class in this machine's byte order, or @len is short
 * of its class's.
 */
bool cp_elf_ehdr(const void *buf, size_t len, Elf64_Ehdr *eh, bool *is64);

/*
 * The section header entry at @ent, of the class @is64 says, as Elf64_Shdr:
 * of a 32-bit entry, the fields the readers use (type, flags, offset, size,
 * link, info, entsize), the others 0.
 */
void cp_elf_shdr(const void *ent, bool is64, Elf64_Shdr *sh);

/*
 * The program header entry at @ent, of the class @is64 says, as Elf64_Phdr:
 * of a 32-bit entry, type, offset and file size, the others 0.
 */
void cp_elf_phdr(const void *ent, bool is64, Elf64_Phdr *ph);

/* The size of a section (or program, with @program) header entry of the class @is64 says. */
size_t cp_elf_entry_size(bool is64, bool program);

#endif /* CP_MACHINE_ELF_HDR_H */
