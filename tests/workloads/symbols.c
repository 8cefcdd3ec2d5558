// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbols: code at known places for the symbolizer tests. Each place is an
 * asm label (a global of this PIE's .symtab, not exported, so the test gets
 * its address from the dynamic linker and the ELF file, never from the
 * symbolizer) on a line carrying a "LINE:" marker that the test looks up in
 * this file to learn the expected line.
 *
 *   cp_sym_plain	in sym_plain(), an ordinary function
 *   cp_sym_inlined	in sym_leaf(), always inlined into sym_middle(), itself
 *			always inlined into sym_outer()
 *
 * Protocol: prints "label NAME ADDR" per label, then "ready PID"; then reads
 * commands from stdin:
 *   load PATH	dlopen()s PATH (tests/workloads/lib/cp_symlib.c, built with
 *		and without debug info) and prints "label NAME ADDR" for the
 *		labels it reports, "symbol NAME ADDR" for its exported
 *		function, then "ok"
 *   exit	runs the labelled code once and exits 0 (as does end of input)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One line, so the label's line is the marker's line. */
#define CP_LABEL(name)	asm volatile(".globl " #name "\n" #name ":\n\tnop")

extern const char cp_sym_plain[], cp_sym_inlined[];
static volatile int sink;

__attribute__((noinline)) static void sym_plain(void)
{
	sink++;
	CP_LABEL(cp_sym_plain); /* LINE:plain */
	sink++;
}

static inline __attribute__((always_inline)) void sym_leaf(int x)
{
	sink += x;
	CP_LABEL(cp_sym_inlined); /* LINE:leaf */
	sink += x;
}

static inline __attribute__((always_inline)) void sym_middle(int x)
{
	sink++;
	sym_leaf(x * 3); /* LINE:call_leaf */
	sink++;
}

__attribute__((noinline)) static void sym_outer(int x)
{
	sink--;
	sym_middle(x + 1); /* LINE:call_middle */
	sink--;
}

/* The library's exported labels() calls this for each of its labels. */
static void emit(const char *name, const void *addr)
{
	printf("label %s %p\n", name, addr);
}

static int load(const char *path)
{
	void (*labels)(void (*)(const char *, const void *));
	void *h = dlopen(path, RTLD_NOW);
	void *fn;

	if (!h) {
		fprintf(stderr, "symbols: %s\n", dlerror());
		return -1;
	}
	*(void **)&labels = dlsym(h, "cp_symlib_labels");
	fn = dlsym(h, "cp_symlib_exported");
	if (!labels || !fn)
		return -1;
	labels(emit);
	printf("symbol cp_symlib_exported %p\n", fn);
	return 0;
}

int main(void)
{
	char line[4096];

	printf("label cp_sym_plain %p\n", (const void *)cp_sym_plain);
	printf("label cp_sym_inlined %p\n", (const void *)cp_sym_inlined);
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "load ", 5)) {
			printf("%s\n", load(line + 5) ? "error" : "ok");
			fflush(stdout);
		} else if (!strcmp(line, "exit")) {
			break;
		}
	}
	sym_plain();
	sym_outer(sink);
	return 0;
}
