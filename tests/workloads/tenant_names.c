// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tenant_names: a hostile tenant's process for tests/e2e/test_tenant_outputs.sh.
 * The test runs it from a file name holding terminal escapes; it dlopen()s
 * LIB (libcp_evil.so, copied to such a name too) whose faulting function's
 * symbol name holds them as well.
 *
 * usage: tenant_names LIB [NR_PAGES]. Prints "ready PID", waits for a line on
 * stdin, faults NR_PAGES (default 256) pages through the library, prints
 * "done", and exits 0 once stdin ends (so it lives while its records are
 * handled).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int (*run)(int);
	char line[16];
	void *lib;

	if (argc < 2)
		return 2;
	lib = dlopen(argv[1], RTLD_NOW);
	run = lib ? (int (*)(int))dlsym(lib, "cp_evil_run") : NULL;
	if (!run) {
		fprintf(stderr, "tenant_names: %s\n", dlerror());
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (run(argc > 2 ? atoi(argv[2]) : 256))
		return 1;
	printf("done\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
