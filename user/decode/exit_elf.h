/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The exit-point analysis (decode/exit_points.h) over one ELF file's code
 * (objects/elf_code.h): its bytes by link-time address, and where its
 * direct jumps and calls go. A PLT stub of the file's own function is
 * followed; a function known never to return ends a path, whether the file
 * defines it or another one does; anything else is unknown.
 */
#ifndef CP_EXIT_ELF_H
#define CP_EXIT_ELF_H

#include "decode/exit_points.h"
#include "objects/elf_code.h"

/* The source of @code for cp_exit_points_find(): @code outlives its use. */
struct cp_exit_code cp_exit_code_of_elf(const struct cp_elf_code *code);

#endif /* CP_EXIT_ELF_H */
