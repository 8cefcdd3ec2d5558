// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cp_symlib: a shared library for the symbolizer tests, loaded by
 * tests/workloads/symbols with dlopen(). Built three ways: with debug info,
 * with only its symbol table (strip --strip-debug) and stripped (only
 * .dynsym left).
 *
 *   cp_symlib_insn	in cp_symlib_exported(), an exported function
 *   cp_symlib_hidden	in symlib_static(), a file-static function placed
 *			right after cp_symlib_exported(): stripped, nothing
 *			names it, and cp_symlib_exported is its nearest
 *			dynamic symbol. It calls cp_symlib_exported() because
 *			gcc emits callees before their callers, and the
 *			exported function, interposable in a -fPIC library,
 *			is never inlined.
 *
 * The labels are hidden (absent from .dynsym) so that a stripped copy keeps
 * nothing but the exported functions; cp_symlib_labels() hands their
 * addresses to the program.
 */
#define CP_LABEL(name)	\
	asm volatile(".globl " #name "\n.hidden " #name "\n" #name ":\n\tnop")

extern const char cp_symlib_insn[], cp_symlib_hidden[];
static volatile int sink;

int cp_symlib_exported(int x)
{
	sink += x;
	CP_LABEL(cp_symlib_insn); /* LINE:symlib_exported */
	return sink;
}

__attribute__((noinline)) static int symlib_static(int x)
{
	sink -= cp_symlib_exported(x);
	CP_LABEL(cp_symlib_hidden); /* LINE:symlib_static */
	return sink;
}

void cp_symlib_labels(void (*emit)(const char *name, const void *addr))
{
	emit("cp_symlib_insn", cp_symlib_insn);
	emit("cp_symlib_hidden", cp_symlib_hidden);
	if (sink == 12345)
		symlib_static(1);
}
