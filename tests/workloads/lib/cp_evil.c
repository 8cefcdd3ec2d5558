// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cp_evil: a hostile tenant's shared library for tests/e2e/test_tenant_outputs.sh.
 * The functions that take the page faults have symbol names holding terminal
 * escapes (OSC 0, which retitles the terminal, and CSI 2J, which clears it),
 * and characters that rearrange the text after them (U+2028, a line end to
 * speedscope; U+202E, right-to-left override) before a count of its own at
 * the end (" 999999999", the count a folded-stacks reader would take); the
 * test also copies the library to a file name holding the escapes. Built
 * without debug info, so the report names the functions and the module.
 */
#include <stddef.h>
#include <sys/mman.h>

#define PAGE	4096

/*
 * The assembler takes a quoted symbol name with the raw bytes in it. Static:
 * a call through the PLT cannot name it, the symbol table still does.
 */
__attribute__((noinline)) static void evil_touch(volatile char *p)
	__asm__("\"cp_evil\033]0;x\007\033[2J\"");

static void evil_touch(volatile char *p)
{
	*p = 1;
}

__attribute__((noinline)) static void count_touch(volatile char *p)
	__asm__("\"cp_evil_count\342\200\250\342\200\256 999999999\"");

static void count_touch(volatile char *p)
{
	*p = 2;
}

/* Faults @pages fresh pages, through evil_touch() and count_touch(); 0 or -1. */
int cp_evil_run(int pages)
{
	char *mem = mmap(NULL, (size_t)pages * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return -1;
	/* half the pages through each name */
	for (int i = 0; i < pages; i++)
		(i & 1 ? count_touch : evil_touch)(mem + (size_t)i * PAGE);
	return 0;
}
