/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What libdw knows about one address of one reported module: the part of the
 * symbolizer that reads ELF symbols and DWARF, with no caching and no
 * process handling (symbolizer.c does those).
 */
#ifndef CP_SYM_DWARF_H
#define CP_SYM_DWARF_H

#include <stdbool.h>
#include <elfutils/libdwfl.h>

#include "machine/copy_cache.h"
#include "symbols/symbolizer.h"

/*
 * DIEs a lookup walks down at most, where the project walks DWARF itself
 * (iteratively: libdw's dwarf_getscopes() recurses once per level). Deeper
 * nesting is cut there, counted once per module (CP_TF_DEEP_DWARF); the
 * address is still named by the scopes above the cut, else by its ELF
 * symbol.
 */
#define CP_MAX_SCOPE_DEPTH 256
/* DIEs of one inline chain kept (the subprogram and its inlined subroutines) */
#define CP_MAX_DIE_DEPTH 64
/*
 * What a tenant's DWARF may make one module cost, where the project reads
 * it itself: ranges kept per subprogram and per unit when a unit is
 * indexed (its subprograms may all name one list of millions: 48 bytes a
 * range), range entries read and DIEs walked by one lookup (inlined
 * children each naming such a list). Past a cap the rest is not read,
 * counted with the depth cuts (CP_TF_DEEP_DWARF); the address is named by
 * what was read, else by its ELF symbol.
 */
#define CP_MAX_FUNC_RANGES   256
#define CP_MAX_CU_RANGES     (1u << 18)
#define CP_MAX_LOOKUP_RANGES (1u << 16)
#define CP_MAX_LOOKUP_DIES   (1u << 20)

/*
 * Fills @out for @ip in @mod: module, link-time offset, function (DWARF,
 * else ELF symbol), source line, inline chain, nearest symbol when nothing
 * names ip. Strings point into @mod's Dwfl (or are static): copy them before
 * the Dwfl ends. Never fails; what is unknown stays NULL/0. The first call on
 * a module indexes its symbol table in the module's userdata slot.
 */
void cp_sym_describe(Dwfl_Module *mod, __u64 ip, struct cp_symbol_info *out);

/*
 * The ELF function symbol holding @ip in @mod, as cp_sym_describe() names it
 * without DWARF (NULL: none): a binary search in the module's symbol index,
 * built on first use, where dwfl_module_addrname() walks the whole table.
 */
const char *cp_sym_function(Dwfl_Module *mod, __u64 ip);

/*
 * The DIEs of @cu holding @pc, as dwarf_getscopes() and
 * dwarf_getscopes_die() find them but walked iteratively, at most
 * CP_MAX_SCOPE_DEPTH deep: into @path (CP_MAX_DIE_DEPTH) the innermost
 * subprogram, then each inlined subroutine inside it. Returns how many (0:
 * none holds @pc); sets @cut when the nesting went on past the cap. What
 * cp_sym_describe() uses for a unit whose subprograms it cannot index.
 */
int cp_sym_scope_path(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *path, bool *cut);

/*
 * Marks @mod, a module of a process's own Dwfl given no ELF, as a tenant's
 * file the describe server walks (symbols/unwind.h), whose content @key
 * (machine/copy_cache.h; ino 0: none known) was judged: false when it could
 * not be (out of memory). cp_sym_remote() tells; cp_sym_remote_key() gives
 * the key, for the kept copy of that content (a file deleted since it was
 * mapped has no other way back). The mark is among what cp_sym_release()
 * frees.
 */
bool cp_sym_set_remote(Dwfl_Module *mod, const struct cp_copy_key *key);
bool cp_sym_remote(Dwfl_Module *mod);
bool cp_sym_remote_key(Dwfl_Module *mod, struct cp_copy_key *key);

/* Frees what cp_sym_describe() attached to @dwfl's modules: call before dwfl_end(). */
void cp_sym_release(Dwfl *dwfl);

#endif /* CP_SYM_DWARF_H */
