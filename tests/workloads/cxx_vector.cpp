// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cxx_vector: the C++ allocation most programs make, a std::vector sized in
 * a function, with the system's libstdc++ and glibc: operator new there
 * keeps no frame pointer, so only CFI unwinding reaches make_counts() and
 * main() from malloc (tests/e2e/test_alloc_stacks.sh). The vector's
 * 2 MiB of longs is then written one long per page, so every sample of the
 * run lands in it. The cp:vector-* markers are the call lines.
 *
 * usage: cxx_vector [PAGES]   (default 512); waits for a line on stdin after
 * printing "ready PID".
 */
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

static std::vector<long> counts;
static volatile int made;	/* work after the call: resize() is no tail call */

__attribute__((noinline)) static void make_counts(size_t n)
{
	counts.resize(n);	/* cp:vector-resize */
	made++;
}

int main(int argc, char **argv)
{
	size_t pages = argc > 1 ? (size_t)atol(argv[1]) : 512;
	char line[16];

	make_counts(pages * 4096 / sizeof(long));	/* cp:vector-main */
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (size_t i = 0; i < pages; i++)
		counts[i * 4096 / sizeof(long)] = 1;
	printf("touched %zu pages, made %d\n", pages, made);
	return 0;
}
