// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * touch_pages: two threads each write the first byte of their own fresh
 * anonymous pages, one page fault per page, all through one store instruction
 * labelled `cp_touch_insn` (a global symbol, so tests find its address in the
 * ELF symbol table instead of trusting our output).
 *
 * usage: touch_pages [NR_PAGES [malloc|malloc-late]]: the region is
 * NR_THREADS x NR_PAGES pages (default 64 each), mmap'd, or malloc'd with
 * "malloc" (glibc then maps it itself and writes its chunk header into the
 * first page); "malloc-late" mallocs it after the line on stdin, not before
 * "ready" (for allocation probes attached once the process runs).
 *
 * Protocol: prints "ready PID", waits for a line on stdin, then each thread
 * prints "thread TID FIRST_PAGE_ADDR NR_PAGES" after touching, and the
 * process exits 0 (with TOUCH_PAGES_LINGER in the environment, once stdin
 * ends; with TOUCH_PAGES_HOLD=SECONDS, that many seconds after its work, so
 * that a loaded profiler still finds it alive).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_THREADS	2
#define PAGE		4096

static int nr_pages = 64;

__attribute__((noinline, noclone)) static void touch(char *p)
{
	asm volatile(".globl cp_touch_insn\n"
		     "cp_touch_insn:\n\t"
		     "movb $1, (%0)" : : "r"(p) : "memory");
}

static void *worker(void *arg)
{
	char *base = arg;

	for (int i = 0; i < nr_pages; i++)
		touch(base + (size_t)i * PAGE);
	printf("thread %ld %p %d\n", (long)syscall(SYS_gettid), (void *)base, nr_pages);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NR_THREADS];
	bool late = argc > 2 && !strcmp(argv[2], "malloc-late");
	char line[16];
	char *mem = NULL;

	if (argc > 1)
		nr_pages = atoi(argv[1]);
	if (argc > 2 && !strcmp(argv[2], "malloc")) {
		mem = malloc((size_t)NR_THREADS * nr_pages * PAGE);	/* cp:malloc-site */
		if (!mem)
			return 1;
	} else if (!late) {
		mem = mmap(NULL, (size_t)NR_THREADS * nr_pages * PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return 1;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (late && !(mem = malloc((size_t)NR_THREADS * nr_pages * PAGE)))	/* cp:malloc-late */
		return 1;
	for (int t = 0; t < NR_THREADS; t++)
		pthread_create(&th[t], NULL, worker, mem + (size_t)t * nr_pages * PAGE);
	for (int t = 0; t < NR_THREADS; t++)
		pthread_join(th[t], NULL);
	/* TOUCH_PAGES_LINGER: stays until stdin ends, its comm and cgroup readable */
	while (getenv("TOUCH_PAGES_LINGER") && fgets(line, sizeof(line), stdin))
		;
	if (getenv("TOUCH_PAGES_HOLD"))
		sleep((unsigned int)atoi(getenv("TOUCH_PAGES_HOLD")));
	return 0;
}
