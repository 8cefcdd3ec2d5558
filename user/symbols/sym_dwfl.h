/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Dwfls the symbolizer reads. Every file reaches libdw as a sealed,
 * checked copy (elf_guard.h, its CFI through cfi_guard.h), never as a path
 * libdwfl would open: a FIFO, a symlink out of the process's root, a file
 * swapped or truncated since it was mapped, or a decompression bomb is
 * refused and counted. Separate debug info comes only from the build-id
 * directory, then from debuginfod (debuginfod.h), through the same checks.
 */
#ifndef CP_SYM_DWFL_H
#define CP_SYM_DWFL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <elfutils/libdwfl.h>

#include "objects/proc_maps.h"
#include "util/path_map.h"

/*
 * A new Dwfl of a process's modules, from its maps text @text (@len bytes,
 * read under the caller's byte cap), every module's ELF file opened now,
 * not at first lookup: once the process exits, "[vdso]" can no longer be
 * read from its memory, and a file replaced on disk (an upgrade) would give
 * another binary's symbols. @pid's files are the very ones it maps (device
 * and inode from @maps) in its root, those of tenants it maps
 * (cp_sym_map_servable(): deleted or replaced since too) left without ELF
 * (cp_sym_remote(), with the key of the content judged); @pid 0: files a
 * recording names, in ours (a replay). @path_map moves named files (NULL: none). At most
 * CP_SYM_MAX_MODULES modules are opened. Returns 0, -ESRCH (no maps),
 * -EAGAIN (a module's file waits for its parse worker: no Dwfl, the caller
 * asks again later), -ENOMEM, or another -errno (-EIO: a libdwfl error).
 */
int cp_sym_dwfl_process(pid_t pid, const char *text, size_t len, const struct cp_maps *maps,
			const struct cp_path_map *path_map, Dwfl **out);

/*
 * Whether a file libdwfl's callbacks asked for on this thread (a module's,
 * or its separate debug information) waited for its parse worker since
 * the last call (symbols/elf_guard.h: -EAGAIN); clears it. libdwfl keeps
 * such a failure for the module: a Dwfl or a result made meanwhile must
 * not be kept.
 */
bool cp_sym_dwfl_take_waited(void);

/*
 * The ELF file open at @fd (taken over; a negative @fd is returned as it
 * is), named @path, at link-time addresses in a new Dwfl: reported at base
 * 0 (dwfl_report_offline would place an ET_DYN file at a made-up base).
 * libdwfl keeps @fd. Returns 0, -ENOMEM, or -ENOEXEC (readable, not ELF of
 * this machine's byte order: told by its header first, as libdw would
 * inflate a compressed file whole).
 */
int cp_sym_dwfl_file(const char *path, int fd, Dwfl **out, Dwfl_Module **mod);

/*
 * cp_sym_dwfl_file(), the file placed where a process placed it: a shared
 * object's link-time address + @base (an executable where it says).
 */
int cp_sym_dwfl_placed(const char *path, int fd, __u64 base, Dwfl **out, Dwfl_Module **mod);

/*
 * The GNU build-id of @mod's file, if libdwfl has its ELF: its length, the
 * bytes at *@bits (valid while @mod is), 0 when none. Read in bounds
 * (machine/elf_bounds.h), never by dwfl_module_build_id(): libdw's reader
 * copies every note area of a tenant's file lying at an odd offset.
 */
int cp_sym_dwfl_build_id(Dwfl_Module *mod, const unsigned char **bits);

/*
 * The separate debug file of @mod's file, found by its build-id in
 * CP_SYM_BUILD_ID_DIR, else fetched from debuginfod: a sealed, checked
 * copy's descriptor, its name in @name (the caller frees it); -EAGAIN
 * while it waits for its parse worker; -1 when there is none.
 */
int cp_sym_dwfl_debug_of(Dwfl_Module *mod, char **name);

/*
 * Hands @fd, a module's separate debug file, to the next find_debuginfo
 * on this thread, which takes it over (the describe server's, where no
 * path opens: its client sends the file). cp_sym_dwfl_debug_back() takes
 * it back when no find_debuginfo took it (-1 when one did).
 */
void cp_sym_dwfl_give_debug(int fd);
int cp_sym_dwfl_debug_back(void);

/*
 * A sealed, checked copy of the file @path names (a recording, --path-map,
 * the user), symlinks followed if @follow: its descriptor, or -errno.
 */
int cp_sym_open_named(const char *path, bool follow);

#endif /* CP_SYM_DWFL_H */
