/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the profiler reads of a tenant's ELF file through libelf, read
 * where libelf's own readers cost more than the file: libelf's
 * elf_strptr() looks for a NUL from the name to the table's end at every
 * call (a 40 MiB table without one costs 40 MiB of reading per name), and
 * gelf_getchdr(), like the note readers of libdw's
 * dwelf_elf_gnu_build_id(), copies a whole section or segment first when
 * it lies at an offset its type may not (a thousand sections naming the
 * same odd-placed MiB cost a GiB). Here a string table is checked once,
 * and compression headers and notes are read in place from the file's
 * bytes (elf_rawfile()), bounded in count and bytes.
 */
#ifndef CP_MACHINE_ELF_BOUNDS_H
#define CP_MACHINE_ELF_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>
#include <linux/types.h>

/* Note sections (or PT_NOTE segments) looked in for a build-id, and their bytes in all. */
#define CP_ELF_NOTE_AREAS 64
#define CP_ELF_NOTE_BYTES (4u << 20)

/* A string table, its end found once: every name it gives ends inside it. */
struct cp_elf_strtab {
	const char *base;
	size_t len; /* up to and including its last NUL; 0: it gives no name */
};

/*
 * Section @ndx of @elf as a string table, as libelf's elf_strptr() takes
 * one (SHT_STRTAB, not compressed, its bytes in the file): one pass over
 * its bytes. 0, or -EINVAL when it is none; @t then gives no name.
 */
int cp_elf_strtab(Elf *elf, size_t ndx, struct cp_elf_strtab *t);

/* The name at @off of @t, NULL past its last NUL. Pure, O(1). */
const char *cp_elf_strtab_name(const struct cp_elf_strtab *t, __u64 off);

/*
 * Whether the string tables libelf's elf_strptr() is asked of by libdw (the
 * section names', and the names of every symbol table) end in a NUL, as
 * the gABI has them, uncompressed (as every linker leaves them): then
 * elf_strptr() sees at once that each name ends (it looks at the table's
 * last byte first). Looks at one byte per table.
 */
bool cp_elf_strtabs_end(Elf *elf);

/*
 * Whether libelf's elf_getdata() gives the entries of @sh (a section of
 * @elf: symbols, relocations, notes) in place rather than copying the whole
 * section first: the file in this machine's byte order, the section at an
 * offset its entries' alignment allows, as every linker places them.
 */
bool cp_elf_in_place(Elf *elf, const GElf_Shdr *sh);

/*
 * The size a compressed section (SHF_COMPRESSED) of @elf, headed @sh,
 * inflates to, from its compression header read in place: 0, or -EINVAL
 * when the header lies outside the file or the section.
 */
int cp_elf_chdr_size(Elf *elf, const GElf_Shdr *sh, __u64 *size);

/*
 * The GNU build-id of @elf, found where libdw's dwelf_elf_gnu_build_id()
 * looks (its SHT_NOTE sections; with no section headers, its PT_NOTE
 * segments), at most CP_ELF_NOTE_AREAS of them and CP_ELF_NOTE_BYTES in
 * all, read in place: its length with *@bits pointing at it in @elf's
 * image (valid while @elf is), 0 when none was found within the bounds.
 */
int cp_elf_build_id(Elf *elf, const void **bits);

#endif /* CP_MACHINE_ELF_BOUNDS_H */
