/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The code of one ELF file by link-time address, and where its direct
 * jumps and calls go: into its own code, or through a PLT stub to a
 * function named in .rela.plt (defined in the file itself, or another
 * file's). What the exit-point analysis of a throwing operator new reads
 * (decode/exit_points.h, through user/live/alloc_place.c). Read from a
 * sealed copy of the file (objects/target_file.h): a tenant cannot change
 * it meanwhile. Bounded: relocation and symbol counts are capped.
 */
#ifndef CP_ELF_CODE_H
#define CP_ELF_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_ELF_CODE_MAX_RELOCS (1u << 16) /* PLT and GOT relocations kept */

struct cp_elf_code;

/* Reads the ELF file open at @fd (kept open by the caller while in use). NULL: errno. */
struct cp_elf_code *cp_elf_code__new(int fd);
void cp_elf_code__free(struct cp_elf_code *c);

/* Copies up to @len bytes of executable code at @vaddr; the bytes copied, 0: none. */
size_t cp_elf_code_read(const struct cp_elf_code *c, __u64 vaddr, __u8 *buf, size_t len);

/* The file offset of code at @vaddr (what a uprobe is attached to); false: none. */
bool cp_elf_code_file_off(const struct cp_elf_code *c, __u64 vaddr, __u64 *off);

/* Where a direct jump or call to @vaddr goes (cp_elf_code_target()). */
enum cp_elf_target {
	CP_ELF_TGT_CODE = 0, /* this file's code at *to */
	CP_ELF_TGT_EXTERN,   /* a PLT stub of a function another file defines: *name */
	CP_ELF_TGT_UNKNOWN,  /* not code, or a stub not understood */
};

/*
 * @vaddr's target. A PLT stub of a function the file defines itself goes
 * to that definition (the allocator's internals: an interposer of those
 * names is not supported).
 */
enum cp_elf_target cp_elf_code_target(const struct cp_elf_code *c, __u64 vaddr, __u64 *to,
				      const char **name);

#endif /* CP_ELF_CODE_H */
