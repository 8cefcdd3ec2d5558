/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CFI of an ELF file a target named, checked (cfi_check.h) before
 * libdw's unwinder can execute it: where libdw reads CFI, the section it
 * reads. dwfl_module_eh_cfi() reads the module's own file: .eh_frame found
 * by name (dwarf_getcfi_elf), with .eh_frame_hdr's search table, else the
 * PT_GNU_EH_FRAME segment. dwfl_module_dwarf_cfi() reads .debug_frame of
 * the file the module's DWARF comes from: its own, or the separate debug
 * file. The unwinder (dwfl_getthread_frames(), symbols/unwind.h) asks both
 * for every frame.
 *
 * A module's own file fails: its CFI is hidden in the Elf handed to libdw
 * (in that Elf's private memory: the sections' type made SHT_NOBITS, the
 * segment's PT_NULL), so its frames are unwound by the frame-pointer walk
 * alone, and its symbols stay. A separate debug file fails: it is not used.
 * Each failure is counted (CP_TF_BAD_CFI).
 */
#ifndef CP_CFI_GUARD_H
#define CP_CFI_GUARD_H

#include <stdbool.h>
#include <libelf.h>

#include "symbols/cfi_check.h"

/*
 * The verdict on @elf's .debug_frame and, with @eh (a module's own file),
 * its .eh_frame with .eh_frame_hdr or PT_GNU_EH_FRAME. A .debug_frame
 * compressed in the file is decompressed in @elf (libdw would).
 */
enum cp_cfi_verdict cp_cfi_guard_check(Elf *elf, bool eh);

/* Hides @elf's CFI from libdw (this handle only). 0, or -EIO. */
int cp_cfi_guard_hide(Elf *elf);

/*
 * Checks @elf and hides its CFI when it fails (counted). Returns @elf, or
 * NULL (@elf ended) when the CFI failed and could not be hidden.
 */
Elf *cp_cfi_guard_elf(Elf *elf);

/* Checks the separate debug file in sealed memfd @mfd (counted). True when it passed. */
bool cp_cfi_guard_fd(int mfd);

#endif /* CP_CFI_GUARD_H */
