/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What libdw knows about one address of one reported module: the part of the
 * symbolizer that reads ELF symbols and DWARF, with no caching and no
 * process handling (symbolizer.c does those).
 */
#ifndef CP_SYM_DWARF_H
#define CP_SYM_DWARF_H

#include <elfutils/libdwfl.h>

#include "symbols/symbolizer.h"

/*
 * Fills @out for @ip in @mod: module, link-time offset, function (DWARF,
 * else ELF symbol), source line, inline chain, nearest symbol when nothing
 * names ip. Strings point into @mod's Dwfl (or are static): copy them before
 * the Dwfl ends. Never fails; what is unknown stays NULL/0. The first call on
 * a module indexes its symbol table in the module's userdata slot.
 */
void cp_sym_describe(Dwfl_Module *mod, __u64 ip, struct cp_symbol_info *out);

/* Frees what cp_sym_describe() attached to @dwfl's modules: call before dwfl_end(). */
void cp_sym_release(Dwfl *dwfl);

#endif /* CP_SYM_DWARF_H */
